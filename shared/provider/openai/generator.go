package openai

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

var _ provider.Generator = (*Generator)(nil)

// Generator performs [provider.Task]s through POST {base}/v1/chat/completions,
// with the prompts [provider.Render] builds. It is safe for concurrent use.
type Generator struct {
	c     *Client
	model string
}

// NewGenerator returns a generator of model through c. It does no I/O.
func NewGenerator(c *Client, model string) (*Generator, error) {
	if c == nil {
		return nil, fmt.Errorf("openai: generator needs a client")
	}
	if strings.TrimSpace(model) == "" {
		return nil, fmt.Errorf("openai: generator needs a model name")
	}
	return &Generator{c: c, model: model}, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model     string        `json:"model"`
	Messages  []chatMessage `json:"messages"`
	MaxTokens int           `json:"max_tokens"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Generate implements [provider.Generator]. The result names the model the
// server reports having used (OpenAI reports the dated version, such as
// gpt-4o-mini-2024-07-18), or the configured one if it reports none; token
// counts are the server's usage figures. A grade reply that is neither yes nor
// no, and an empty reply, are errors.
func (g *Generator) Generate(ctx context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	p, err := provider.Render(req)
	if err != nil {
		return provider.Generation{}, fmt.Errorf("openai: %w", err)
	}
	in := chatRequest{Model: g.model, MaxTokens: req.MaxTokens}
	if in.MaxTokens <= 0 {
		in.MaxTokens = provider.DefaultMaxTokens(req.Task)
	}
	in.Messages = append(in.Messages, chatMessage{Role: "system", Content: p.System})
	for _, m := range p.Messages {
		in.Messages = append(in.Messages, chatMessage{Role: m.Role, Content: m.Content})
	}
	var resp chatResponse
	if err := g.c.post(ctx, "/v1/chat/completions", in, &resp); err != nil {
		return provider.Generation{}, err
	}
	if len(resp.Choices) == 0 {
		return provider.Generation{}, fmt.Errorf("openai: /v1/chat/completions: model %s returned no choices", g.model)
	}
	choice := resp.Choices[0]
	if choice.Message.Content == nil || strings.TrimSpace(*choice.Message.Content) == "" {
		return provider.Generation{}, fmt.Errorf("openai: /v1/chat/completions: model %s returned no text (finish_reason %q)", g.model, choice.FinishReason)
	}
	text, err := provider.Finish(req.Task, *choice.Message.Content)
	if err != nil {
		return provider.Generation{}, fmt.Errorf("openai: model %s: %w", g.model, err)
	}
	model := resp.Model
	if model == "" {
		model = g.model
	}
	return provider.Generation{Text: text, Provider: Name, Model: model,
		InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens}, nil
}
