package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The routes a turn records in [Output.Route].
const (
	RouteVectorSearch = "vector_search"
	RouteTools        = "tools"
	RouteAnswer       = "answer"
)

// vectorSearchSpec is the tool a model calls to search the vector stores.
var vectorSearchSpec = provider.ToolSpec{
	Name:        VectorSearchTool,
	Description: "Search the user's own document stores (vector search) for passages that help answer the question. Call it for questions about the user's documents, guides or knowledge base.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"what to search for"}},"required":["question"]}`),
}

// initialise validates in and reads what every turn needs: the thread's
// settings and its history (internal messages filtered out). The tools and
// the system prompt are read when a model will get them.
func (s *Service) initialise(ctx context.Context, c tenant.Caller, in Input) (*turn, error) {
	if err := validate(in); err != nil {
		return nil, err
	}
	t := &turn{in: in, caller: c}
	if call, ok := callcontext.FromContext(ctx); ok {
		t.held = call.Profile
	}
	if s.opts.Settings != nil {
		st, err := s.opts.Settings.Get(ctx, c.Tenant, in.ThreadID)
		if err != nil {
			return nil, fmt.Errorf("chat: reading the thread's settings: %w", err)
		}
		t.settings = st
	}
	if in.ThreadID != "" {
		if _, err := s.opts.Memory.GetOrCreate(ctx, c, memory.GetOrCreateInput{ConversationID: in.ThreadID}); err != nil {
			return nil, err
		}
		window, err := s.opts.Memory.GetContext(ctx, c, memory.GetContextInput{ConversationID: in.ThreadID, MaxMessages: HistoryWindow})
		if err != nil {
			return nil, err
		}
		t.history = modelContext(window.Messages)
		t.pending = pendingApprovals(window.Messages)
		if window.Summary != "" {
			t.system = "\n\nSummary of the earlier conversation: " + window.Summary
		}
		t.out.ThreadID = in.ThreadID
	} else {
		for _, m := range in.History {
			if m.Role == provider.RoleUser || m.Role == provider.RoleAssistant {
				t.history = append(t.history, provider.Message{Role: m.Role, Content: m.Content})
			}
		}
	}
	t.messages = []provider.Message{{Role: provider.RoleUser, Content: in.Message}}
	t.record = []memory.Turn{{Role: provider.RoleUser, Content: in.Message}}
	return t, nil
}

// listTools reads the tools the thread's settings and the caller's profile
// enable. A failure leaves
// the turn without them (logged): the answer can still come from the model
// and the documents.
func (s *Service) listTools(ctx context.Context, t *turn) {
	if s.opts.Tools == nil {
		return
	}
	all, err := s.opts.Tools.List(ctx, t.caller)
	if err != nil {
		s.log.WarnContext(ctx, "listing tools failed; answering without them", "error", err, "trace_id", traceOf(ctx))
	}
	for _, tool := range all {
		if t.allows(tool.Name, tool.Group) {
			t.tools = append(t.tools, tool)
		}
	}
}

// modelContext is a thread's stored messages as the model sees them: the
// internal ones (one turn's retrieved documents) and the vector-search calls
// they answer are left out (seed 000's clean_messages), tool calls and
// results of other tools kept.
func modelContext(msgs []memory.Message) []provider.Message {
	var out []provider.Message
	for _, m := range msgs {
		if m.Internal {
			continue
		}
		pm := provider.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if len(m.ToolCalls) > 0 {
			var calls []provider.ToolCall
			if json.Unmarshal(m.ToolCalls, &calls) == nil {
				for _, c := range calls {
					if c.Name != VectorSearchTool {
						pm.ToolCalls = append(pm.ToolCalls, c)
					}
				}
			}
		}
		if pm.Role == provider.RoleAssistant && pm.Content == "" && len(pm.ToolCalls) == 0 {
			continue
		}
		if pm.Role == "system" {
			continue
		}
		out = append(out, pm)
	}
	return out
}

// systemPrompt is the prompt the thread's settings name, or the default for
// whether tools are on (seed 000: optimizer_tools-default or
// optimizer_basic-default), with overrides applied.
func (s *Service) systemPrompt(ctx context.Context, c tenant.Caller, t *turn) (string, error) {
	name := t.settings.System
	if name == "" {
		name = PromptBasic
		if len(t.tools) > 0 || s.vectorSearchOn(t) {
			name = PromptTools
		}
	}
	if s.opts.Prompts != nil {
		text, err := s.opts.Prompts.Text(ctx, c.Tenant, name)
		if err == nil {
			return text, nil
		}
		if fault.KindOf(err) != fault.KindNotFound {
			return "", fmt.Errorf("chat: reading prompt %s: %w", name, err)
		}
	}
	text, err := prompt.Defaults.Text(ctx, c.Tenant, name)
	if err != nil {
		return "", fault.Invalid("prompts.system", "%q is not a prompt", name)
	}
	return text, nil
}

func (s *Service) vectorSearchOn(t *turn) bool {
	return s.opts.Pipeline != nil && t.allows(VectorSearchTool, ToolsVectorSearch)
}

// run is the graph: completion, then the route its reply takes, until an
// answer or the recursion limit.
func (s *Service) run(ctx context.Context, t *turn) error {
	gen := s.opts.Generator
	if gen == nil {
		return fault.Unavailable(nil, "no generator is configured")
	}
	gen, err := provider.GeneratorFor(gen, cmp.Or(t.in.Model, t.settings.Model))
	if err != nil {
		return err
	}
	caller, ok := provider.ToolCallerOf(gen)
	if !ok {
		return s.offline(ctx, t, gen)
	}
	s.listTools(ctx, t)
	system, err := s.systemPrompt(ctx, t.caller, t)
	if err != nil {
		return err
	}
	t.system = system + t.system
	s.resumeApprovals(ctx, t)
	if t.in.Tool != "" {
		// A tool the request names is called first, by code; the model answers from its result.
		args, err := t.argumentsFor(t.in.Tool)
		if err != nil {
			return err
		}
		if err := s.route(ctx, t, provider.ChatReply{ToolCalls: []provider.ToolCall{{ID: "call_0", Name: t.in.Tool, Arguments: args}}}); err != nil {
			return err
		}
	}
	for step := 0; ; step++ {
		if step == s.opts.RecursionLimit {
			t.out.FinishReason = FinishRecursionLimit
			t.out.Answer = fmt.Sprintf("I stopped after %d rounds of tool calls without reaching an answer (the recursion limit). Ask again more narrowly, or name the tool to use.", step)
			return nil
		}
		reply, err := s.complete(ctx, t, gen, caller)
		if err != nil {
			return err
		}
		t.out.Provider, t.out.Model = reply.Provider, reply.Model
		t.out.TokenUsage.add(reply.InputTokens, reply.OutputTokens)
		if len(reply.ToolCalls) == 0 {
			t.out.Route = append(t.out.Route, RouteAnswer)
			t.out.Answer, t.out.FinishReason = reply.Text, FinishStop
			if reply.StopReason == provider.StopMaxToken {
				t.out.FinishReason = FinishLength
			}
			return nil
		}
		if err := s.route(ctx, t, reply); err != nil {
			return err
		}
	}
}

// complete asks the model for its next reply, streamed when the turn
// streams its answer and the model can: its text goes to the client as it
// is written. Text a reply writes before calling tools has gone to the
// client too (it is that round's assistant message); the answer follows it
// after a paragraph break.
func (s *Service) complete(ctx context.Context, t *turn, gen provider.Generator, caller provider.ToolCaller) (provider.ChatReply, error) {
	st, ok := t.streamer(gen)
	if !ok {
		return caller.Chat(ctx, s.completionRequest(t))
	}
	reply, err := st.ChatStream(ctx, s.completionRequest(t), t.live.write)
	if err != nil {
		t.live.gap = true
		return reply, err
	}
	if len(reply.ToolCalls) > 0 {
		t.live.gap = true
	} else {
		t.answerStreamed = true
	}
	return reply, nil
}

// completionRequest is what the model gets: the system prompt (with this
// turn's documents), the filtered history, this turn's messages, and the
// tools (vector search only until it has run this turn).
func (s *Service) completionRequest(t *turn) provider.ChatRequest {
	req := provider.ChatRequest{System: withDocuments(t.system, t.documents), Temperature: cmp.Or(t.in.Temperature, t.settings.Temperature),
		MaxTokens: cmp.Or(t.in.MaxTokens, t.settings.MaxTokens)}
	req.Messages = append(append(req.Messages, t.history...), t.messages...)
	if s.vectorSearchOn(t) && !t.searched {
		req.Tools = append(req.Tools, vectorSearchSpec)
	}
	for _, tool := range t.tools {
		req.Tools = append(req.Tools, tool.ToolSpec)
	}
	return req
}

// route takes a reply's tool calls down their paths: the vector-search call
// to the pipeline, the others to the tools.
func (s *Service) route(ctx context.Context, t *turn, reply provider.ChatReply) error {
	var others []provider.ToolCall
	for _, call := range reply.ToolCalls {
		if call.Name == VectorSearchTool && s.vectorSearchOn(t) && !t.searched {
			var args struct {
				Question string `json:"question"`
			}
			json.Unmarshal(call.Arguments, &args)
			if err := s.vectorSearch(ctx, t, call.ID, cmp.Or(strings.TrimSpace(args.Question), t.in.Message)); err != nil {
				return err
			}
			continue
		}
		others = append(others, call)
	}
	if len(others) == 0 {
		return nil
	}
	assistant := provider.Message{Role: provider.RoleAssistant, Content: reply.Text, ToolCalls: others}
	t.messages = append(t.messages, assistant)
	calls, _ := json.Marshal(others)
	t.record = append(t.record, memory.Turn{Role: provider.RoleAssistant, Content: reply.Text, ToolCalls: calls})
	t.out.Route = append(t.out.Route, RouteTools)
	for _, call := range others {
		res := s.callTool(ctx, t, call.Name, call.Arguments)
		t.messages = append(t.messages, provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: res.Text, IsError: res.IsError})
		t.record = append(t.record, memory.Turn{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: res.Text})
		t.rememberApproval(call, res)
	}
	return nil
}

// callTool calls a tool the turn offers; one it does not offer, or a call
// that fails, is an error result the model reads.
func (s *Service) callTool(ctx context.Context, t *turn, name string, args json.RawMessage) ToolResult {
	return s.callToolWith(t, name, args, func() (ToolResult, error) { return s.opts.Tools.Call(ctx, t.caller, name, args) })
}

// callToolWith is callTool making the call with call.
func (s *Service) callToolWith(t *turn, name string, args json.RawMessage, call func() (ToolResult, error)) ToolResult {
	rec := ToolCallRecord{Name: name, Arguments: args}
	res := ToolResult{}
	switch {
	case !t.offers(name):
		res = ToolResult{Text: fmt.Sprintf("%s is not a tool available in this conversation.", name), IsError: true}
	default:
		var err error
		res, err = call()
		if err != nil {
			res = ToolResult{Text: fmt.Sprintf("%s failed: %s", name, cause(err)), IsError: true}
		}
	}
	if strings.TrimSpace(res.Text) == "" {
		res.Text = "(no output)"
	}
	res.Text = clip(res.Text, MaxToolResultChars)
	rec.IsError = res.IsError
	t.out.ToolCalls = append(t.out.ToolCalls, rec)
	return res
}

func (t *turn) offers(name string) bool {
	for _, tool := range t.tools {
		if tool.Name == name {
			return true
		}
	}
	return false
}

// vectorSearch is the vector-search path: the pipeline (rephrase ->
// retrieve -> grade) once per turn. Relevant documents go to this turn's
// system prompt and to the thread as an internal tool message; irrelevant
// ones leave no trace.
func (s *Service) vectorSearch(ctx context.Context, t *turn, callID, question string) error {
	t.searched = true
	in := pipeline.Input{Request: pipelineRequest(ctx, t.caller), Question: question, ThreadID: t.in.ThreadID,
		Stores: t.settings.Stores, TopK: t.settings.TopK, Mode: t.settings.Mode, LLMModel: t.in.Model, SkipGrade: t.settings.Ungraded}
	out, err := s.opts.Pipeline.Run(ctx, in.WithDefaults())
	if err != nil {
		return fmt.Errorf("vector search: %w", err)
	}
	if out.Refusal != nil {
		return fault.Invalid(cmp.Or(out.Refusal.Field, "vector_search"), "%s", out.Refusal.Message)
	}
	t.out.Route = append(t.out.Route, RouteVectorSearch)
	meta := &VSMetadata{SearchedStores: nonNil(out.SearchedStores), ContextInput: out.ContextInput, Relevant: out.Relevant, GradeSkipped: out.GradeSkipped, Degraded: out.Degraded}
	t.out.VSMetadata = meta
	if out.StoreSelection.By != "" {
		meta.StoreSelection = &out.StoreSelection
	}
	if (out.Relevant != "yes" && !t.settings.Ungraded) || len(out.Documents) == 0 {
		return nil
	}
	t.documents = out.Documents
	meta.NumDocuments = len(out.Documents)
	body, err := json.Marshal(struct {
		Documents    []pipeline.Document `json:"documents"`
		ContextInput string              `json:"context_input"`
		Stores       []string            `json:"searched_stores"`
	}{out.Documents, out.ContextInput, meta.SearchedStores})
	if err != nil {
		return fmt.Errorf("vector search: recording documents: %w", err)
	}
	t.record = append(t.record, memory.Turn{Role: provider.RoleTool, ToolCallID: cmp.Or(callID, "vector_search"), Name: VectorSearchTool,
		Content: clip(string(body), memory.MaxContentChars), Internal: true})
	return nil
}

func pipelineRequest(ctx context.Context, c tenant.Caller) pipeline.Request {
	r := pipeline.Request{Caller: c}
	if call, ok := callcontext.FromContext(ctx); ok {
		r.TraceID, r.RequestID = call.TraceID, call.RequestID
	}
	return r
}

// withDocuments is system with this turn's documents appended (seed 000's
// injection into the system prompt), or system alone.
func withDocuments(system string, docs []pipeline.Document) string {
	if len(docs) == 0 {
		return system
	}
	var b strings.Builder
	b.WriteString(system)
	b.WriteString("\n\nRelevant documents from the user's stores (use them to answer; cite them by number):\n")
	for i, d := range docs {
		b.WriteString("\n[" + strconv.Itoa(i+1) + "] ")
		if src := cmp.Or(d.Metadata["source"], d.DocID); src != "" {
			b.WriteString("(from " + src + ") ")
		}
		b.WriteString(strings.TrimSpace(d.Content))
		b.WriteByte('\n')
	}
	return b.String()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
