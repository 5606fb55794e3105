package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

var _ provider.ToolCaller = (*Generator)(nil)

// Chat implements [provider.ToolCaller] through Converse with a toolConfig:
// each tool a toolSpec whose inputSchema.json is its schema, the assistant's
// calls toolUse blocks, their results toolResult blocks in the next user
// message (consecutive tool results share one, as Converse requires; a failed
// call's has status "error"). Stop reason "tool_use" is [provider.StopToolUse],
// "max_tokens" [provider.StopMaxToken], anything else [provider.StopEnd].
func (g *Generator) Chat(ctx context.Context, req provider.ChatRequest) (provider.ChatReply, error) {
	c, err := g.conversation(req)
	if err != nil {
		return provider.ChatReply{}, err
	}
	resp, err := g.rt.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(g.model), System: c.system, Messages: c.messages,
		InferenceConfig: c.inference, ToolConfig: c.tools})
	if err != nil {
		return provider.ChatReply{}, classify(err, "converse", g.model)
	}
	var text strings.Builder
	var calls []provider.ToolCall
	if msg, ok := resp.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, c := range msg.Value.Content {
			switch c := c.(type) {
			case *types.ContentBlockMemberText:
				text.WriteString(c.Value)
			case *types.ContentBlockMemberToolUse:
				var v any
				if c.Value.Input != nil {
					if err := c.Value.Input.UnmarshalSmithyDocument(&v); err != nil {
						return provider.ChatReply{}, fmt.Errorf("bedrock: converse %s: toolUse %s: input: %w", g.model, aws.ToString(c.Value.Name), err)
					}
				}
				if v == nil {
					v = map[string]any{}
				}
				args, err := json.Marshal(numbers(v, func(n smithydoc.Number) any { return json.Number(n) }))
				if err != nil {
					return provider.ChatReply{}, fmt.Errorf("bedrock: converse %s: toolUse %s: input: %w", g.model, aws.ToString(c.Value.Name), err)
				}
				calls = append(calls, provider.ToolCall{ID: aws.ToString(c.Value.ToolUseId), Name: aws.ToString(c.Value.Name), Arguments: args})
			}
		}
	}
	return g.reply("converse", text.String(), calls, resp.StopReason, resp.Usage)
}

// conversation is the part of a Converse request that Converse and
// ConverseStream share.
type conversation struct {
	system    []types.SystemContentBlock
	messages  []types.Message
	inference *types.InferenceConfiguration
	tools     *types.ToolConfiguration
}

// conversation is req as Converse takes it.
func (g *Generator) conversation(req provider.ChatRequest) (conversation, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = provider.DefaultChatMaxTokens
	}
	c := conversation{inference: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(min(maxTokens, math.MaxInt32)))}}
	if req.Temperature != nil {
		c.inference.Temperature = aws.Float32(float32(*req.Temperature))
	}
	if req.System != "" {
		c.system = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	msgs, err := converseMessages(req.Messages)
	if err != nil {
		return conversation{}, fmt.Errorf("bedrock: converse %s: %w", g.model, err)
	}
	c.messages = msgs
	if len(req.Tools) > 0 {
		c.tools = &types.ToolConfiguration{}
		for _, t := range req.Tools {
			schema, err := jsonDocument(t.InputSchema)
			if err != nil {
				return conversation{}, fmt.Errorf("bedrock: converse %s: tool %s: input schema: %w", g.model, t.Name, err)
			}
			spec := types.ToolSpecification{Name: aws.String(t.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}
			if t.Description != "" {
				spec.Description = aws.String(t.Description)
			}
			c.tools.Tools = append(c.tools.Tools, &types.ToolMemberToolSpec{Value: spec})
		}
	}
	return c, nil
}

// reply is the [provider.ChatReply] of a message's text and tool calls,
// whether read whole (op "converse") or assembled from a stream.
func (g *Generator) reply(op, text string, calls []provider.ToolCall, stop types.StopReason, usage *types.TokenUsage) (provider.ChatReply, error) {
	out := provider.ChatReply{Provider: Name, Model: g.model, Text: strings.TrimSpace(text), ToolCalls: calls}
	if usage != nil {
		out.InputTokens = int(aws.ToInt32(usage.InputTokens))
		out.OutputTokens = int(aws.ToInt32(usage.OutputTokens))
	}
	switch {
	case stop == types.StopReasonToolUse || len(out.ToolCalls) > 0:
		out.StopReason = provider.StopToolUse
	case stop == types.StopReasonMaxTokens:
		out.StopReason = provider.StopMaxToken
	default:
		out.StopReason = provider.StopEnd
	}
	if out.Text == "" && len(out.ToolCalls) == 0 {
		return provider.ChatReply{}, fmt.Errorf("bedrock: %s %s: the model returned neither text nor tool calls (stop reason %q)", op, g.model, stop)
	}
	return out, nil
}

// converseMessages turns a conversation into Converse's messages: tool
// results become toolResult blocks of a user message, merged with the user
// messages next to them, since Converse wants roles to alternate.
func converseMessages(ms []provider.Message) ([]types.Message, error) {
	var out []types.Message
	add := func(role types.ConversationRole, blocks ...types.ContentBlock) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, types.Message{Role: role, Content: blocks})
	}
	for i, m := range ms {
		switch m.Role {
		case provider.RoleUser:
			if strings.TrimSpace(m.Content) != "" {
				add(types.ConversationRoleUser, &types.ContentBlockMemberText{Value: m.Content})
			}
		case provider.RoleAssistant:
			var blocks []types.ContentBlock
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: m.Content})
			}
			for _, c := range m.ToolCalls {
				input, err := jsonDocument(c.Arguments)
				if err != nil {
					return nil, fmt.Errorf("messages[%d]: tool call %s: %w", i, c.Name, err)
				}
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(c.ID), Name: aws.String(c.Name), Input: input}})
			}
			if len(blocks) > 0 {
				add(types.ConversationRoleAssistant, blocks...)
			}
		case provider.RoleTool:
			status := types.ToolResultStatusSuccess
			if m.IsError {
				status = types.ToolResultStatusError
			}
			add(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String(m.ToolCallID), Status: status,
				Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: m.Content}}}})
		default:
			return nil, fmt.Errorf("messages[%d]: role %q is not user, assistant or tool", i, m.Role)
		}
	}
	return out, nil
}

// jsonDocument decodes JSON text (an empty one is an empty object) into a
// document the SDK serialises back as the same JSON, numbers included.
func jsonDocument(raw json.RawMessage) (document.Interface, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return document.NewLazyDocument(numbers(v, func(n json.Number) any { return smithydoc.Number(n) })), nil
}

// numbers returns v with every number of type N replaced by conv's value:
// json.Number to the SDK's document number on the way in, and back on the
// way out, so that a number passes both ways as its digits (a large integer
// or 0.1 is never rounded through a float64).
func numbers[N ~string](v any, conv func(N) any) any {
	switch v := v.(type) {
	case N:
		return conv(v)
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e, conv)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e, conv)
		}
	}
	return v
}
