package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// ChatCompletionsPath is the OpenAI-compatible chat endpoint: a turn of the
// chat tool, answered as OpenAI's chat.completion, or streamed as its
// chat.completion.chunk events. The gateway invokes the chat function as it
// invokes any tool; it links none of its code.
const ChatCompletionsPath = "/v1/chat/completions"

// DefaultChatModel is the model name an OpenAI client may send for the
// configured generator (as may an empty one).
const DefaultChatModel = "switchboard"

// chatCompletionRequest is the part of OpenAI's request the chat serves,
// plus thread_id (also read from metadata.thread_id): the memory
// conversation the turn belongs to.
type chatCompletionRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ThreadID            string          `json:"thread_id"`
	Metadata            struct {
		ThreadID string `json:"thread_id"`
	} `json:"metadata"`
}

// chatArgs are the chat tool's arguments (package chat's Input).
type chatArgs struct {
	ThreadID    string        `json:"thread_id,omitempty"`
	Message     string        `json:"message"`
	History     []chatMessage `json:"history,omitempty"`
	Tool        string        `json:"tool,omitempty"`
	Model       string        `json:"model,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatOutput is the part of the chat tool's output the endpoint relays;
// the metadata passes as the function wrote it.
type chatOutput struct {
	ThreadID     string          `json:"thread_id"`
	Answer       string          `json:"answer"`
	FinishReason string          `json:"finish_reason"`
	Model        string          `json:"model"`
	VSMetadata   json.RawMessage `json:"vs_metadata,omitempty"`
	TokenUsage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"token_usage"`
}

// openAIError answers an OpenAI-style error.
func openAIError(w http.ResponseWriter, status int, kind, param, msg string) {
	e := map[string]any{"message": msg, "type": kind, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// serveChatCompletions answers POST /v1/chat/completions with a turn of
// the chat tool: the last message is the user's, the earlier ones the
// history unless thread_id names a thread (whose history is in memory).
func (g *Gateway) serveChatCompletions(w http.ResponseWriter, r *http.Request) {
	t, _ := g.opts.Catalog.Tool(catalog.ChatTool)
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req chatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid request: "+jsonProblem("the request body", err))
		return
	}
	args, param, err := chatArgsOf(req)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", param, err.Error())
		return
	}
	extra := extraFrom(r)
	caller, err := g.caller(extra)
	if err != nil {
		openAIError(w, http.StatusUnauthorized, "authentication_error", "", err.Error())
		return
	}
	if !allows(extra, t) {
		openAIError(w, http.StatusForbidden, "permission_error", "", "this access token's scopes do not allow calling "+t.Name)
		return
	}
	key := keyProfile(extra.TokenInfo)
	if !key.Allows(t.Name, t.Group) {
		openAIError(w, http.StatusForbidden, "permission_error", "", notEnabled(key, t.Name, t.Group, ""))
		return
	}
	raw, _ := json.Marshal(args)
	env := &invoke.Request{Method: invoke.MethodCallTool, Tool: t.Name, Arguments: raw, Caller: caller, RequestID: newID(), TraceID: traceID(r.Header),
		Profile: heldTo(t, key)}
	c := &completion{id: "chatcmpl-" + env.RequestID, created: time.Now().Unix(), model: req.Model, includeUsage: req.StreamOptions.IncludeUsage}
	ctx, streamed := r.Context(), false
	if req.Stream {
		c.startStream(w)
		// The chat streams its answer as progress messages, each a piece
		// of it, which go out as deltas as they arrive.
		ctx = relaying(ctx, func(n invoke.Notification) {
			if n.Progress != nil && n.Message != "" {
				streamed = true
				c.chunk(w, c.delta(map[string]any{"content": n.Message}, nil, ""))
			}
		})
	}
	out, status, kind, msg := g.runChat(ctx, t, env)
	switch {
	case msg != "" && req.Stream:
		c.chunk(w, map[string]any{"error": map[string]any{"message": msg, "type": kind}})
		c.done(w)
	case msg != "":
		openAIError(w, status, kind, "", msg)
	case req.Stream:
		c.stream(w, out, streamed)
	default:
		writeJSON(w, http.StatusOK, c.whole(out))
	}
}

// chatArgsOf maps an OpenAI request onto the chat tool's arguments, or
// says which parameter is wrong.
func chatArgsOf(req chatCompletionRequest) (chatArgs, string, error) {
	a := chatArgs{ThreadID: req.ThreadID, Temperature: req.Temperature, MaxTokens: req.MaxTokens}
	if a.ThreadID == "" {
		a.ThreadID = req.Metadata.ThreadID
	}
	if req.MaxCompletionTokens > 0 {
		a.MaxTokens = req.MaxCompletionTokens
	}
	if req.Model != DefaultChatModel {
		a.Model = req.Model
	}
	if len(req.Messages) == 0 {
		return a, "messages", errors.New("messages must hold at least the user's message")
	}
	for i, m := range req.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			return a, fmt.Sprintf("messages[%d].content", i), err
		}
		last := i == len(req.Messages)-1
		switch {
		case last && m.Role != "user":
			return a, fmt.Sprintf("messages[%d].role", i), errors.New("the last message must be the user's")
		case last:
			a.Message = text
		case a.ThreadID == "" && (m.Role == "user" || m.Role == "assistant") && text != "":
			a.History = append(a.History, chatMessage{Role: m.Role, Content: text})
		}
	}
	if len(req.ToolChoice) > 0 && req.ToolChoice[0] == '{' {
		var tc struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(req.ToolChoice, &tc); err != nil || tc.Function.Name == "" {
			return a, "tool_choice", errors.New(`tool_choice must be "auto", "none" or {"type":"function","function":{"name":...}}`)
		}
		a.Tool = tc.Function.Name
	}
	return a, "", nil
}

// messageText is a message's content: a string, or the text parts of an array of parts.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content parts of type %q are not supported; send text", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// runChat invokes the chat function and reads its output, or returns the
// HTTP status, OpenAI error type and message of its failure.
func (g *Gateway) runChat(ctx context.Context, t *catalog.Tool, env *invoke.Request) (chatOutput, int, string, string) {
	resp, err := g.invoke(ctx, t.Function, env)
	if err != nil {
		g.log.ErrorContext(ctx, "chat failed", "request_id", env.RequestID, "error", err)
		return chatOutput{}, http.StatusBadGateway, "api_error", functionFailure(t, env, err).Content[0].(*mcp.TextContent).Text
	}
	if e := resp.Error; e != nil {
		switch fault.Kind(e.Kind) {
		case fault.KindInvalid, fault.KindNotFound:
			return chatOutput{}, http.StatusBadRequest, "invalid_request_error", e.Message
		case fault.KindRateLimited:
			return chatOutput{}, http.StatusTooManyRequests, "rate_limit_error", e.Message
		}
		return chatOutput{}, http.StatusInternalServerError, "api_error", e.Message
	}
	var res struct {
		StructuredContent chatOutput `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return chatOutput{}, http.StatusBadGateway, "api_error", "the chat function's answer could not be read"
	}
	return res.StructuredContent, 0, "", ""
}

// completion writes one turn as OpenAI's chat.completion, or as its
// chat.completion.chunk events: the role at once (so a client sees the
// stream open while the turn runs), then the answer, the metadata, the
// finish reason, the usage when asked, and [DONE]. The answer arrives in the
// pieces the chat function streams it in (its progress messages), or in one
// piece from an invoker that cannot stream.
type completion struct {
	id           string
	created      int64
	model        string
	includeUsage bool
}

func (c *completion) modelOf(out chatOutput) string {
	if out.Model != "" {
		return out.Model
	}
	if c.model != "" {
		return c.model
	}
	return DefaultChatModel
}

// finishReason is OpenAI's finish_reason for the chat's: length for a cut
// answer, stop otherwise (an error or the recursion limit is explained in
// the answer itself).
func finishReason(out chatOutput) string {
	if out.FinishReason == "length" {
		return "length"
	}
	return "stop"
}

func usageOf(out chatOutput) map[string]int {
	u := out.TokenUsage
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
}

// whole is the chat.completion object, with thread_id, vs_metadata and
// token_usage beside OpenAI's fields.
func (c *completion) whole(out chatOutput) map[string]any {
	m := map[string]any{
		"id": c.id, "object": "chat.completion", "created": c.created, "model": c.modelOf(out),
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": out.Answer},
			"finish_reason": finishReason(out), "logprobs": nil}},
		"usage": usageOf(out), "token_usage": usageOf(out),
	}
	if out.ThreadID != "" {
		m["thread_id"] = out.ThreadID
	}
	if len(out.VSMetadata) > 0 {
		m["vs_metadata"] = out.VSMetadata
	}
	return m
}

func (c *completion) startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	c.chunk(w, c.delta(map[string]any{"role": "assistant", "content": ""}, nil, ""))
}

// delta is a chunk with one choice.
func (c *completion) delta(d map[string]any, finish any, model string) map[string]any {
	return map[string]any{"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": cmp.Or(model, c.model, DefaultChatModel),
		"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish, "logprobs": nil}}}
}

// stream ends a streamed completion: the answer in one piece unless it was
// streamed already, then the metadata, the usage and [DONE].
func (c *completion) stream(w http.ResponseWriter, out chatOutput, streamed bool) {
	model := c.modelOf(out)
	if !streamed {
		c.chunk(w, c.delta(map[string]any{"content": out.Answer}, nil, model))
	}
	last := c.delta(map[string]any{}, finishReason(out), model)
	last["token_usage"] = usageOf(out)
	if out.ThreadID != "" {
		last["thread_id"] = out.ThreadID
	}
	if len(out.VSMetadata) > 0 {
		last["vs_metadata"] = out.VSMetadata
	}
	c.chunk(w, last)
	if c.includeUsage {
		c.chunk(w, map[string]any{"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": model, "choices": []any{}, "usage": usageOf(out)})
	}
	c.done(w)
}

// chunk writes one SSE event and flushes it.
func (c *completion) chunk(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *completion) done(w http.ResponseWriter) {
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
