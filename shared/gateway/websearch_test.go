package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

// searches counts the searches that reached the harnesses' DuckDuckGo stand-in.
var searches atomic.Int64

// webSearchDeps gives d the web search backends, DuckDuckGo at a local
// stand-in that answers every search with package duckduckgo's results
// page, opened as config/search opens them on a laptop.
func webSearchDeps(t testing.TB, d *lambdafn.Deps) {
	t.Helper()
	page, err := os.ReadFile("../websearch/duckduckgo/testdata/results.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		searches.Add(1)
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	cfg := config.Config{WebSearch: config.WebSearch{DuckDuckGoURL: srv.URL + "/html/", AllowedHosts: "127.0.0.1", AllowHTTP: true}}
	if err := search.Open(context.Background(), &cfg, d); err != nil {
		t.Fatal(err)
	}
}

// seedText is seed 004's answer to its search for the stand-in's page.
const seedText = "Title: Tutorial: Getting started with generics - The Go Programming Language\n" +
	"Content: This tutorial introduces the basics of generics in Go. With generics, you can declare and use functions or types that are written to work with any of a set of types provided by calling code.\n" +
	"Link: https://go.dev/doc/tutorial/generics\n---\n" +
	"Title: An Introduction To Generics & Type Parameters\n" +
	"Content: The Go 1.18 release adds support for generics. Generics are the biggest change we've made to Go since the first open source release.\n" +
	"Link: https://go.dev/blog/intro-generics?utm_source=x&lang=en\n---\n" +
	"Title: constraints package - golang.org/x/exp/constraints\n" +
	"Content: Package constraints defines a set of useful constraints to be used with type parameters.\n" +
	"Link: https://pkg.go.dev/golang.org/x/exp/constraints\n---"

func TestAnMCPClientSearchesTheWeb(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for _, tl := range tools.Tools {
		listed[tl.Name] = tl
	}
	if ddg := listed["duckduckgo_search"]; ddg == nil || !strings.HasPrefix(ddg.Description, "Search using DuckDuckGo (free, unlimited, privacy-focused).") || listed["web_search"] == nil {
		t.Fatalf("tools/list lacks duckduckgo_search as seed 004 described it, or web_search")
	}
	res := call(t, cs, "duckduckgo_search", map[string]any{"query": "golang generics"})
	if res.IsError || text(res) != seedText {
		t.Fatalf("duckduckgo_search answered %q (error %v), want seed 004's text:\n%s", text(res), res.IsError, seedText)
	}
	before := searches.Load()
	out := mustCall(t, cs, "web_search", map[string]any{"query": "golang generics", "max_results": 2, "region": "us-en"})
	results, _ := out["results"].([]any)
	if out["backend"] != "duckduckgo" || out["cached"] != false || len(results) != 2 || searches.Load() != before+1 {
		t.Fatalf("web_search = %v, want 2 fresh results from duckduckgo", out)
	}
	first, _ := results[0].(map[string]any)
	if first["url"] != "https://go.dev/doc/tutorial/generics" || first["source"] != "duckduckgo" {
		t.Errorf("first result %v, want the unwrapped link to the tutorial, from duckduckgo", first)
	}
	if again := mustCall(t, cs, "web_search", map[string]any{"query": "golang generics", "max_results": 2, "region": "us-en"}); again["cached"] != true || searches.Load() != before+1 {
		t.Errorf("the same search again: cached %v after %d searches, want the cached answer", again["cached"], searches.Load()-before)
	}
	bad := call(t, cs, "web_search", map[string]any{"query": "go", "safe_search": "none"})
	if !bad.IsError || !strings.Contains(text(bad), "safe_search") {
		t.Errorf("web_search with an unknown safe_search = %q, want an error naming it", text(bad))
	}
}

func TestTheCompatibilityEndpointServesDuckDuckGoSearchAsSeed004Did(t *testing.T) {
	h := newHarness(t, nil)
	list := post(t, h.url+"/jsonrpc", nil, `{"jsonrpc":"2.0","id":12,"method":"tool-server/tools/list"}`)
	if !strings.Contains(list.body, `"name":"duckduckgo_search"`) {
		t.Fatalf("tool-server/tools/list = %s, want duckduckgo_search", list.body)
	}
	got := post(t, h.url+"/jsonrpc", nil, `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"duckduckgo_search","arguments":{"query":"sâu răng nguyên nhân"}},"id":13}`)
	var answer struct {
		Result struct {
			Content []struct{ Type, Text string } `json:"content"`
		} `json:"result"`
		ID int `json:"id"`
	}
	if err := json.Unmarshal([]byte(got.body), &answer); err != nil || answer.ID != 13 || len(answer.Result.Content) != 1 {
		t.Fatalf("tool-server/tools/call = %d %s, want one text content", got.status, got.body)
	}
	if c := answer.Result.Content[0]; c.Type != "text" || c.Text != seedText {
		t.Errorf("content %+v, want seed 004's text", c)
	}
	empty := post(t, h.url+"/jsonrpc", nil, `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"duckduckgo_search","arguments":{"query":" "}},"id":14}`)
	if !strings.Contains(empty.body, `"code":-32602`) || !strings.Contains(empty.body, "query") {
		t.Errorf("an empty query = %s, want invalid params naming query", empty.body)
	}
}
