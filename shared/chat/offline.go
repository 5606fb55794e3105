package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
)

// WebSearchTools are the tools the offline route calls for a question with
// web-search trigger words, the first one offered.
var WebSearchTools = []string{"web_search", "duckduckgo_search"}

// WebSearchTriggers are the words and phrases that make the offline route
// search the web (seed 004's code-driven selection): asking for what is
// current, or for a search outright, in English and in Vietnamese (the
// seed's language).
var WebSearchTriggers = []string{
	"search the web", "search online", "web search", "look up", "google", "internet", "online",
	"latest", "news", "today", "current", "currently", "recent", "this week", "this year", "right now",
	"tìm kiếm", "tra cứu", "mới nhất", "tin tức", "hôm nay", "hiện nay", "gần đây",
}

// Offline answers say so, in their first sentence.
const (
	offlineDocuments = "No language model is configured, so this answer is assembled without one: the passages of your documents that match your question.\n\n"
	offlineTool      = "No language model is configured, so this answer is assembled without one: here is what %s returned.\n\n"
	offlineNothing   = "No language model is configured, so I can only answer from your documents and tools, and none of them matched this question."
)

// wantsWebSearch reports whether message has a web-search trigger.
func wantsWebSearch(message string) bool {
	m := " " + strings.ToLower(strings.Join(strings.Fields(message), " ")) + " "
	for _, w := range WebSearchTriggers {
		if i := strings.Index(m, w); i >= 0 && !isLetter(m, i-1) && !isLetter(m, i+len(w)) {
			return true
		}
	}
	return false
}

func isLetter(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// offline is the route chosen by code, for a generator that cannot call
// tools: the tool the request names; else web search for a question with its
// trigger words; else vector search when it is on. The answer is assembled
// by the offline generator from what the route found, and says so.
func (s *Service) offline(ctx context.Context, t *turn, gen provider.Generator) error {
	t.out.Offline, t.out.FinishReason = true, FinishStop
	if s.offlineResumed(ctx, t) {
		return nil
	}
	tool := t.in.Tool
	web := tool == "" && wantsWebSearch(t.in.Message)
	if tool != "" && tool != VectorSearchTool || web {
		s.listTools(ctx, t) // only a route that calls a tool needs them
	}
	if web {
		for _, name := range WebSearchTools {
			if t.offers(name) {
				tool = name
				break
			}
		}
	}
	if tool != "" && tool != VectorSearchTool {
		return s.offlineTool(ctx, t, tool)
	}
	if s.vectorSearchOn(t) {
		if err := s.vectorSearch(ctx, t, "", t.in.Message); err != nil {
			return err
		}
	}
	t.out.Route = append(t.out.Route, RouteAnswer)
	if len(t.documents) == 0 {
		t.out.Answer = offlineNothing
		return nil
	}
	var docs, sources []string
	for _, d := range t.documents {
		docs = append(docs, d.Content)
		sources = append(sources, d.Metadata["source"])
	}
	g, err := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: t.in.Message, Documents: docs, Sources: sources,
		History: turnsOf(t.history), MaxTokens: t.in.MaxTokens})
	if err != nil {
		return fmt.Errorf("writing the answer: %w", err)
	}
	t.out.Provider, t.out.Model = g.Provider, g.Model
	t.out.TokenUsage.add(g.InputTokens, g.OutputTokens)
	body := strings.TrimSpace(g.Text)
	if body == "" {
		body = strings.TrimSpace(docs[0])
	}
	t.out.Answer = offlineDocuments + body
	return nil
}

// offlineTool calls tool with arguments derived from the message, and
// answers with its result.
func (s *Service) offlineTool(ctx context.Context, t *turn, tool string) error {
	args, err := t.argumentsFor(tool)
	if err != nil {
		return err
	}
	call := provider.ToolCall{ID: "call_1", Name: tool, Arguments: args}
	calls, _ := json.Marshal([]provider.ToolCall{call})
	t.record = append(t.record, memory.Turn{Role: provider.RoleAssistant, ToolCalls: calls})
	t.out.Route = append(t.out.Route, RouteTools)
	res := s.callTool(ctx, t, tool, args)
	t.record = append(t.record, memory.Turn{Role: provider.RoleTool, ToolCallID: call.ID, Name: tool, Content: res.Text})
	t.rememberApproval(call, res)
	t.out.Route = append(t.out.Route, RouteAnswer)
	t.out.Answer = fmt.Sprintf(offlineTool, tool) + res.Text
	if res.IsError {
		t.out.FinishReason, t.out.Error = FinishError, res.Text
	}
	return nil
}

// argumentsFor derives a tool's arguments from the user's message, as code
// can: the message as its one required text argument, or as its query,
// question or message argument when it requires none; {} for a tool that
// needs no arguments. A tool needing more is an error naming what it needs.
func (t *turn) argumentsFor(name string) (json.RawMessage, error) {
	if name == VectorSearchTool {
		return json.Marshal(map[string]string{"question": t.in.Message})
	}
	i := slices.IndexFunc(t.tools, func(x Tool) bool { return x.Name == name })
	if i < 0 {
		return nil, fault.Invalid("tool", "%q is not a tool available in this conversation", name)
	}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(t.tools[i].InputSchema, &schema)
	textArg := ""
	switch len(schema.Required) {
	case 0:
		for _, p := range []string{"query", "question", "message", "text"} {
			if schema.Properties[p].Type == "string" {
				textArg = p
				break
			}
		}
	case 1:
		if schema.Properties[schema.Required[0]].Type == "string" {
			textArg = schema.Required[0]
		}
	}
	if textArg == "" && len(schema.Required) > 0 {
		return nil, fault.Invalid("tool", "%s needs the arguments %s, which cannot be taken from a message without a language model", name, strings.Join(schema.Required, ", "))
	}
	if textArg == "" {
		return json.RawMessage(`{}`), nil
	}
	return json.Marshal(map[string]string{textArg: t.in.Message})
}

// turnsOf is a conversation as the answer task reads it: user and assistant text.
func turnsOf(ms []provider.Message) []provider.Turn {
	var out []provider.Turn
	for _, m := range ms {
		if (m.Role == provider.RoleUser || m.Role == provider.RoleAssistant) && m.Content != "" {
			out = append(out, provider.Turn{Role: m.Role, Content: m.Content})
		}
	}
	return out
}
