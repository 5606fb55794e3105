package bedrock

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// DefaultGenerationModel is the model [NewGenerator] is usually given: Amazon
// Nova Micro, the cheapest text model on Bedrock that takes a system prompt
// through Converse and is available on demand without an inference profile
// in us-east-1; in other regions name an inference profile such as
// "eu.amazon.nova-micro-v1:0".
const DefaultGenerationModel = "amazon.nova-micro-v1:0"

var _ provider.Generator = (*Generator)(nil)

// Generator performs [provider.Task]s with a chat model through the Converse
// API, with the prompts [provider.Render] builds. It is safe for concurrent use.
type Generator struct {
	rt    Runtime
	model string
}

// NewGenerator returns a generator of model (a model id, or an inference
// profile's id or ARN) calling rt. It does no I/O.
func NewGenerator(rt Runtime, model string) (*Generator, error) {
	if rt == nil {
		return nil, fmt.Errorf("bedrock: generator needs a Bedrock Runtime client")
	}
	if strings.TrimSpace(model) == "" {
		return nil, fmt.Errorf("bedrock: generator needs a model id")
	}
	return &Generator{rt: rt, model: model}, nil
}

// Generate implements [provider.Generator]. The result names the configured
// model (Converse does not echo it); token counts are Bedrock's usage figures.
// A grade reply that is neither yes nor no, and a reply without text, are errors.
func (g *Generator) Generate(ctx context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	p, err := provider.Render(req)
	if err != nil {
		return provider.Generation{}, fmt.Errorf("bedrock: %w", err)
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = provider.DefaultMaxTokens(req.Task)
	}
	in := &bedrockruntime.ConverseInput{
		ModelId:         aws.String(g.model),
		System:          []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: p.System}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(min(maxTokens, math.MaxInt32)))},
	}
	for _, m := range p.Messages {
		role := types.ConversationRoleUser
		if m.Role == provider.RoleAssistant {
			role = types.ConversationRoleAssistant
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: m.Content}}})
	}
	resp, err := g.rt.Converse(ctx, in)
	if err != nil {
		return provider.Generation{}, classify(err, "converse", g.model)
	}
	var b strings.Builder
	if msg, ok := resp.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, c := range msg.Value.Content {
			if t, ok := c.(*types.ContentBlockMemberText); ok {
				b.WriteString(t.Value)
			}
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return provider.Generation{}, fmt.Errorf("bedrock: converse %s: the model returned no text (stop reason %q)", g.model, resp.StopReason)
	}
	text, err := provider.Finish(req.Task, b.String())
	if err != nil {
		return provider.Generation{}, fmt.Errorf("bedrock: converse %s: %w", g.model, err)
	}
	out := provider.Generation{Text: text, Provider: Name, Model: g.model}
	if u := resp.Usage; u != nil {
		out.InputTokens = int(aws.ToInt32(u.InputTokens))
		out.OutputTokens = int(aws.ToInt32(u.OutputTokens))
	}
	return out, nil
}
