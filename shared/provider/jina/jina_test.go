package jina_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/jina"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
)

// wireRequest is what the API documents for POST /v1/multi-vector.
type wireRequest struct {
	Model         string   `json:"model"`
	Input         []string `json:"input"`
	InputType     string   `json:"input_type"`
	EmbeddingType string   `json:"embedding_type"`
	Dimensions    int      `json:"dimensions"`
}

// server answers every request with status and body, recording the requests.
func server(t *testing.T, status int, body string) (*httptest.Server, *[]wireRequest) {
	t.Helper()
	var got []wireRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/multi-vector" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"detail":"wrong method, path or key"}`, http.StatusBadRequest)
			return
		}
		var in wireRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got = append(got, in)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func newEmbedder(t *testing.T, url string, dims int) *jina.Embedder {
	t.Helper()
	e, err := jina.NewEmbedder(url+"/v1", "k", "jina-colbert-v2", &jina.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbedTokensSpeaksTheWireFormat(t *testing.T) {
	body, err := os.ReadFile("testdata/multi-vector.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, reqs := server(t, http.StatusOK, string(body))
	out, err := newEmbedder(t, srv.URL, 3).EmbedTokens(context.Background(), multivector.Request{Texts: []string{"first", "second"}, Purpose: provider.ForQuery})
	if err != nil {
		t.Fatal(err)
	}
	want := multivector.Embeddings{
		Tokens:   [][][]float32{{{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}, {{0, 0.6, 0.8}, {1, 0, 0}}},
		Dims:     3,
		Provider: "jina",
		Model:    "jina-colbert-v2",
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("embeddings mismatch (-want +got):\n%s", diff)
	}
	wantReq := []wireRequest{{Model: "jina-colbert-v2", Input: []string{"first", "second"}, InputType: "query", EmbeddingType: "float", Dimensions: 3}}
	if diff := cmp.Diff(wantReq, *reqs); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
}

func TestEmbedTokensRefusesBadAnswers(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		want    string
		unavail bool
	}{
		{"a client error names the service and its detail", 400, `{"detail":"Model 'x' not found"}`, "jina: /v1/multi-vector: HTTP 400 Bad Request: Model 'x' not found", false},
		{"a validation error gives its first message", 422, `{"detail":[{"loc":["body","input"],"msg":"field required"}]}`, "HTTP 422 Unprocessable Entity: field required", false},
		{"a rate limit is unavailable", 429, `{"detail":"slow down"}`, "HTTP 429 Too Many Requests: slow down", true},
		{"a server error is unavailable", 503, `upstream gone`, "HTTP 503 Service Unavailable: upstream gone", true},
		{"a missing result is refused", 200, `{"data":[]}`, "returned 0 results for 1 texts", false},
		{"an index out of range is refused", 200, `{"data":[{"index":3,"embeddings":[[1,0]]}]}`, "result index 3 twice or out of range 0..0", false},
		{"a vector of the wrong length is refused", 200, `{"data":[{"index":0,"embeddings":[[1,0,0]]}]}`, "returned 3 dimensions for token 0 of text 0, want 2", false},
		{"a zero vector is refused", 200, `{"data":[{"index":0,"embeddings":[[0,0]]}]}`, "zero or non-finite vector for token 0 of text 0", false},
		{"malformed JSON is refused", 200, `{"data":`, "jina: decoding /v1/multi-vector response", false},
		{"an answer past the size bound is refused", 200, `{"data":[` + strings.Repeat(" ", 64<<20), "response larger than", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, tt.status, tt.body)
			_, err := newEmbedder(t, srv.URL, 2).EmbedTokens(context.Background(), multivector.Request{Texts: []string{"a text"}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "jina: ") {
				t.Fatalf("err = %v, want one starting jina: and containing %q", err, tt.want)
			}
			if got := fault.KindOf(err) == fault.KindUnavailable; got != tt.unavail {
				t.Errorf("unavailable = %v, want %v", got, tt.unavail)
			}
		})
	}
}

func TestEmbedTokensBoundsTokens(t *testing.T) {
	tokens := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat("[1,0],", n), ",") + "]"
	}
	tests := []struct {
		name    string
		purpose provider.Purpose
		texts   int
		perText int
		want    int // tokens kept per text; -1: refused
	}{
		{"a query's tokens past its bound are dropped", provider.ForQuery, 1, 40, multivector.MaxQueryTokens},
		{"a document's tokens past its bound are dropped", provider.ForDocument, 1, 600, multivector.MaxDocumentTokens},
		{"a call past the batch bound is refused", provider.ForDocument, multivector.MaxBatchTokens/multivector.MaxDocumentTokens + 1, multivector.MaxDocumentTokens, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var in wireRequest
				json.NewDecoder(r.Body).Decode(&in)
				items := make([]string, len(in.Input))
				for i := range items {
					items[i] = fmt.Sprintf(`{"index":%d,"embeddings":%s}`, i, tokens(tt.perText))
				}
				fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(items, ","))
			}))
			defer srv.Close()
			texts := make([]string, tt.texts)
			for i := range texts {
				texts[i] = "text"
			}
			e, err := jina.NewEmbedder(srv.URL, "", "m", &jina.Options{Dims: 2, BatchSize: jina.MaxBatchSize})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.EmbedTokens(context.Background(), multivector.Request{Texts: texts, Purpose: tt.purpose})
			if tt.want < 0 {
				if err == nil || !strings.Contains(err.Error(), "jina: /v1/multi-vector: more than 65536 tokens") {
					t.Fatalf("err = %v, want the batch bound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(out.Tokens[0]); got != tt.want {
				t.Errorf("kept %d tokens, want %d", got, tt.want)
			}
		})
	}
}

func TestEmbedTokensStopsAtTheDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newEmbedder(t, srv.URL, 2).EmbedTokens(ctx, multivector.Request{Texts: []string{"a"}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "jina: /v1/multi-vector: ") {
		t.Fatalf("err = %v, want the deadline, naming jina", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v, long past the deadline", d)
	}
}

func TestNewEmbedderRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name, url, model string
		opts             *jina.Options
		want             string
	}{
		{"a URL without a scheme", "api.jina.ai", "jina-colbert-v2", nil, "is not an http(s) URL"},
		{"no model", "https://api.jina.ai", " ", nil, "needs a model name"},
		{"an unknown model without dimensions", "https://api.jina.ai", "other", nil, "set its dimensions"},
		{"dimensions past the bound", "https://api.jina.ai", "other", &jina.Options{Dims: multivector.MaxDims + 1}, "outside 1..1024"},
		{"a batch past the bound", "https://api.jina.ai", "jina-colbert-v2", &jina.Options{BatchSize: jina.MaxBatchSize + 1}, "batch size 65 is outside 1..64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jina.NewEmbedder(tt.url, "", tt.model, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEmbedTokensRefusesAnEmptyText(t *testing.T) {
	_, err := newEmbedder(t, "http://127.0.0.1:1", 2).EmbedTokens(context.Background(), multivector.Request{Texts: []string{"a", " "}})
	if err == nil || !strings.Contains(err.Error(), "jina: embed tokens: text 1 is empty") {
		t.Errorf("err = %v, want text 1 named", err)
	}
}
