package websearch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/websearch"
	"github.com/switchboard-dev/switchboard/shared/websearch/duckduckgo"
	"github.com/switchboard-dev/switchboard/shared/websearch/searxng"
)

var client = (&netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}).Client(0)

// ddg is a DuckDuckGo HTML endpoint answering every search with status and
// page, counting the searches it was sent.
type ddg struct {
	status   int
	page     []byte
	searches atomic.Int64
}

func newDDG(t *testing.T, status int, page string) (*ddg, *duckduckgo.Backend) {
	t.Helper()
	d := &ddg{status: status}
	if page != "" {
		var err error
		if d.page, err = os.ReadFile("duckduckgo/testdata/" + page); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.searches.Add(1)
		w.WriteHeader(d.status)
		w.Write(d.page)
	}))
	t.Cleanup(srv.Close)
	return d, duckduckgo.New(srv.URL+"/html/", client)
}

// searx is a SearXNG instance answering every search with one result that
// names the query.
func searx(t *testing.T) *searxng.Backend {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"results":[{"title":"About %s","url":"https://example.org/","content":"searx"}]}`, r.URL.Query().Get("q"))
	}))
	t.Cleanup(srv.Close)
	b, err := searxng.New(srv.URL, client)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func caller() tenant.Caller {
	return tenant.Caller{Tenant: fmt.Sprintf("ws-%x", rand.Uint32()), Principal: "tester"}
}

func TestSearchCachesPerTenant(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, table store.Table) {
		d, b := newDDG(t, http.StatusOK, "results.html")
		svc := websearch.New(table, &websearch.Options{Backends: []websearch.Backend{b}})
		ctx := context.Background()
		alice, bob := caller(), caller()
		first, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "golang generics", MaxResults: 2})
		if err != nil {
			t.Fatal(err)
		}
		if first.Cached || first.Backend != "duckduckgo" || len(first.Results) != 2 || d.searches.Load() != 1 {
			t.Fatalf("first search: %+v after %d searches; want 2 fresh results from duckduckgo after 1", first, d.searches.Load())
		}
		// The same query, spelt otherwise and asking for more, is the same entry.
		again, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "  Golang   GENERICS ", MaxResults: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !again.Cached || len(again.Results) != 3 || d.searches.Load() != 1 {
			t.Fatalf("second search: cached %v, %d results after %d searches; want 3 cached results after 1", again.Cached, len(again.Results), d.searches.Load())
		}
		if diff := cmp.Diff(first.Results, again.Results[:2]); diff != "" {
			t.Errorf("cached results mismatch (-fresh +cached):\n%s", diff)
		}
		// Another tenant's search never reads alice's entry.
		other, err := svc.Search(ctx, bob, websearch.SearchInput{Query: "golang generics"})
		if err != nil {
			t.Fatal(err)
		}
		if other.Cached || d.searches.Load() != 2 {
			t.Fatalf("bob's search: cached %v after %d searches; want a search of his own", other.Cached, d.searches.Load())
		}
		// Other options are other entries.
		if out, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "golang generics", Region: "de-de"}); err != nil || out.Cached {
			t.Fatalf("a search in another region: cached %v, %v; want a fresh one", out.Cached, err)
		}
	})
}

func TestSearchCacheExpires(t *testing.T) {
	now := time.Now()
	d, b := newDDG(t, http.StatusOK, "results.html")
	svc := websearch.New(storetest.OpenEmbedded(t), &websearch.Options{Backends: []websearch.Backend{b}, CacheTTL: time.Minute, Now: func() time.Time { return now }})
	c := caller()
	for _, step := range []struct {
		after  time.Duration
		cached bool
	}{{0, false}, {30 * time.Second, true}, {2 * time.Minute, false}} {
		now = now.Add(step.after)
		out, err := svc.Search(context.Background(), c, websearch.SearchInput{Query: "golang"})
		if err != nil || out.Cached != step.cached {
			t.Fatalf("after %v: cached %v, %v; want cached %v (%d searches)", step.after, out.Cached, err, step.cached, d.searches.Load())
		}
	}
}

func TestSearchRateLimitsEachTenantsOutboundSearches(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, table store.Table) {
		d, b := newDDG(t, http.StatusOK, "results.html")
		now := time.Now()
		svc := websearch.New(table, &websearch.Options{Backends: []websearch.Backend{b}, Now: func() time.Time { return now },
			Rate: ratelimit.Rate{PerSecond: 1.0 / 60, Burst: 2}})
		ctx := context.Background()
		alice, bob := caller(), caller()
		for i := range 2 {
			if _, err := svc.Search(ctx, alice, websearch.SearchInput{Query: fmt.Sprint("query ", i)}); err != nil {
				t.Fatalf("search %d within the burst: %v", i, err)
			}
		}
		_, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "one too many"})
		if fault.KindOf(err) != fault.KindRateLimited || !strings.Contains(err.Error(), "web search rate limit") {
			t.Fatalf("third search = %v, want the web search rate limit", err)
		}
		if wait, _ := fault.RetryAfter(err); wait < 50*time.Second || wait > 61*time.Second {
			t.Errorf("retry after %v, want about a minute", wait)
		}
		if got := d.searches.Load(); got != 2 {
			t.Errorf("%d searches reached the backend, want 2", got)
		}
		// A cached answer costs nothing, and another tenant has its own budget.
		if _, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "query 0"}); err != nil {
			t.Errorf("a cached search was refused: %v", err)
		}
		if _, err := svc.Search(ctx, bob, websearch.SearchInput{Query: "one too many"}); err != nil {
			t.Errorf("bob's first search was refused: %v", err)
		}
		now = now.Add(time.Minute)
		if _, err := svc.Search(ctx, alice, websearch.SearchInput{Query: "one too many"}); err != nil {
			t.Errorf("a search a minute later was refused: %v", err)
		}
	})
}

func TestSearchFallsToTheNextBackend(t *testing.T) {
	table := storetest.OpenEmbedded(t)
	_, blocked := newDDG(t, http.StatusAccepted, "")
	svc := websearch.New(table, &websearch.Options{Backends: []websearch.Backend{blocked, searx(t)}})
	out, err := svc.Search(context.Background(), caller(), websearch.SearchInput{Query: "golang"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Backend != "searxng" || len(out.Results) != 1 || out.Results[0].Source != "searxng" || len(out.Skipped) != 1 || !strings.Contains(out.Skipped[0], "duckduckgo blocked") {
		t.Errorf("Search = %+v; want searxng's result, duckduckgo skipped as blocked", out)
	}
	// Named, the blocked backend is the answer.
	_, err = svc.Search(context.Background(), caller(), websearch.SearchInput{Query: "golang", Backend: "duckduckgo"})
	if !errors.Is(err, websearch.ErrBlocked) {
		t.Errorf("Search on duckduckgo = %v, want blocked", err)
	}
	// Every backend failing says why each did.
	_, blocked2 := newDDG(t, http.StatusForbidden, "")
	svc = websearch.New(table, &websearch.Options{Backends: []websearch.Backend{blocked, blocked2}})
	if _, err := svc.Search(context.Background(), caller(), websearch.SearchInput{Query: "golang"}); fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "every web search backend failed") {
		t.Errorf("Search = %v, want every backend's failure", err)
	}
}

func TestSearchRefusesBadInputNamingTheField(t *testing.T) {
	d, b := newDDG(t, http.StatusOK, "results.html")
	svc := websearch.New(storetest.OpenEmbedded(t), &websearch.Options{Backends: []websearch.Backend{b}})
	for _, tc := range []struct {
		name  string
		in    websearch.SearchInput
		field string
	}{
		{"an empty query", websearch.SearchInput{Query: "  "}, "query"},
		{"a query over the limit", websearch.SearchInput{Query: strings.Repeat("é", websearch.MaxQueryChars+1)}, "query"},
		{"too many results", websearch.SearchInput{Query: "go", MaxResults: websearch.MaxResults + 1}, "max_results"},
		{"a region that is none", websearch.SearchInput{Query: "go", Region: "USA"}, "region"},
		{"an unknown safe-search level", websearch.SearchInput{Query: "go", SafeSearch: "none"}, "safe_search"},
		{"a backend not configured", websearch.SearchInput{Query: "go", Backend: "brave"}, "backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Search(context.Background(), caller(), tc.in)
			if e, ok := errors.AsType[*fault.Error](err); !ok || e.Kind != fault.KindInvalid || e.Field != tc.field {
				t.Errorf("Search = %v, want an invalid %s", err, tc.field)
			}
		})
	}
	if n := d.searches.Load(); n != 0 {
		t.Errorf("%d searches went out for bad input", n)
	}
}

func TestDuckDuckGoWritesSeed004sText(t *testing.T) {
	_, b := newDDG(t, http.StatusOK, "results.html")
	svc := websearch.New(storetest.OpenEmbedded(t), &websearch.Options{Backends: []websearch.Backend{b}})
	out, err := svc.DuckDuckGo(context.Background(), caller(), websearch.DuckDuckGoInput{Query: "golang generics"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Title: Tutorial: Getting started with generics - The Go Programming Language\n" +
		"Content: This tutorial introduces the basics of generics in Go. With generics, you can declare and use functions or types that are written to work with any of a set of types provided by calling code.\n" +
		"Link: https://go.dev/doc/tutorial/generics\n---\n" +
		"Title: An Introduction To Generics & Type Parameters\n" +
		"Content: The Go 1.18 release adds support for generics. Generics are the biggest change we've made to Go since the first open source release.\n" +
		"Link: https://go.dev/blog/intro-generics?utm_source=x&lang=en\n---\n" +
		"Title: constraints package - golang.org/x/exp/constraints\n" +
		"Content: Package constraints defines a set of useful constraints to be used with type parameters.\n" +
		"Link: https://pkg.go.dev/golang.org/x/exp/constraints\n---"
	if diff := cmp.Diff(want, out.Text()); diff != "" {
		t.Errorf("text mismatch (-want +got):\n%s", diff)
	}
	svc = websearch.New(storetest.OpenEmbedded(t), &websearch.Options{Backends: []websearch.Backend{searx(t)}})
	if _, err := svc.DuckDuckGo(context.Background(), caller(), websearch.DuckDuckGoInput{Query: "go"}); fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "not configured") {
		t.Errorf("DuckDuckGo without its backend = %v, want it named as not configured", err)
	}
}

func TestCleanBoundsResults(t *testing.T) {
	long := strings.Repeat("a ", websearch.MaxSnippetChars)
	in := []websearch.Result{
		{Title: "  spaced\n  title ", URL: "https://a.example/", Snippet: long},
		{Title: "duplicate", URL: "https://a.example/"},
		{Title: "", URL: "https://b.example/"},
		{Title: "no web link", URL: "javascript:alert(1)"},
		{Title: "long link", URL: "https://c.example/" + strings.Repeat("x", websearch.MaxURLBytes)},
		{Title: "kept", URL: "http://d.example/"},
		{Title: "over the max", URL: "http://e.example/"},
	}
	got := websearch.Clean(in, "x", 2)
	if len(got) != 2 || got[0].Title != "spaced title" || got[1].Title != "kept" || got[0].Source != "x" {
		t.Fatalf("Clean = %+v", got)
	}
	if n := len([]rune(got[0].Snippet)); n != websearch.MaxSnippetChars {
		t.Errorf("snippet of %d characters, want %d", n, websearch.MaxSnippetChars)
	}
}
