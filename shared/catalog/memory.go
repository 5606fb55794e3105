package catalog

import (
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/memory"
)

// MemoryFamily names the conversation memory tools.
const MemoryFamily = "memory"

// MemoryResourceTemplate is the URI template of a conversation resource.
const MemoryResourceTemplate = "memory://conversation/{id}"

var memoryLimits = Limits{Timeout: 15 * time.Second, MemoryMB: 256}

func conversationID(p map[string]*jsonschema.Schema) {
	s := p["conversation_id"]
	s.Pattern, s.MaxLength = memory.IDPattern, ptr(128)
}

func messageFields(s *jsonschema.Schema) {
	s.Properties["role"].Enum = []any{"user", "assistant", "system"}
	s.Properties["content"].MinLength, s.Properties["content"].MaxLength = ptr(1), ptr(memory.MaxContentChars)
}

func memoryTool(name, compat, title, description string, in, out func() *jsonschema.Schema, mutates bool, ann *mcp.ToolAnnotations, example string) *Tool {
	table := Read
	if mutates {
		table = ReadWrite
	}
	return &Tool{
		Name: name, Title: title, Description: description,
		Family: MemoryFamily, Function: compat, // the seed method names the function folder too
		Input: in, Output: out, Annotations: ann,
		Visibility: Public, Mutates: mutates, Limits: memoryLimits, Table: table,
		Example: json.RawMessage(example), Compat: compat,
	}
}

func memoryTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	conv := schemaFor[memory.ConversationInput](conversationID)
	summaryOut := schemaFor[memory.SummaryOutput](nil)
	statusOut := schemaFor[memory.StatusOutput](nil)
	const example = `{"conversation_id":"chat_demo"}`
	return []*Tool{
		memoryTool("memory_get_or_create", "memory/get_or_create", "Open or start a conversation",
			"Returns the conversation with the given id, creating it if it does not exist; without an id, starts a new conversation and returns its generated id. Call it before adding messages.",
			schemaFor[memory.GetOrCreateInput](conversationID), schemaFor[memory.GetOrCreateOutput](nil), true, idempotent, example),
		memoryTool("memory_add_message", "memory/add_message", "Add a message",
			"Appends a message (role user, assistant or system) to a conversation. Messages are numbered in order without gaps. Once more than 10 messages lie outside the rolling summary, all but the 6 newest are folded into it automatically; the full history is always kept.",
			schemaFor[memory.AddMessageInput](func(p map[string]*jsonschema.Schema) {
				conversationID(p)
				messageFields(&jsonschema.Schema{Properties: p})
			}), schemaFor[memory.AddMessageOutput](nil), true, additive,
			`{"conversation_id":"chat_demo","role":"user","content":"How often should I replace my toothbrush?"}`),
		memoryTool("memory_get_context", "memory/get_context", "Get the context window",
			"Returns what a model needs to continue the conversation: the rolling summary of older messages and every message after what it covers (at least the 6 newest), oldest first. max_messages (default 20) keeps only the newest; omitted counts the messages after the summary it left out, so 0 means nothing is missing.",
			schemaFor[memory.GetContextInput](func(p map[string]*jsonschema.Schema) {
				conversationID(p)
				p["max_messages"].Minimum, p["max_messages"].Maximum = ptr(1.0), ptr(float64(memory.MaxContextMessages))
			}), schemaFor[memory.GetContextOutput](nil), false, readOnly,
			`{"conversation_id":"chat_demo","max_messages":6}`),
		memoryTool("memory_get_all_messages", "memory/get_all_messages", "Get the full history",
			"Returns every message of a conversation, oldest first, including those already folded into the summary. Pages of up to 1000; pass next_cursor back as cursor to continue.",
			schemaFor[memory.GetAllMessagesInput](func(p map[string]*jsonschema.Schema) {
				conversationID(p)
				p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(memory.MaxPageMessages))
			}), schemaFor[memory.MessagesOutput](nil), false, readOnly, example),
		memoryTool("memory_get_old_messages", "memory/get_old_messages", "Get messages awaiting summary",
			"Returns the messages older than the 6 most recent that the rolling summary does not cover yet: what a client would summarise. Empty once they have been compressed.",
			conv, schemaFor[memory.OldMessagesOutput](nil), false, readOnly, example),
		memoryTool("memory_get_or_create_summary", "memory/get_or_create_summary", "Get or create the summary",
			"Returns the conversation's rolling summary. If there is none yet, summarises old_messages (at most 200, of 900,000 characters in all; or, if omitted, the conversation's own messages awaiting summary) with the configured summariser, stores the result and returns it; the result names the provider and model that wrote it.",
			schemaFor[memory.GetOrCreateSummaryInput](func(p map[string]*jsonschema.Schema) {
				conversationID(p)
				p["language"].Enum = []any{"en", "vi"}
				p["old_messages"].MaxItems = ptr(memory.MaxOldMessages)
				messageFields(p["old_messages"].Items)
			}), summaryOut, true, idempotent, `{"conversation_id":"chat_demo","language":"en"}`),
		memoryTool("memory_set_summary", "memory/set_summary", "Add to the summary",
			"Adds text to the conversation's rolling summary as a new paragraph (mode append, the default), so the summary accumulates answer by answer; text that already begins with the current summary is taken as the whole new summary. Mode replace overwrites it.",
			schemaFor[memory.SetSummaryInput](func(p map[string]*jsonschema.Schema) {
				conversationID(p)
				p["summary"].MaxLength = ptr(memory.MaxSummaryChars)
				p["mode"].Enum = []any{"append", "replace"}
			}), schemaFor[memory.SetSummaryOutput](nil), true, additive,
			`{"conversation_id":"chat_demo","summary":"The user asked how often to replace a toothbrush; every three months."}`),
		memoryTool("memory_get_summary", "memory/get_summary", "Get the summary",
			"Returns the conversation's rolling summary, empty if there is none yet.",
			conv, summaryOut, false, readOnly, example),
		memoryTool("memory_clear", "memory/clear", "Clear a conversation",
			"Deletes every message and the summary of a conversation but keeps the conversation itself; messages added while it runs are kept.",
			conv, statusOut, true, destructive, example),
		memoryTool("memory_delete", "memory/delete", "Delete a conversation",
			"Deletes a conversation with all its messages and its summary. If interrupted, calling it again finishes the job. Unless confirm is true, a client that can show the user a form (MCP 2026-07-28 and later) is first asked to confirm.",
			schemaFor[memory.DeleteInput](conversationID), statusOut, true, destructive, example),
	}
}

func memoryResources() []*Resource {
	return []*Resource{{
		URITemplate: MemoryResourceTemplate,
		Name:        "conversation",
		Title:       "Conversation",
		Description: "A conversation's messages and rolling summary, as JSON.",
		MIMEType:    "application/json",
		Family:      MemoryFamily,
		Function:    "memory/resource",
		Lists:       true,
		Limits:      memoryLimits,
		Table:       Read,
		Example:     "memory://conversation/chat_demo",
	}}
}
