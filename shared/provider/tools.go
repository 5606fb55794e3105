package provider

import (
	"context"
	"encoding/json"
)

// The roles of a [Message] besides [RoleUser] and [RoleAssistant]: a tool's
// result, answering the assistant's [ToolCall] of the same id.
const RoleTool = "tool"

// ToolSpec describes a tool a model may call: its name, what it does, and
// the JSON Schema of its arguments (an object schema).
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// ToolCall is a model's request to call a tool. ID pairs it with the
// [Message] carrying its result; Arguments is a JSON object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one message of a tool-calling conversation: a user's, an
// assistant's (text, tool calls or both) or a tool's result (ToolCallID
// names the call it answers; IsError marks a failed call).
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
	// Name is the tool a tool message answers for (some APIs want it).
	Name    string
	IsError bool
}

// ChatRequest asks a model for the next assistant message of a conversation
// in which it may call Tools.
type ChatRequest struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the output. If zero, 1024.
	MaxTokens int
	// Temperature, if set, is the sampling temperature.
	Temperature *float64
}

// Stop reasons of a [ChatReply], as the backends normalise them.
const (
	StopEnd      = "end_turn"
	StopToolUse  = "tool_use"
	StopMaxToken = "max_tokens"
)

// ChatReply is the model's next assistant message: its text, the tools it
// asks to call (empty when it answered), and why it stopped.
type ChatReply struct {
	Text         string
	ToolCalls    []ToolCall
	StopReason   string
	Provider     string
	Model        string
	InputTokens  int
	OutputTokens int
}

// ToolCaller is a generator that can also hold a conversation with tools
// (Bedrock Converse's toolConfig, OpenAI's tools). It is an optional
// capability of a [Generator], detected with a type assertion; the offline
// generator has none, and the chat orchestration then chooses tools by code.
type ToolCaller interface {
	Chat(ctx context.Context, req ChatRequest) (ChatReply, error)
}

// DefaultChatMaxTokens is a chat reply's bound when a request sets none.
const DefaultChatMaxTokens = 1024

// ToolCallerOf returns g as a [ToolCaller], looking through the wrapper
// [WithGenerators] makes, or false when g cannot call tools (the offline
// generator).
func ToolCallerOf(g Generator) (ToolCaller, bool) {
	if w, ok := g.(*generators); ok {
		g = w.Generator
	}
	tc, ok := g.(ToolCaller)
	return tc, ok
}

// Bounds of a streamed reply, whatever the backend: a stream that exceeds
// them fails rather than growing without limit.
const (
	// MaxStreamBytes bounds a streamed reply's text and tool arguments together.
	MaxStreamBytes = 1 << 20
	// MaxStreamEventBytes bounds one event of a stream (an SSE line, an
	// event-stream message's payload).
	MaxStreamEventBytes = 256 << 10
)

// Streamer is a [ToolCaller] that can also stream a reply's text as the
// model writes it (Bedrock's ConverseStream, OpenAI's stream: true). It is
// an optional capability, detected with a type assertion ([StreamerOf]);
// the offline generator has none.
type Streamer interface {
	// ChatStream is [ToolCaller.Chat], passing each piece of the reply's
	// text to delta as it arrives, in order; the reply returned holds the
	// whole text, the tool calls assembled from their fragments, and the
	// stream's token usage. An error mid-stream is returned as such, after
	// the pieces already passed.
	ChatStream(ctx context.Context, req ChatRequest, delta func(text string)) (ChatReply, error)
}

// StreamerOf returns g as a [Streamer], looking through the wrapper
// [WithGenerators] makes, or false when g cannot stream.
func StreamerOf(g Generator) (Streamer, bool) {
	if w, ok := g.(*generators); ok {
		g = w.Generator
	}
	s, ok := g.(Streamer)
	return s, ok
}
