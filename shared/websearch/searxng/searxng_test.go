package searxng_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/websearch"
	"github.com/switchboard-dev/switchboard/shared/websearch/searxng"
)

// server answers as a SearXNG instance under /searx does: status and the
// fixture for the JSON format, 403 for any other.
func server(t *testing.T, status int, fixture string, header http.Header) *searxng.Backend {
	t.Helper()
	var body []byte
	if fixture != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", fixture)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/searx/search" || q.Get("q") != "golang generics" || q.Get("language") != "de-DE" || q.Get("safesearch") != "0" {
			t.Errorf("request %s, want /searx/search with q, language and safesearch", r.URL)
		}
		if q.Get("format") != "json" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	b, err := searxng.New(srv.URL+"/searx/", (&netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}).Client(0))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var query = websearch.Query{Text: "golang generics", Max: websearch.MaxResults, Region: "de-de", Safe: websearch.SafeOff}

func TestSearchReadsTheResults(t *testing.T) {
	got, err := server(t, http.StatusOK, "search.json", nil).Search(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	want := []websearch.Result{
		{Title: "Tutorial: Getting started with generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "This tutorial introduces the basics of generics in Go."},
		{Title: "An Introduction To Generics", URL: "https://go.dev/blog/intro-generics", Snippet: "The Go 1.18 release adds support for generics."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchReportsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		fixture string
		header  http.Header
		kind    fault.Kind
		says    string
		retry   time.Duration
	}{
		{"an instance without the json format says so", http.StatusForbidden, "", nil, fault.KindUnavailable, "json format", 0},
		{"a 429 says when to retry", http.StatusTooManyRequests, "", http.Header{"Retry-After": {"7"}}, fault.KindRateLimited, "HTTP 429", 7 * time.Second},
		{"an answer that is not its JSON is unavailable", http.StatusOK, "", nil, fault.KindUnavailable, "not its JSON", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server(t, tc.status, tc.fixture, tc.header).Search(context.Background(), query)
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Search = %v (kind %s); want kind %s saying %q", err, fault.KindOf(err), tc.kind, tc.says)
			}
			if got, _ := fault.RetryAfter(err); got != tc.retry {
				t.Errorf("retry after %v, want %v", got, tc.retry)
			}
		})
	}
}

func TestNewRequiresABaseURL(t *testing.T) {
	for _, base := range []string{"", "searx.example.org", "ftp://searx.example.org"} {
		if _, err := searxng.New(base, http.DefaultClient); err == nil {
			t.Errorf("New(%q) succeeded", base)
		}
	}
}
