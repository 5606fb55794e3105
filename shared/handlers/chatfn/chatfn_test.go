package chatfn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var acme = tenant.Caller{Tenant: "acme", Principal: "alice"}

// newStack returns every function in one process on an embedded table,
// answering with gen, with a store of guides ingested through the tools.
// with, if given, adds to the functions' dependencies.
func newStack(t *testing.T, gen provider.Generator, with ...func(*lambdafn.Deps)) *local.Stack {
	t.Helper()
	deps := lambdafn.Deps{Table: storetest.OpenEmbedded(t), Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: gen}
	for _, w := range with {
		w(&deps)
	}
	s, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	call(t, s, "vector_store_create", `{"alias":"health","description":"health and hygiene guides"}`)
	call(t, s, "vector_document_ingest", `{"store":"health","doc_id":"dental-guide","format":"md","content":"# Toothbrushes\n\nReplace your toothbrush every three months, or sooner if the bristles fray.","metadata":{"source":"dental-guide.md"}}`)
	return s
}

// call calls tool with args as acme through s and returns its structured content.
func call(t *testing.T, s *local.Stack, tool, args string) json.RawMessage {
	t.Helper()
	tl, ok := catalog.Default().Tool(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	resp, err := s.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: tool, Arguments: json.RawMessage(args), Caller: acme})
	if err != nil || resp.Error != nil {
		t.Fatalf("%s: %v %+v", tool, err, resp)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.StructuredContent
}

func chatTurn(t *testing.T, s *local.Stack, args string) chat.Output {
	t.Helper()
	var out chat.Output
	if err := json.Unmarshal(call(t, s, "chat", args), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAThreadsToolsEnabledChooseTheRoute(t *testing.T) {
	s := newStack(t, offline.NewGenerator())
	const question = `"message":"How often should I replace my toothbrush?"`
	call(t, s, "vector_store_create", `{"alias":"cooking","description":"recipes"}`)
	call(t, s, "settings_update", `{"thread_id":"no-vs","tools_enabled":["Connectors","Web Search"]}`)
	call(t, s, "settings_update", `{"thread_id":"recipes","vector_search":{"stores":["cooking"]}}`)
	for _, c := range []struct {
		name, thread string
		searched     []string
		documents    int
	}{
		{"AThreadNeverConfiguredSearchesTheDocuments", "defaults", []string{"health"}, 1},
		{"AThreadWithVectorSearchOffDoesNotSearch", "no-vs", nil, 0},
		{"AThreadsStoresAreTheOnesSearched", "recipes", []string{"cooking"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := chatTurn(t, s, `{"thread_id":"`+c.thread+`",`+question+`}`)
			searches := c.searched != nil
			if slices.Contains(out.Route, chat.RouteVectorSearch) != searches || (out.VSMetadata != nil) != searches {
				t.Fatalf("route %v, vs_metadata %+v; want a search: %v", out.Route, out.VSMetadata, searches)
			}
			if searches && (!slices.Equal(out.VSMetadata.SearchedStores, c.searched) || out.VSMetadata.NumDocuments != c.documents) {
				t.Errorf("vs_metadata %+v, want stores %v and %d documents", out.VSMetadata, c.searched, c.documents)
			}
		})
	}
}

// modelRequest is what a chat turn sent the model.
type modelRequest struct {
	System, Model string
	Temperature   *float64
}

// modelRecorder is an OpenAI-compatible model that answers "ok" and
// records every request.
type modelRecorder struct {
	mu       sync.Mutex
	requests []modelRequest
}

func (m *modelRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model       string   `json:"model"`
		Temperature *float64 `json:"temperature"`
		Messages    []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	got := modelRequest{Model: req.Model, Temperature: req.Temperature}
	for _, msg := range req.Messages {
		if msg.Role == "system" {
			got.System = msg.Content
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, got)
	m.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
}

func (m *modelRecorder) last() modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return modelRequest{}
	}
	return m.requests[len(m.requests)-1]
}

// recordedModel returns a generator answering with gpt-4o-mini, gpt-4o
// allowed, at a modelRecorder.
func recordedModel(t *testing.T) (provider.Generator, *modelRecorder) {
	t.Helper()
	model := &modelRecorder{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	client, err := openai.NewClient(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	small, err := openai.NewGenerator(client, "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	big, err := openai.NewGenerator(client, "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	return provider.WithGenerators(small, "gpt-4o-mini", map[string]provider.Generator{"gpt-4o": big}), model
}

func TestAPromptOverrideReachesTheModelOnTheNextTurn(t *testing.T) {
	gen, model := recordedModel(t)
	s := newStack(t, gen)
	const pirate = "You are a pirate. Answer in pirate speech."

	chatTurn(t, s, `{"thread_id":"t1","message":"hello"}`)
	if got := model.last().System; got == "" || got == pirate {
		t.Fatalf("system prompt before the override %q, want the default", got)
	}
	call(t, s, "prompt_override_set", `{"name":"optimizer_tools-default","text":"`+pirate+`"}`)
	chatTurn(t, s, `{"thread_id":"t1","message":"hello again"}`)
	if got := model.last().System; got != pirate {
		t.Errorf("system prompt after the override %q, want %q", got, pirate)
	}
}

func TestAThreadsModelOptionsReachTheModel(t *testing.T) {
	gen, model := recordedModel(t)
	s := newStack(t, gen)
	call(t, s, "settings_update", `{"thread_id":"big","model":{"generator":"gpt-4o","temperature":0.7}}`)
	for _, c := range []struct {
		name, args  string
		model       string
		temperature float64
	}{
		{"AThreadNeverConfiguredHasTheDefaults", `{"thread_id":"plain","message":"hello"}`, "gpt-4o-mini", 0.2},
		{"AThreadsModelAndTemperatureAreUsed", `{"thread_id":"big","message":"hello"}`, "gpt-4o", 0.7},
		{"TheRequestsOwnTakePrecedence", `{"thread_id":"big","message":"hello","model":"gpt-4o-mini","temperature":1}`, "gpt-4o-mini", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			chatTurn(t, s, c.args)
			if got := model.last(); got.Model != c.model || got.Temperature == nil || *got.Temperature != c.temperature {
				t.Errorf("model got %+v, want %s at temperature %v", got, c.model, c.temperature)
			}
		})
	}
}

// duckDuckGo points d's web search at a local stand-in of DuckDuckGo's HTML
// endpoint answering every search with package duckduckgo's results page,
// opened as config/search opens it on a laptop; searches counts the searches.
func duckDuckGo(t *testing.T, searches *atomic.Int64) func(*lambdafn.Deps) {
	page, err := os.ReadFile("../../websearch/duckduckgo/testdata/results.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		searches.Add(1)
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return func(d *lambdafn.Deps) {
		cfg := config.Config{WebSearch: config.WebSearch{DuckDuckGoURL: srv.URL + "/html/", AllowedHosts: "127.0.0.1", AllowHTTP: true}}
		if err := search.Open(context.Background(), &cfg, d); err != nil {
			t.Fatal(err)
		}
	}
}

// Offline, a question with a web search trigger word is routed by code to
// the web_search tool, which searches DuckDuckGo; a thread with Web Search
// off searches its documents instead.
func TestAnOfflineTurnWithTriggerWordsSearchesTheWeb(t *testing.T) {
	var searches atomic.Int64
	s := newStack(t, offline.NewGenerator(), duckDuckGo(t, &searches))
	call(t, s, "settings_update", `{"thread_id":"no-web","tools_enabled":["Vector Search","Connectors"]}`)
	const question = `"message":"What is the latest news on golang generics?"`

	out := chatTurn(t, s, `{"thread_id":"web",`+question+`}`)
	if !slices.Equal(out.Route, []string{chat.RouteTools, chat.RouteAnswer}) || searches.Load() != 1 ||
		!strings.Contains(out.Answer, "web_search") || !strings.Contains(out.Answer, "https://go.dev/doc/tutorial/generics") {
		t.Errorf("route %v after %d searches, answer %q: want the web_search tool's results", out.Route, searches.Load(), out.Answer)
	}
	out = chatTurn(t, s, `{"thread_id":"no-web",`+question+`}`)
	if slices.Contains(out.Route, chat.RouteTools) || searches.Load() != 1 {
		t.Errorf("route %v after %d searches: a thread with Web Search off searched the web", out.Route, searches.Load())
	}
}

// countingGenerator is the offline generator, counting the generations of
// each task; it cannot call tools, so a turn's route is chosen by code.
type countingGenerator struct {
	provider.Generator
	mu    sync.Mutex
	tasks map[provider.Task]int
}

func (g *countingGenerator) Generate(ctx context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	g.mu.Lock()
	g.tasks[req.Task]++
	g.mu.Unlock()
	return g.Generator.Generate(ctx, req)
}

func (g *countingGenerator) count(task provider.Task) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tasks[task]
}

// A thread with grading off keeps its documents without the grade step
// running: no generation is spent grading them, and vs_metadata says the
// grade was skipped.
func TestAThreadWithGradingOffNeverRunsTheGradeStep(t *testing.T) {
	gen := &countingGenerator{Generator: offline.NewGenerator(), tasks: map[provider.Task]int{}}
	s := newStack(t, gen)
	call(t, s, "settings_update", `{"thread_id":"ungraded","vector_search":{"grade":false}}`)
	const question = `"message":"How often should I replace my toothbrush?"`
	for _, c := range []struct {
		thread  string
		grades  int
		skipped bool
	}{
		{"graded", 1, false},
		{"ungraded", 0, true},
	} {
		t.Run(c.thread, func(t *testing.T) {
			before := gen.count(provider.TaskGrade)
			out := chatTurn(t, s, `{"thread_id":"`+c.thread+`",`+question+`}`)
			if grades := gen.count(provider.TaskGrade) - before; grades != c.grades {
				t.Errorf("the turn graded %d times, want %d", grades, c.grades)
			}
			if out.VSMetadata == nil || out.VSMetadata.NumDocuments != 1 || out.VSMetadata.GradeSkipped != c.skipped || len(out.VSMetadata.Degraded) != 0 {
				t.Errorf("vs_metadata %+v, want 1 document, grade_skipped %v, nothing degraded", out.VSMetadata, c.skipped)
			}
		})
	}
}
