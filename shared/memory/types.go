package memory

import (
	"encoding/json"
	"time"
)

// Message is one stored message of a conversation.
type Message struct {
	Seq       int64     `json:"seq" jsonschema:"position of the message in the conversation, starting at 1"`
	Role      string    `json:"role" jsonschema:"user, assistant, system, or tool (a tool's result, recorded by the chat tool)"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// The chat orchestration's fields (AddTurns); empty for other messages.
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty" jsonschema:"the tools an assistant message called: [{id, name, arguments}]"`
	ToolCallID string          `json:"tool_call_id,omitempty" jsonschema:"the call a tool message answers"`
	Name       string          `json:"name,omitempty" jsonschema:"the tool a tool message comes from"`
	Internal   bool            `json:"internal,omitempty" jsonschema:"true for the chat's own records: documents its vector search found for one turn, and connector calls waiting for approval (name connector_approval); shown here, never sent to a model"`
}

// Turn is a message the chat orchestration records ([Service.AddTurns]):
// a message with the tool fields of [Message].
type Turn struct {
	Role       string
	Content    string
	ToolCalls  json.RawMessage
	ToolCallID string
	Name       string
	Internal   bool
}

// MessageInput is a message a caller passes in.
type MessageInput struct {
	Role    string `json:"role" jsonschema:"user, assistant or system"`
	Content string `json:"content"`
}

// GetOrCreateInput is the input of memory_get_or_create.
type GetOrCreateInput struct {
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"the conversation to open; omit it to start a new one with a generated id"`
}

// GetOrCreateOutput is the output of memory_get_or_create.
type GetOrCreateOutput struct {
	ConversationID string `json:"conversation_id"`
	Created        bool   `json:"created" jsonschema:"true if this call created the conversation"`
}

// ConversationInput names a conversation; it is the whole input of several tools.
type ConversationInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
}

// DeleteInput is the input of memory_delete.
type DeleteInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	Confirm        bool   `json:"confirm,omitempty" jsonschema:"true if the user has already agreed to the deletion; otherwise a client that can show the user a form (MCP 2026-07-28 and later) is asked to confirm first"`
}

// AddMessageInput is the input of memory_add_message.
type AddMessageInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	Role           string `json:"role" jsonschema:"who wrote the message: user, assistant or system"`
	Content        string `json:"content" jsonschema:"the message text"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional, unique per message you mean to add (a UUID, say): a retry with the same key and message returns the first call's result without adding it again, for 24 hours; the same key with another message is refused"`
}

// AddMessageOutput is the output of memory_add_message.
type AddMessageOutput struct {
	Status         string `json:"status" jsonschema:"always success"`
	ConversationID string `json:"conversation_id"`
	Seq            int64  `json:"seq" jsonschema:"the position the message was stored at"`
	Compressed     bool   `json:"compressed" jsonschema:"true if this call folded older messages into the summary"`
	Replayed       bool   `json:"replayed,omitempty" jsonschema:"true if an earlier call with this idempotency_key stored the message, at seq; nothing was added"`
}

// GetContextInput is the input of memory_get_context.
type GetContextInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	MaxMessages    int    `json:"max_messages,omitempty" jsonschema:"the most messages to return, newest kept (default 20)"`
}

// GetContextOutput is the output of memory_get_context.
type GetContextOutput struct {
	ConversationID string    `json:"conversation_id"`
	Summary        string    `json:"summary" jsonschema:"the rolling summary of older messages; empty if none yet"`
	Through        int64     `json:"summarized_through" jsonschema:"the last message seq the summary covers (0: none)"`
	Messages       []Message `json:"messages" jsonschema:"every message after what the summary covers, and at least the 6 newest, oldest first; max_messages keeps the newest"`
	Omitted        int64     `json:"omitted" jsonschema:"how many messages after the summary max_messages left out (the oldest of them); 0 when the context is complete"`
}

// GetAllMessagesInput is the input of memory_get_all_messages.
type GetAllMessagesInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit          int    `json:"limit,omitempty" jsonschema:"page size (default and maximum 1000)"`
}

// MessagesOutput is the output of memory_get_all_messages.
type MessagesOutput struct {
	ConversationID string    `json:"conversation_id"`
	Messages       []Message `json:"messages" jsonschema:"messages, oldest first"`
	NextCursor     string    `json:"next_cursor,omitempty" jsonschema:"set when more messages remain; pass it back as cursor"`
}

// OldMessagesOutput is the output of memory_get_old_messages.
type OldMessagesOutput struct {
	ConversationID string    `json:"conversation_id"`
	Messages       []Message `json:"messages" jsonschema:"messages older than the recent window that the summary does not cover yet, oldest first"`
	TotalCount     int64     `json:"total_count" jsonschema:"how many messages the conversation holds in all"`
}

// GetOrCreateSummaryInput is the input of memory_get_or_create_summary.
type GetOrCreateSummaryInput struct {
	ConversationID string         `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	OldMessages    []MessageInput `json:"old_messages,omitempty" jsonschema:"messages to summarise if no summary exists yet; omit to use the conversation's own old messages"`
	Language       string         `json:"language,omitempty" jsonschema:"language of the summary: en or vi (default en)"`
}

// SummaryOutput is the output of memory_get_or_create_summary and memory_get_summary.
type SummaryOutput struct {
	ConversationID string `json:"conversation_id"`
	Summary        string `json:"summary" jsonschema:"the rolling summary; empty if there is none yet"`
	Created        bool   `json:"created" jsonschema:"true if this call created the summary"`
	Through        int64  `json:"summarized_through" jsonschema:"the last message seq the summary covers"`
	Provider       string `json:"provider,omitempty" jsonschema:"who wrote the latest part of the summary: offline, a model provider, or client"`
	Model          string `json:"model,omitempty"`
}

// SetSummaryInput is the input of memory_set_summary.
type SetSummaryInput struct {
	ConversationID string `json:"conversation_id" jsonschema:"the conversation, as returned by memory_get_or_create"`
	Summary        string `json:"summary" jsonschema:"summary text to add to the conversation's rolling summary"`
	Mode           string `json:"mode,omitempty" jsonschema:"append (default): add to the rolling summary, or take the text as the whole summary when it already begins with it; replace: overwrite"`
	Compress       *bool  `json:"compress,omitempty" jsonschema:"accepted for compatibility and ignored: compression is automatic"`
}

// SetSummaryOutput is the output of memory_set_summary.
type SetSummaryOutput struct {
	Status         string `json:"status" jsonschema:"always success"`
	ConversationID string `json:"conversation_id"`
	Summary        string `json:"summary" jsonschema:"the rolling summary as stored now"`
}

// StatusOutput is the output of memory_clear and memory_delete.
type StatusOutput struct {
	Status         string `json:"status" jsonschema:"cleared or deleted"`
	ConversationID string `json:"conversation_id"`
	Removed        int    `json:"removed_messages" jsonschema:"how many messages were removed"`
}

// Conversation is the whole of a conversation, as its resource shows it.
type Conversation struct {
	ConversationID string    `json:"conversation_id"`
	CreatedAt      time.Time `json:"created_at"`
	Summary        string    `json:"summary"`
	Through        int64     `json:"summarized_through"`
	Messages       []Message `json:"messages"`
	TotalCount     int64     `json:"total_count"`
	Truncated      bool      `json:"truncated,omitempty"`
}

// ConversationRef names a conversation in a listing.
type ConversationRef struct {
	ConversationID string
	CreatedAt      time.Time
}
