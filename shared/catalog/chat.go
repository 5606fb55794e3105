package catalog

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ChatFamily names the chat orchestration: the tool chat, which the
// gateway's POST /v1/chat/completions calls too.
const ChatFamily = "chat"

// ChatTool is the chat orchestration's tool.
const ChatTool = "chat"

// chatLimits: a turn may run the pipeline (24 s at most), call tools and the
// model a few times; two minutes bounds it within the streaming front door's
// wait (the longest function's timeout plus 30 s).
var chatLimits = Limits{Timeout: 2 * time.Minute, MemoryMB: 512}

func chatTools() []*Tool {
	return []*Tool{{
		Name:         ChatTool,
		Title:        "Chat with your documents and tools",
		Description:  "Answers one message of a conversation, as a chat application would: the thread's history comes from memory (thread_id, a memory conversation id) and the turn is recorded there. The model may search your vector stores (documents graded relevant are given to it for this turn only, and recorded in the thread as an internal tool message that memory_get_all_messages shows and later turns leave out), call your connectors' tools (their approval policies apply: a call that needs approval links its page, and once you approve there the thread's next turn makes it, once), search the web, and call Switchboard's read-only tools. Without a configured model the route is chosen by code (a tool you name, web search for questions about current events, else your documents) and the answer says it was assembled without a model. Returns the answer, the route taken, the tools called, vs_metadata (stores searched, the query used, documents given to the model) and token_usage. The same turn is served OpenAI-style at POST /v1/chat/completions.",
		Family:       ChatFamily,
		Function:     "chat/chat",
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
		Visibility:   Public,
		Mutates:      true,
		Limits:       chatLimits,
		Table:        ReadWrite,
		Pipeline:     true,
		Generates:    true,
		StreamsReply: true,
		Progress:     true, // the answer, streamed in pieces as progress messages
		Example:      json.RawMessage(`{"thread_id":"chat_demo","message":"How often should I replace my toothbrush?"}`),
	}}
}

// ChatCallable reports whether a chat may offer tool t to a model: public,
// not changing state, not the chat itself, and not the vector retriever,
// whose part the chat's vector-search path plays.
func ChatCallable(t *Tool) bool {
	return t.Visibility == Public && !t.Mutates && t.Family != ChatFamily && t.Name != "optimizer_vs-retriever"
}

// withChatInvokes gives the chat tool the functions it may call: those of
// every tool a chat may offer a model ([ChatCallable]), and the connectors'
// proxy, which serves connector tools.
func withChatInvokes(tools []*Tool) {
	var chat *Tool
	var invokes []string
	for _, t := range tools {
		switch {
		case t.Name == ChatTool:
			chat = t
		case ChatCallable(t), t.Name == ConnectorCallTool:
			invokes = append(invokes, t.Function)
		}
	}
	if chat != nil {
		chat.Invokes = slices.Compact(slices.Sorted(slices.Values(invokes)))
	}
}
