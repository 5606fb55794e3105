package chatfn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
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
func newStack(t *testing.T, gen provider.Generator) *local.Stack {
	t.Helper()
	deps := lambdafn.Deps{Table: storetest.OpenEmbedded(t), Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: gen}
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
	call(t, s, "settings_update", `{"thread_id":"no-vs","tools_enabled":["Connectors","Web Search"]}`)
	for _, c := range []struct {
		name, thread string
		searches     bool
	}{
		{"AThreadNeverConfiguredSearchesTheDocuments", "defaults", true},
		{"AThreadWithVectorSearchOffDoesNotSearch", "no-vs", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := chatTurn(t, s, `{"thread_id":"`+c.thread+`",`+question+`}`)
			if slices.Contains(out.Route, chat.RouteVectorSearch) != c.searches || (out.VSMetadata != nil) != c.searches {
				t.Errorf("route %v, vs_metadata %+v; searches = %v", out.Route, out.VSMetadata, c.searches)
			}
		})
	}
}

// systemRecorder is an OpenAI-compatible model that answers "ok" and
// records the system prompt of every request.
type systemRecorder struct {
	mu      sync.Mutex
	systems []string
}

func (m *systemRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	m.mu.Lock()
	for _, msg := range req.Messages {
		if msg.Role == "system" {
			m.systems = append(m.systems, msg.Content)
		}
	}
	m.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
}

func (m *systemRecorder) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.systems) == 0 {
		return ""
	}
	return m.systems[len(m.systems)-1]
}

func TestAPromptOverrideReachesTheModelOnTheNextTurn(t *testing.T) {
	model := &systemRecorder{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	client, err := openai.NewClient(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := openai.NewGenerator(client, "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t, gen)
	const pirate = "You are a pirate. Answer in pirate speech."

	chatTurn(t, s, `{"thread_id":"t1","message":"hello"}`)
	if got := model.last(); got == "" || got == pirate {
		t.Fatalf("system prompt before the override %q, want the default", got)
	}
	call(t, s, "prompt_override_set", `{"name":"optimizer_tools-default","text":"`+pirate+`"}`)
	chatTurn(t, s, `{"thread_id":"t1","message":"hello again"}`)
	if got := model.last(); got != pirate {
		t.Errorf("system prompt after the override %q, want %q", got, pirate)
	}
}
