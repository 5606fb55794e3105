package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var alice = tenant.Caller{Tenant: "acme", Principal: "alice"}

const toothbrush = "Replace your toothbrush every three months, or sooner if the bristles fray. A worn toothbrush cleans teeth poorly."

// env is every function in process (the local server's assembly), with a
// store of guides ingested through the vector tools.
type env struct {
	stack *local.Stack
	mem   *memory.Service
}

func newEnv(t *testing.T, replace map[string]lambda.Handler) *env {
	t.Helper()
	deps := lambdafn.Deps{Table: storetest.OpenEmbedded(t), Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: offline.NewGenerator()}
	fns := handlers.All()
	for path, h := range replace {
		fns = append(fns, lambdafn.Function{Path: path, Build: func(lambdafn.Deps) lambda.Handler { return h }})
	}
	s, err := local.New(local.Options{Deps: deps, Functions: fns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := &env{stack: s, mem: memory.New(deps.Table, nil)}
	e.call(t, "vector_store_create", map[string]any{"alias": "health", "description": "health and hygiene guides"})
	for _, d := range []struct{ id, text string }{
		{"dental-guide", "# Toothbrushes\n\n" + toothbrush},
		{"sleep", "Adults need seven or more hours of sleep a night. Screens before bed delay sleep."},
	} {
		e.call(t, "vector_document_ingest", map[string]any{"store": "health", "doc_id": d.id, "content": d.text, "format": "md", "metadata": map[string]string{"source": d.id + ".md"}})
	}
	return e
}

func (e *env) call(t *testing.T, name string, args any) {
	t.Helper()
	tl, _ := catalog.Default().Tool(name)
	a, _ := json.Marshal(args)
	resp, err := e.stack.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: name, Arguments: a, Caller: alice})
	if err != nil || resp.Error != nil {
		t.Fatalf("%s: %v %+v", name, err, resp)
	}
}

func (e *env) service(gen provider.Generator) *chat.Service {
	return chat.New(chat.Options{Memory: e.mem, Generator: gen, Pipeline: e.stack.Pipeline(), Tools: &chat.Invoked{Catalog: catalog.Default(), Invoker: e.stack}})
}

func (e *env) history(t *testing.T, thread string) []memory.Message {
	t.Helper()
	out, err := e.mem.GetAllMessages(context.Background(), alice, memory.GetAllMessagesInput{ConversationID: thread})
	if err != nil {
		t.Fatal(err)
	}
	return out.Messages
}

func roles(ms []memory.Message) []string {
	var out []string
	for _, m := range ms {
		r := m.Role
		if m.Internal {
			r += "(internal)"
		}
		out = append(out, r)
	}
	return out
}

func TestOfflineTurns(t *testing.T) {
	e := newEnv(t, nil)
	svc := e.service(offline.NewGenerator())
	ctx := context.Background()

	t.Run("AVectorSearchTurnAnswersFromTheDocumentsAndSaysItIsOffline", func(t *testing.T) {
		out, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "offline-1", Message: "How often should I replace my toothbrush?"})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Offline || !strings.HasPrefix(out.Answer, "No language model is configured") || !strings.Contains(out.Answer, "three months") {
			t.Errorf("answer %q (offline %v), want an offline answer saying three months", out.Answer, out.Offline)
		}
		if diff := cmp.Diff([]string{chat.RouteVectorSearch, chat.RouteAnswer}, out.Route); diff != "" {
			t.Errorf("route mismatch (-want +got):\n%s", diff)
		}
		if m := out.VSMetadata; m == nil || !slices.Contains(m.SearchedStores, "health") || m.NumDocuments == 0 || m.ContextInput == "" {
			t.Errorf("vs_metadata %+v", out.VSMetadata)
		}
		if out.TokenUsage.TotalTokens == 0 || out.TokenUsage.TotalTokens != out.TokenUsage.PromptTokens+out.TokenUsage.CompletionTokens {
			t.Errorf("token_usage %+v", out.TokenUsage)
		}
		msgs := e.history(t, "offline-1")
		if diff := cmp.Diff([]string{"user", "tool(internal)", "assistant"}, roles(msgs)); diff != "" {
			t.Errorf("history roles mismatch (-want +got):\n%s", diff)
		}
		if !strings.Contains(msgs[1].Content, "three months") || msgs[1].Name != chat.VectorSearchTool {
			t.Errorf("internal message %+v does not hold the documents", msgs[1])
		}
	})
	t.Run("IrrelevantDocumentsLeaveNoTrace", func(t *testing.T) {
		out, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "offline-2", Message: "Hello, my name is Mike."})
		if err != nil {
			t.Fatal(err)
		}
		if out.VSMetadata == nil || out.VSMetadata.NumDocuments != 0 || out.VSMetadata.Relevant != "no" {
			t.Errorf("vs_metadata %+v, want a search that found nothing relevant", out.VSMetadata)
		}
		if diff := cmp.Diff([]string{"user", "assistant"}, roles(e.history(t, "offline-2"))); diff != "" {
			t.Errorf("history roles mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("ANamedToolIsCalledWithTheMessage", func(t *testing.T) {
		out, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "offline-3", Message: "which stores do I have?", Tool: "vector_store_list"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "vector_store_list" || !strings.Contains(out.Answer, "health") {
			t.Errorf("tool calls %+v, answer %q", out.ToolCalls, out.Answer)
		}
		if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant"}, roles(e.history(t, "offline-3"))); diff != "" {
			t.Errorf("history roles mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("BadInputNamesItsField", func(t *testing.T) {
		for _, tc := range []struct {
			in    chat.Input
			field string
		}{
			{chat.Input{ThreadID: "x"}, "message"},
			{chat.Input{ThreadID: "bad id!", Message: "hi"}, "thread_id"},
			{chat.Input{ThreadID: "x", Message: "hi", History: []chat.HistoryMessage{{Role: "user", Content: "a"}}}, "history"},
		} {
			_, err := svc.Chat(ctx, alice, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Chat(%+v) = %v, want an error naming %s", tc.in, err, tc.field)
			}
		}
	})
}

// model is an OpenAI-compatible stand-in that answers each request with
// the next scripted message and records what it was sent.
type model struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []map[string]any
	script func(n int, req map[string]any) (status int, body string)
}

func newModel(t *testing.T, script func(n int, req map[string]any) (int, string)) *model {
	m := &model{script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		m.mu.Lock()
		n := len(m.reqs)
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		status, body := m.script(n, req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) generator(t *testing.T) provider.Generator {
	c, err := openai.NewClient(m.srv.URL, "sk-test", &openai.ClientOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := openai.NewGenerator(c, "gpt-4o-mini")
	return g
}

func (m *model) request(i int) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs[i]
}

func (m *model) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

func answer(text string) string {
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	return string(b)
}

func toolCall(id, name, args string) string {
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "choices": []any{map[string]any{"finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}}},
		"usage": map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
	return string(b)
}

// sent is everything a request sent the model, as text.
func sent(req map[string]any) string {
	b, _ := json.Marshal(req["messages"])
	return string(b)
}

func toolNames(req map[string]any) []string {
	var out []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		out = append(out, t.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return out
}

func TestAModelDrivenConversation(t *testing.T) {
	e := newEnv(t, nil)
	m := newModel(t, func(n int, req map[string]any) (int, string) {
		switch n {
		case 0:
			return 200, toolCall("call_vs", chat.VectorSearchTool, `{"question":"toothbrush replacement"}`)
		case 1:
			return 200, answer("Every three months [1].")
		case 2:
			return 200, toolCall("call_ls", "vector_store_list", `{}`)
		}
		return 200, answer("You have one store, health.")
	})
	svc := e.service(m.generator(t))
	ctx := context.Background()

	first, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "online", Message: "How often should I replace my toothbrush?"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Answer != "Every three months [1]." || first.Offline || first.VSMetadata == nil || first.VSMetadata.NumDocuments == 0 {
		t.Fatalf("first turn %+v", first)
	}
	if want := (chat.TokenUsage{PromptTokens: 150, CompletionTokens: 15, TotalTokens: 165}); first.TokenUsage != want {
		t.Errorf("token_usage %+v, want %+v", first.TokenUsage, want)
	}
	if !slices.Contains(toolNames(m.request(0)), chat.VectorSearchTool) {
		t.Errorf("first completion's tools %v lack the vector search", toolNames(m.request(0)))
	}
	withDocs := m.request(1)
	if !strings.Contains(sent(withDocs), "three months") || strings.Contains(sent(withDocs), chat.VectorSearchTool) {
		t.Errorf("second completion's messages %s: want the documents in the system prompt and no vector-search call", sent(withDocs))
	}
	if slices.Contains(toolNames(withDocs), chat.VectorSearchTool) {
		t.Errorf("second completion offers the vector search again: %v", toolNames(withDocs))
	}

	second, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "online", Message: "Which stores do I have?"})
	if err != nil {
		t.Fatal(err)
	}
	if second.Answer != "You have one store, health." || len(second.ToolCalls) != 1 || second.ToolCalls[0].Name != "vector_store_list" {
		t.Fatalf("second turn %+v", second)
	}
	for i := 2; i < m.count(); i++ {
		if s := sent(m.request(i)); strings.Contains(s, "three months") && !strings.Contains(s, "Every three months [1].") || strings.Contains(s, "worn toothbrush") {
			t.Errorf("turn 2's completion %d carries turn 1's documents: %s", i, s)
		}
	}
	if s := sent(m.request(3)); !strings.Contains(s, `"tool_call_id":"call_ls"`) || !strings.Contains(s, "health") {
		t.Errorf("the tools round's completion lacks the tool's result: %s", s)
	}
	want := []string{"user", "tool(internal)", "assistant", "user", "assistant", "tool", "assistant"}
	if diff := cmp.Diff(want, roles(e.history(t, "online"))); diff != "" {
		t.Errorf("history roles mismatch (-want +got):\n%s", diff)
	}

	t.Run("ALaterTurnKeepsToolResultsAndDropsDocuments", func(t *testing.T) {
		before := m.count()
		if _, err := svc.Chat(ctx, alice, chat.Input{ThreadID: "online", Message: "Thanks!"}); err != nil {
			t.Fatal(err)
		}
		s := sent(m.request(before))
		if !strings.Contains(s, `"tool_call_id":"call_ls"`) || strings.Contains(s, "worn toothbrush") {
			t.Errorf("turn 3's context %s: want turn 2's tool result, and none of turn 1's documents", s)
		}
	})
}

func TestTheRecursionLimitEndsATurn(t *testing.T) {
	e := newEnv(t, nil)
	m := newModel(t, func(n int, _ map[string]any) (int, string) {
		return 200, toolCall("call_"+string(rune('a'+n)), "vector_store_list", `{}`)
	})
	svc := chat.New(chat.Options{Memory: e.mem, Generator: m.generator(t), Tools: &chat.Invoked{Catalog: catalog.Default(), Invoker: e.stack}, RecursionLimit: 3})
	out, err := svc.Chat(context.Background(), alice, chat.Input{ThreadID: "loop", Message: "list my stores forever"})
	if err != nil {
		t.Fatal(err)
	}
	if out.FinishReason != chat.FinishRecursionLimit || m.count() != 3 || len(out.ToolCalls) != 3 {
		t.Errorf("finish %q after %d completions and %d tool calls, want recursion_limit after 3", out.FinishReason, m.count(), len(out.ToolCalls))
	}
}

func TestAFailingModelGetsAFriendlyAnswerWithItsCause(t *testing.T) {
	e := newEnv(t, nil)
	m := newModel(t, func(int, map[string]any) (int, string) {
		return 401, `{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","code":"invalid_api_key"}}`
	})
	out, err := e.service(m.generator(t)).Chat(context.Background(), alice, chat.Input{ThreadID: "broken", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if out.FinishReason != chat.FinishError || !strings.HasPrefix(out.Answer, "Sorry, I could not finish this answer: ") ||
		!strings.Contains(out.Answer, "HTTP 401") || !strings.Contains(out.Answer, "Incorrect API key") || strings.Contains(out.Answer, "*openai") || strings.Contains(out.Answer, "goroutine") {
		t.Errorf("answer %q (finish %q), want a friendly message with the cause", out.Answer, out.FinishReason)
	}
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(e.history(t, "broken"))); diff != "" {
		t.Errorf("history roles mismatch (-want +got):\n%s", diff)
	}
}

// A tool's numbers reach the model and the history as the function wrote
// them: seed 000's Decimal failure must not recur.
func TestNumbersFromToolsPassLosslessly(t *testing.T) {
	const result = `{"content":[],"structuredContent":{"count":12345678901234567890,"ratio":0.1,"price":19.99}}`
	e := newEnv(t, map[string]lambda.Handler{"operations/get_audit_trace": lambda.NewHandler(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"result":` + result + `}`), nil
	})})
	m := newModel(t, func(n int, _ map[string]any) (int, string) {
		if n == 0 {
			return 200, toolCall("call_n", "get_audit_trace", `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`)
		}
		return 200, answer("done")
	})
	if _, err := e.service(m.generator(t)).Chat(context.Background(), alice, chat.Input{ThreadID: "numbers", Message: "count?"}); err != nil {
		t.Fatal(err)
	}
	want := `{"count":12345678901234567890,"ratio":0.1,"price":19.99}`
	if s := sent(m.request(1)); !strings.Contains(s, strings.ReplaceAll(want, `"`, `\"`)) {
		t.Errorf("the model got %s, want the tool's result %s as written", s, want)
	}
	msgs := e.history(t, "numbers")
	if msgs[2].Role != "tool" || msgs[2].Content != want {
		t.Errorf("history's tool message %+v, want content %s", msgs[2], want)
	}
}

func TestTheChatsToolCallsCountAgainstTheCallersRateLimits(t *testing.T) {
	e := newEnv(t, nil)
	m := newModel(t, func(n int, req map[string]any) (int, string) {
		if n > 0 {
			return 200, answer("done")
		}
		calls := []any{}
		for _, id := range []string{"call_1", "call_2"} {
			calls = append(calls, map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "vector_store_list", "arguments": "{}"}})
		}
		b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "choices": []any{map[string]any{"finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}}}})
		return 200, string(b)
	})
	limits := ratelimit.Limits{PrincipalRate: ratelimit.Rate{PerSecond: 0.001, Burst: 1}}
	limiter := ratelimit.New(storetest.OpenEmbedded(t), &ratelimit.Options{Defaults: &limits})
	svc := chat.New(chat.Options{Memory: e.mem, Generator: m.generator(t),
		Tools: &chat.Invoked{Catalog: catalog.Default(), Invoker: e.stack, Limiter: limiter}})
	out, err := svc.Chat(context.Background(), alice, chat.Input{Message: "Which stores do I have?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ToolCalls) != 2 || out.ToolCalls[0].IsError || !out.ToolCalls[1].IsError {
		t.Fatalf("tool calls %+v: want the first made and the second refused", out.ToolCalls)
	}
	if s := sent(m.request(1)); !strings.Contains(s, "health") || !strings.Contains(s, "principal rate") {
		t.Errorf("the model read %s: want the first call's stores and the second's limit", s)
	}
}

// streamingModel is an OpenAI-compatible stand-in that answers each
// request with the next scripted stream of chat.completion.chunk events
// (text/event-stream, "data: " lines, [DONE] last); an event "WAIT" makes
// it wait until the test closes proceed.
func streamingModel(t *testing.T, proceed <-chan struct{}, scripts ...[]string) (provider.Generator, func() []map[string]any) {
	var mu sync.Mutex
	var reqs []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		n := len(reqs)
		reqs = append(reqs, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range scripts[min(n, len(scripts)-1)] {
			if e == "WAIT" {
				select {
				case <-proceed:
				case <-time.After(time.Minute):
					t.Error("the chat passed on nothing of the model's text while the model was still writing")
				case <-r.Context().Done():
					return
				}
				continue
			}
			fmt.Fprintf(w, "data: %s\n\n", e)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	c, err := openai.NewClient(srv.URL, "sk-test", &openai.ClientOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := openai.NewGenerator(c, "gpt-4o-mini")
	return g, func() []map[string]any { mu.Lock(); defer mu.Unlock(); return slices.Clone(reqs) }
}

func textChunk(delta string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func finishChunk(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const streamUsage = `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":6,"total_tokens":46}}`

func TestAHostedModelsAnswerIsStreamedAsItIsWritten(t *testing.T) {
	e := newEnv(t, nil)
	proceed := make(chan struct{})
	gen, requests := streamingModel(t, proceed,
		[]string{textChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_ls","type":"function","function":{"name":"vector_store_list","arguments":""}}]}`),
			textChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`), finishChunk("tool_calls"), streamUsage, "[DONE]"},
		[]string{textChunk(`{"role":"assistant","content":"You have"}`), "WAIT", textChunk(`{"content":" one store,"}`), textChunk(`{"content":" health."}`),
			finishChunk("stop"), streamUsage, "[DONE]"})
	var deltas []string
	svc := chat.New(chat.Options{Memory: e.mem, Generator: gen, Tools: &chat.Invoked{Catalog: catalog.Default(), Invoker: e.stack},
		Deltas: func(_ context.Context, _, _ float64, d string) {
			deltas = append(deltas, d)
			if len(deltas) == 1 {
				close(proceed) // the model has written its first words and not yet finished
			}
		}})
	out, err := svc.Chat(context.Background(), alice, chat.Input{ThreadID: "streamed", Message: "Which stores do I have?"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"You have", " one store,", " health."}, deltas); diff != "" {
		t.Errorf("deltas mismatch (-want +got):\n%s", diff)
	}
	if out.Answer != "You have one store, health." || out.FinishReason != chat.FinishStop || len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "vector_store_list" {
		t.Errorf("turn %+v", out)
	}
	if want := (chat.TokenUsage{PromptTokens: 80, CompletionTokens: 12, TotalTokens: 92}); out.TokenUsage != want {
		t.Errorf("token_usage %+v, want the streams' usage %+v", out.TokenUsage, want)
	}
	for i, req := range requests() {
		if req["stream"] != true {
			t.Errorf("request %d did not ask for a stream", i)
		}
	}
	msgs := e.history(t, "streamed")
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant"}, roles(msgs)); diff != "" {
		t.Errorf("history roles mismatch (-want +got):\n%s", diff)
	}
	if last := msgs[len(msgs)-1]; last.Content != out.Answer {
		t.Errorf("history's answer %q, want %q once", last.Content, out.Answer)
	}
}

func TestAFailureMidStreamEndsTheAnswerWithItsCause(t *testing.T) {
	e := newEnv(t, nil)
	gen, _ := streamingModel(t, nil, []string{textChunk(`{"role":"assistant","content":"Every"}`),
		`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`})
	var got strings.Builder
	svc := chat.New(chat.Options{Memory: e.mem, Generator: gen, Deltas: func(_ context.Context, _, _ float64, d string) { got.WriteString(d) }})
	out, err := svc.Chat(context.Background(), alice, chat.Input{ThreadID: "broken-stream", Message: "How often?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.FinishReason != chat.FinishError || !strings.HasPrefix(out.Answer, "Sorry, I could not finish this answer: ") || !strings.Contains(out.Answer, "The server had an error") {
		t.Errorf("answer %q (finish %q), want the friendly error with its cause", out.Answer, out.FinishReason)
	}
	if want := "Every\n\n" + out.Answer; got.String() != want {
		t.Errorf("the client got %q, want %q", got.String(), want)
	}
	msgs := e.history(t, "broken-stream")
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(msgs)); diff != "" || msgs[1].Content != out.Answer {
		t.Errorf("history %+v, want the user's message and the friendly error once", msgs)
	}
}

func TestACallerThatDoesNotStreamGetsTheModelsWholeReply(t *testing.T) {
	e := newEnv(t, nil)
	m := newModel(t, func(int, map[string]any) (int, string) { return 200, answer("Every three months.") })
	var got strings.Builder
	svc := chat.New(chat.Options{Memory: e.mem, Generator: m.generator(t), Deltas: func(_ context.Context, _, _ float64, d string) { got.WriteString(d) },
		Streaming: func(context.Context) bool { return false }})
	out, err := svc.Chat(context.Background(), alice, chat.Input{Message: "How often?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "Every three months." || got.String() != out.Answer || m.request(0)["stream"] != nil {
		t.Errorf("answer %q, pieces %q, request %v: want the whole reply of a request that asked for no stream", out.Answer, got.String(), m.request(0))
	}
}
