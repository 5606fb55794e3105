package brave_test

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
	"github.com/switchboard-dev/switchboard/shared/websearch/brave"
)

const key = "BSA-test-key"

// server answers as the Brave Search API does: status and the fixture,
// 401 to a request without the key.
func server(t *testing.T, status int, fixture string, header http.Header) *brave.Backend {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" || q.Get("q") != "golang generics" ||
			q.Get("count") != "20" || q.Get("country") != "US" || q.Get("search_lang") != "en" || q.Get("safesearch") != "strict" {
			t.Errorf("request %s %s, want the web search endpoint with q, count, country, search_lang and safesearch", r.Method, r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	b, err := brave.New(srv.URL+"/res/v1/web/search", key, (&netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}).Client(0))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var query = websearch.Query{Text: "golang generics", Max: websearch.MaxResults, Region: "us-en", Safe: websearch.SafeStrict}

func TestSearchReadsTheWebResults(t *testing.T) {
	got, err := server(t, http.StatusOK, "web.json", nil).Search(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	want := []websearch.Result{
		{Title: "Tutorial: Getting started with generics - The Go Programming Language", URL: "https://go.dev/doc/tutorial/generics",
			Snippet: "This tutorial introduces the basics of generics in Go."},
		{Title: "An Introduction To Generics - The Go Programming Language", URL: "https://go.dev/blog/intro-generics",
			Snippet: "The Go 1.18 release adds support for generics."},
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
		{"a refused key says so", http.StatusUnauthorized, "unauthorized.json", nil, fault.KindUnavailable, "refused the API key (HTTP 401)", 0},
		{"a 429 says when to retry", http.StatusTooManyRequests, "ratelimited.json", http.Header{"Retry-After": {"1"}}, fault.KindRateLimited, "HTTP 429", time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := server(t, tc.status, tc.fixture, tc.header)
			_, err := b.Search(context.Background(), query)
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Search = %v (kind %s); want kind %s saying %q", err, fault.KindOf(err), tc.kind, tc.says)
			}
			if got, _ := fault.RetryAfter(err); got != tc.retry {
				t.Errorf("retry after %v, want %v", got, tc.retry)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestSearchWithAWrongKeyIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	b, err := brave.New(srv.URL, "wrong", (&netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}).Client(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Search(context.Background(), query); fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("Search = %v, want the key refused", err)
	}
}

func TestNewRequiresAKey(t *testing.T) {
	if _, err := brave.New("", " ", http.DefaultClient); err == nil {
		t.Fatal("New accepted no key")
	}
}
