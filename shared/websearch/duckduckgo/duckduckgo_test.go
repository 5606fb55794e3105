package duckduckgo_test

import (
	"context"
	"errors"
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
	"github.com/switchboard-dev/switchboard/shared/websearch/duckduckgo"
)

// server answers every search with status and the fixture page, after
// checking that the request is the form the HTML endpoint takes.
func server(t *testing.T, status int, page string, header http.Header) *duckduckgo.Backend {
	t.Helper()
	var body []byte
	if page != "" {
		var err error
		if body, err = os.ReadFile(filepath.Join("testdata", page)); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			t.Errorf("request %s with Content-Type %q, want a form POST", r.Method, r.Header.Get("Content-Type"))
		}
		if got := r.PostFormValue("q"); got != "golang generics" {
			t.Errorf("q = %q", got)
		}
		if got := r.PostFormValue("kl") + " " + r.PostFormValue("kp"); got != "us-en -1" {
			t.Errorf("kl kp = %q, want us-en -1", got)
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	client := (&netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}).Client(0)
	return duckduckgo.New(srv.URL+"/html/", client)
}

var query = websearch.Query{Text: "golang generics", Max: websearch.MaxResults, Region: "us-en", Safe: websearch.SafeModerate}

func TestSearchReadsResultsSkippingAdsAndUnwrappingRedirects(t *testing.T) {
	b := server(t, http.StatusOK, "results.html", nil)
	got, err := b.Search(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	want := []websearch.Result{
		{Title: "Tutorial: Getting started with generics - The Go Programming Language", URL: "https://go.dev/doc/tutorial/generics",
			Snippet: "This tutorial introduces the basics of generics in Go. With generics, you can declare and use functions or types that are written to work with any of a set of types provided by calling code.", Source: "duckduckgo"},
		{Title: "An Introduction To Generics & Type Parameters", URL: "https://go.dev/blog/intro-generics?utm_source=x&lang=en",
			Snippet: "The Go 1.18 release adds support for generics. Generics are the biggest change we've made to Go since the first open source release.", Source: "duckduckgo"},
		{Title: "constraints package - golang.org/x/exp/constraints", URL: "https://pkg.go.dev/golang.org/x/exp/constraints",
			Snippet: "Package constraints defines a set of useful constraints to be used with type parameters.", Source: "duckduckgo"},
	}
	if diff := cmp.Diff(want, websearch.Clean(got, duckduckgo.Name, 10)); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchStopsAtTheResultsAskedFor(t *testing.T) {
	q := query
	q.Max = 1
	got, err := server(t, http.StatusOK, "results.html", nil).Search(context.Background(), q)
	if err != nil || len(got) != 1 || got[0].URL != "https://go.dev/doc/tutorial/generics" {
		t.Fatalf("Search = %v, %v; want the first result alone", got, err)
	}
}

func TestSearchWithNoResultsIsEmptyNotAnError(t *testing.T) {
	got, err := server(t, http.StatusOK, "noresults.html", nil).Search(context.Background(), query)
	if err != nil || len(got) != 0 {
		t.Fatalf("Search = %v, %v; want no results and no error", got, err)
	}
}

func TestSearchReportsRefusalsClearly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		page    string
		header  http.Header
		kind    fault.Kind
		blocked bool
		says    string
		retry   time.Duration
	}{
		{"an anomaly page is blocked", http.StatusOK, "anomaly.html", nil, fault.KindUnavailable, true, "anomaly page", 0},
		{"an empty page is blocked", http.StatusOK, "empty.html", nil, fault.KindUnavailable, true, "empty page", 0},
		{"a 202 is blocked", http.StatusAccepted, "anomaly.html", nil, fault.KindUnavailable, true, "HTTP Accepted", 0},
		{"a 403 is blocked", http.StatusForbidden, "", nil, fault.KindUnavailable, true, "HTTP Forbidden", 0},
		{"a 429 says when to retry, in seconds", http.StatusTooManyRequests, "", http.Header{"Retry-After": {"120"}}, fault.KindRateLimited, false, "HTTP 429", 120 * time.Second},
		{"a 429 without Retry-After waits the default", http.StatusTooManyRequests, "", nil, fault.KindRateLimited, false, "HTTP 429", websearch.DefaultRetryAfter},
		{"a server error is unavailable", http.StatusBadGateway, "", nil, fault.KindUnavailable, false, "HTTP 502", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server(t, tc.status, tc.page, tc.header).Search(context.Background(), query)
			if err == nil {
				t.Fatal("Search succeeded")
			}
			if k := fault.KindOf(err); k != tc.kind || errors.Is(err, websearch.ErrBlocked) != tc.blocked || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Search = %v (kind %s, blocked %v); want kind %s, blocked %v, saying %q", err, k, errors.Is(err, websearch.ErrBlocked), tc.kind, tc.blocked, tc.says)
			}
			if got, _ := fault.RetryAfter(err); got != tc.retry {
				t.Errorf("retry after %v, want %v", got, tc.retry)
			}
		})
	}
}

func TestParseBoundsWhatAHostilePageProduces(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<div class="result"><a class="result__a" href="https://a.example/">`)
	b.WriteString(strings.Repeat("<b>title ", 50000))
	b.WriteString(`</a><a class="result__snippet">` + strings.Repeat("x ", 30000) + `</a></div>`)
	for range 1000 {
		b.WriteString(`<div class="result"><a class="result__a" href="https://b.example/">t</a></div>`)
	}
	p, err := duckduckgo.Parse(strings.NewReader(b.String()), websearch.MaxResults)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != websearch.MaxResults {
		t.Errorf("%d results, want %d", len(p.Results), websearch.MaxResults)
	}
	if n := len(p.Results[0].Title) + len(p.Results[0].Snippet); n > 8*websearch.MaxSnippetChars {
		t.Errorf("the first result holds %d bytes of text", n)
	}
}

func TestParseRefusesAnOverlongToken(t *testing.T) {
	page := `<div class="result"><a class="result__a" href="https://a.example/">` + strings.Repeat("x", 1<<20) + `</a></div>`
	if _, err := duckduckgo.Parse(strings.NewReader(page), websearch.MaxResults); err == nil {
		t.Fatal("Parse read a megabyte of text as one token")
	}
}

func TestUnwrap(t *testing.T) {
	for _, tc := range []struct{ href, want string }{
		{"//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2F&rut=1", "https://go.dev/"},
		{"https://duckduckgo.com/l/?uddg=http%3A%2F%2Fexample.com%2Fa%3Fb%3Dc", "http://example.com/a?b=c"},
		{"//duckduckgo.com/l/?uddg=javascript%3Aalert(1)", ""},
		{"//duckduckgo.com/l/?rut=1", ""},
		{"https://pkg.go.dev/", "https://pkg.go.dev/"},
		{"ftp://example.com/", ""},
	} {
		if got := duckduckgo.Unwrap(tc.href); got != tc.want {
			t.Errorf("Unwrap(%q) = %q, want %q", tc.href, got, tc.want)
		}
	}
}
