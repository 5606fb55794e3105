package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

var _ provider.ToolCaller = (*Generator)(nil)

// The wire form of a tool-calling conversation: function tools, the
// assistant's tool_calls (arguments as a JSON string), role "tool" messages
// carrying tool_call_id.
type (
	wireTool struct {
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	wireToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wireChatRequest struct {
		Model       string        `json:"model"`
		Messages    []wireMessage `json:"messages"`
		Tools       []wireTool    `json:"tools,omitempty"`
		MaxTokens   int           `json:"max_tokens"`
		Temperature *float64      `json:"temperature,omitempty"`
		// Stream and StreamOptions ask for the reply as server-sent
		// events, the last of them carrying the usage.
		Stream        bool           `json:"stream,omitempty"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireChatResponse struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      wireMessage `json:"message"`
			FinishReason string      `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
)

// Chat implements [provider.ToolCaller] through POST /v1/chat/completions
// with function tools. Tool results go back as role "tool" messages with the
// call's tool_call_id; a failed call's result is sent as its text (the API
// has no error flag). The stop reason is normalised: "tool_calls" is
// [provider.StopToolUse], "length" [provider.StopMaxToken], else [provider.StopEnd].
func (g *Generator) Chat(ctx context.Context, req provider.ChatRequest) (provider.ChatReply, error) {
	var resp wireChatResponse
	if err := g.c.post(ctx, "/v1/chat/completions", g.wireRequest(req), &resp); err != nil {
		return provider.ChatReply{}, err
	}
	if len(resp.Choices) == 0 {
		return provider.ChatReply{}, fmt.Errorf("openai: /v1/chat/completions: model %s returned no choices", g.model)
	}
	choice := resp.Choices[0]
	text := ""
	if choice.Message.Content != nil {
		text = *choice.Message.Content
	}
	return g.reply(resp.Model, text, choice.Message.ToolCalls, choice.FinishReason, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
}

// wireRequest is req as the API takes it.
func (g *Generator) wireRequest(req provider.ChatRequest) wireChatRequest {
	in := wireChatRequest{Model: g.model, MaxTokens: req.MaxTokens, Temperature: req.Temperature}
	if in.MaxTokens <= 0 {
		in.MaxTokens = provider.DefaultChatMaxTokens
	}
	if req.System != "" {
		in.Messages = append(in.Messages, wireMessage{Role: "system", Content: &req.System})
	}
	for _, m := range req.Messages {
		w := wireMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		content := m.Content
		if m.Role != provider.RoleAssistant || content != "" || len(m.ToolCalls) == 0 {
			w.Content = &content
		}
		for _, c := range m.ToolCalls {
			wc := wireToolCall{ID: c.ID, Type: "function"}
			wc.Function.Name = c.Name
			wc.Function.Arguments = string(argumentsOrEmpty(c.Arguments))
			w.ToolCalls = append(w.ToolCalls, wc)
		}
		in.Messages = append(in.Messages, w)
	}
	for _, t := range req.Tools {
		in.Tools = append(in.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	return in
}

// reply is the [provider.ChatReply] of a choice's text, tool calls and
// finish reason, whether read whole or assembled from a stream.
func (g *Generator) reply(model, text string, calls []wireToolCall, finish string, in, out int) (provider.ChatReply, error) {
	r := provider.ChatReply{Provider: Name, Model: cmp.Or(model, g.model), InputTokens: in, OutputTokens: out, Text: strings.TrimSpace(text)}
	for i, c := range calls {
		args := json.RawMessage(c.Function.Arguments)
		if strings.TrimSpace(c.Function.Arguments) == "" {
			args = json.RawMessage(`{}`)
		}
		if !json.Valid(args) {
			return provider.ChatReply{}, fmt.Errorf("openai: /v1/chat/completions: model %s: tool_calls[%d] (%s): arguments are not JSON", g.model, i, c.Function.Name)
		}
		if c.Function.Name == "" {
			return provider.ChatReply{}, fmt.Errorf("openai: /v1/chat/completions: model %s: tool_calls[%d] names no function", g.model, i)
		}
		r.ToolCalls = append(r.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
	}
	switch {
	case len(r.ToolCalls) > 0 || finish == "tool_calls":
		r.StopReason = provider.StopToolUse
	case finish == "length":
		r.StopReason = provider.StopMaxToken
	default:
		r.StopReason = provider.StopEnd
	}
	if r.Text == "" && len(r.ToolCalls) == 0 {
		return provider.ChatReply{}, fmt.Errorf("openai: /v1/chat/completions: model %s returned neither text nor tool calls (finish_reason %q)", g.model, finish)
	}
	return r, nil
}

// argumentsOrEmpty is a call's arguments, or an empty object when it has none.
func argumentsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(a))) == 0 {
		return json.RawMessage(`{}`)
	}
	return a
}
