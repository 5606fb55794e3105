package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MemoryFamily names the conversation memory tools.
const MemoryFamily = "memory"

// MemoryResourceTemplate is the URI template of a conversation resource.
const MemoryResourceTemplate = "memory://conversation/{id}"

var memoryLimits = Limits{Timeout: 15 * time.Second, MemoryMB: 256}

// memoryTool completes t as a memory tool: public, with the family's limits,
// reading the table or, if it mutates, writing it, and served on the
// compatibility endpoint under its function's path (the seed's method names
// the function folder too).
func memoryTool(t *Tool) *Tool {
	t.Family, t.Visibility, t.Limits, t.Compat = MemoryFamily, Public, memoryLimits, t.Function
	t.Table = Read
	if t.Mutates {
		t.Table = ReadWrite
	}
	return t
}

func memoryTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	example := json.RawMessage(`{"conversation_id":"chat_demo"}`)
	return []*Tool{
		memoryTool(&Tool{
			Name: "memory_get_or_create", Function: "memory/get_or_create", Title: "Open or start a conversation",
			Description: "Returns the conversation with the given id, creating it if it does not exist; without an id, starts a new conversation and returns its generated id. Call it before adding messages.",
			Mutates:     true, Annotations: idempotent, Example: example,
		}),
		memoryTool(&Tool{
			Name: "memory_add_message", Function: "memory/add_message", Title: "Add a message",
			Description: "Appends a message (role user, assistant or system) to a conversation. Messages are numbered in order without gaps. Once more than 10 messages lie outside the rolling summary, all but the 6 newest are folded into it automatically; the full history is always kept.",
			Mutates:     true, Annotations: additive,
			Example: json.RawMessage(`{"conversation_id":"chat_demo","role":"user","content":"How often should I replace my toothbrush?"}`),
		}),
		memoryTool(&Tool{
			Name: "memory_get_context", Function: "memory/get_context", Title: "Get the context window",
			Description: "Returns what a model needs to continue the conversation: the rolling summary of older messages and every message after what it covers (at least the 6 newest), oldest first. max_messages (default 20) keeps only the newest; omitted counts the messages after the summary it left out, so 0 means nothing is missing.",
			Annotations: readOnly, Example: json.RawMessage(`{"conversation_id":"chat_demo","max_messages":6}`),
		}),
		memoryTool(&Tool{
			Name: "memory_get_all_messages", Function: "memory/get_all_messages", Title: "Get the full history",
			Description: "Returns every message of a conversation, oldest first, including those already folded into the summary. Pages of up to 1000; pass next_cursor back as cursor to continue.",
			Annotations: readOnly, Example: example,
		}),
		memoryTool(&Tool{
			Name: "memory_get_old_messages", Function: "memory/get_old_messages", Title: "Get messages awaiting summary",
			Description: "Returns the messages older than the 6 most recent that the rolling summary does not cover yet: what a client would summarise. Empty once they have been compressed.",
			Annotations: readOnly, Example: example,
		}),
		memoryTool(&Tool{
			Name: "memory_get_or_create_summary", Function: "memory/get_or_create_summary", Title: "Get or create the summary",
			Description: "Returns the conversation's rolling summary. If there is none yet, summarises old_messages (at most 200, of 900,000 characters in all; or, if omitted, the conversation's own messages awaiting summary) with the configured summariser, stores the result and returns it; the result names the provider and model that wrote it.",
			Mutates:     true, Annotations: idempotent, Example: json.RawMessage(`{"conversation_id":"chat_demo","language":"en"}`),
		}),
		memoryTool(&Tool{
			Name: "memory_set_summary", Function: "memory/set_summary", Title: "Add to the summary",
			Description: "Adds text to the conversation's rolling summary as a new paragraph (mode append, the default), so the summary accumulates answer by answer; text that already begins with the current summary is taken as the whole new summary. Mode replace overwrites it.",
			Mutates:     true, Annotations: additive,
			Example: json.RawMessage(`{"conversation_id":"chat_demo","summary":"The user asked how often to replace a toothbrush; every three months."}`),
		}),
		memoryTool(&Tool{
			Name: "memory_get_summary", Function: "memory/get_summary", Title: "Get the summary",
			Description: "Returns the conversation's rolling summary, empty if there is none yet.",
			Annotations: readOnly, Example: example,
		}),
		memoryTool(&Tool{
			Name: "memory_clear", Function: "memory/clear", Title: "Clear a conversation",
			Description: "Deletes every message and the summary of a conversation but keeps the conversation itself; messages added while it runs are kept.",
			Mutates:     true, Deletes: true, Annotations: destructive, Example: example,
		}),
		memoryTool(&Tool{
			Name: "memory_delete", Function: "memory/delete", Title: "Delete a conversation",
			Description: "Deletes a conversation with all its messages and its summary. If interrupted, calling it again finishes the job. Unless confirm is true, a client that can show the user a form (MCP 2026-07-28 and later) is first asked to confirm.",
			Mutates:     true, Deletes: true, Annotations: destructive, Example: example,
		}),
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
