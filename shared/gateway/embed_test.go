package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai/openaitest"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// paraphrase names what web_search does in words no tool's text holds: only
// an embedding finds web_search by it.
const paraphrase = "look things up online"

// meaningEmbedder is a hosted embedding model's stand-in that knows one
// meaning: the paraphrase's and web_search's texts point one way, every
// other text another.
func meaningEmbedder(t *testing.T, calls *atomic.Int64) *openaitest.Server {
	return openaitest.New(t, openaitest.Handlers{Embed: func(text string) []float32 {
		calls.Add(1)
		if text == paraphrase || strings.HasPrefix(text, "web search\n") {
			return []float32{1, 0}
		}
		return []float32{0, 1}
	}})
}

// searchHarness serves the gateway over the in-process stack whose
// functions embed with embedder (nil: the function has none), the gateway
// embedding through vector_embed_texts if viaFunction.
func searchHarness(t *testing.T, deps lambdafn.Deps, viaFunction bool) *harness {
	t.Helper()
	return newHarnessWith(t, deps, func(o *gateway.Options) { o.ToolEmbedFunction = viaFunction })
}

func TestToolSearchFindsAToolByMeaningThroughTheEmbedFunction(t *testing.T) {
	for _, tc := range []struct {
		name        string
		viaFunction bool
		wantFirst   bool
	}{
		{"with the embed function, the paraphrase finds web_search first", true, true},
		{"without it, BM25 alone does not", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := meaningEmbedder(t, &calls)
			h := searchHarness(t, lambdafn.Deps{Embedder: srv.Embedder(t, "text-embedding-3-small", 2)}, tc.viaFunction)
			cs := h.connect(t, "", nil)
			out := mustCall(t, cs, gateway.ToolSearchName, map[string]any{"query": paraphrase, "k": 3})
			tools, _ := out["tools"].([]any)
			first := ""
			if len(tools) > 0 {
				first, _ = tools[0].(map[string]any)["name"].(string)
			}
			if got := first == "web_search"; got != tc.wantFirst {
				t.Errorf("first tool found = %q (of %v), want web_search first: %v", first, out["tools"], tc.wantFirst)
			}
			if embedded := calls.Load() > 0; embedded != tc.viaFunction {
				t.Errorf("the model embedded %d texts", calls.Load())
			}
			if out["ranking"] != nil {
				t.Errorf("ranking = %v, want none (embeddings ranked)", out["ranking"])
			}
		})
	}
}

func TestToolSearchFallsBackToBM25WhenTheEmbedFunctionFails(t *testing.T) {
	// The stack's embedder fails every call: its function answers an error.
	failing := openaitest.New(t, openaitest.Handlers{Embed: func(string) []float32 { return nil }})
	h := searchHarness(t, lambdafn.Deps{Embedder: failing.Embedder(t, "text-embedding-3-small", 2)}, true)
	cs := h.connect(t, "", nil)
	res := call(t, cs, gateway.ToolSearchName, map[string]any{"query": "add a message to a conversation"})
	if res.IsError {
		t.Fatalf("tool_search = error %s, want BM25's ranking", text(res))
	}
	if !strings.Contains(text(res), "BM25 alone") || !strings.Contains(text(res), "memory_add_message") {
		t.Errorf("tool_search says %q, want BM25's ranking, saying so", text(res))
	}
}

func TestTheEmbedFunctionAnswersBoundedBatchesAndRefusesOversizedOnes(t *testing.T) {
	inv := stack(t, lambdafn.Deps{Table: storetest.OpenEmbedded(t), Embedder: offline.NewEmbedder(offline.DefaultDims)})
	t.Cleanup(func() { inv.Close() })
	fn := mustTool(t, catalog.EmbedTextsTool).Function
	many := make([]string, provider.MaxEmbedTexts+1)
	for i := range many {
		many[i] = "text"
	}
	for _, tc := range []struct {
		name      string
		texts     []string
		wantField string // empty: embedded
	}{
		{"a full batch is embedded", many[:provider.MaxEmbedTexts], ""},
		{"one text too many is refused, naming texts", many, "texts"},
		{"a text too long is refused, naming texts", []string{strings.Repeat("a", provider.MaxEmbedTextBytes+1)}, "texts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]any{"texts": tc.texts})
			resp, err := inv.Invoke(context.Background(), fn, &invoke.Request{Method: invoke.MethodCallTool, Tool: catalog.EmbedTextsTool,
				Arguments: args, Caller: tenant.Caller{Tenant: "acme", Principal: "gateway"}, RequestID: "r1", TraceID: "t1"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantField != "" {
				if resp.Error == nil || resp.Error.Kind != string(fault.KindInvalid) || !strings.Contains(resp.Error.Field+resp.Error.Message, tc.wantField) {
					t.Fatalf("embed_texts = %+v, %s, want invalid %s", resp.Error, resp.Result, tc.wantField)
				}
				return
			}
			var res struct {
				StructuredContent provider.TextsOutput `json:"structuredContent"`
			}
			if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || len(res.StructuredContent.Vectors) != len(tc.texts) || res.StructuredContent.Model == "" {
				t.Errorf("embed_texts = %+v, %.200s, want %d vectors and the model", resp.Error, resp.Result, len(tc.texts))
			}
		})
	}
}
