package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

const testKey = "sk-test-123"

// reply is one canned HTTP answer of the fake server.
type reply struct {
	status int
	header map[string]string
	body   string
}

// server speaks the OpenAI wire format for /v1/embeddings and
// /v1/chat/completions. Queued replies are served first, in order; then
// embeddings are computed from the texts (deliberately not of unit length,
// and listed in reverse order, as the index field allows) and chat answers
// come from chat.
type server struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []map[string]any // decoded request bodies, in arrival order
	// queue holds replies served before the normal behaviour.
	queue []reply
	// native is the vector length returned when a request names no dimensions.
	native int
	// mangle, if set, edits an embeddings response before it is sent.
	mangle func(resp map[string]any)
	// chat returns the assistant's content for a chat request; nil content means JSON null.
	chat func(req map[string]any) *string
}

func newServer(t *testing.T, native int) *server {
	s := &server{t: t, native: native}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) client(t *testing.T, opts *openai.ClientOptions) *openai.Client {
	t.Helper()
	if opts == nil {
		opts = &openai.ClientOptions{MaxBackoff: time.Millisecond}
	}
	c, err := openai.NewClient(s.srv.URL+"/v1/", testKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *server) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.reqs...)
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("request %s %s with Authorization %q, Content-Type %q; want a POST of JSON with the bearer key",
			r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, body)
	var canned *reply
	if len(s.queue) > 0 {
		canned = &s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if canned != nil {
		for k, v := range canned.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(canned.status)
		w.Write([]byte(canned.body))
		return
	}
	var resp map[string]any
	switch r.URL.Path {
	case "/v1/embeddings":
		resp = s.embeddings(body)
	case "/v1/chat/completions":
		var content any
		if c := s.chat(body); c != nil {
			content = *c
		}
		resp = map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"].(string) + "-2024-07-18",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"no such endpoint","type":"invalid_request_error"}}`))
		return
	}
	json.NewEncoder(w).Encode(resp)
}

func (s *server) embeddings(body map[string]any) map[string]any {
	dims := s.native
	if d, ok := body["dimensions"].(float64); ok {
		dims = int(d)
	}
	inputs := body["input"].([]any)
	var data []any
	for i := len(inputs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": rawVector(inputs[i].(string), dims)})
	}
	resp := map[string]any{"object": "list", "data": data, "model": body["model"],
		"usage": map[string]any{"prompt_tokens": 3 * len(inputs), "total_tokens": 3 * len(inputs)}}
	if s.mangle != nil {
		s.mangle(resp)
	}
	return resp
}

// rawVector is a vector determined by text, of length about 3.
func rawVector(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64()
	v := make([]float32, dims)
	for i := range v {
		x = x*6364136223846793005 + 1442695040888963407
		v[i] = float32(int64(x>>33)%1000) / 1000 * 3
	}
	return v
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(s))
	}
	return out
}

func TestEmbedReturnsUnitVectorsInTextOrderAcrossBatches(t *testing.T) {
	s := newServer(t, 8)
	e, err := openai.NewEmbedder(s.client(t, nil), "nomic-embed-text", &openai.EmbedderOptions{Dims: 8, BatchSize: 100, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = "passage " + strings.Repeat("x", i)
	}
	got, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
	if err != nil {
		t.Fatal(err)
	}
	if got.Provider != "openai" || got.Model != "nomic-embed-text" || got.Dims != 8 || len(got.Vectors) != len(texts) {
		t.Fatalf("Embed = provider %q model %q dims %d with %d vectors; want openai nomic-embed-text 8 with %d",
			got.Provider, got.Model, got.Dims, len(got.Vectors), len(texts))
	}
	for i, v := range got.Vectors {
		want := unit(rawVector(texts[i], 8))
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d = %v, want %v (the normalised embedding of text %d)", i, v, want, i)
			}
		}
	}
	var sizes []int
	for _, r := range s.requests() {
		sizes = append(sizes, len(r["input"].([]any)))
		if _, ok := r["dimensions"]; ok {
			t.Errorf("request to a model that cannot shorten vectors carried dimensions: %v", r["dimensions"])
		}
	}
	total := 0
	for _, n := range sizes {
		total += n
		if n > 100 {
			t.Errorf("a request carried %d texts, more than the batch size 100", n)
		}
	}
	if len(sizes) != 3 || total != 250 {
		t.Errorf("batch sizes %v, want three batches covering 250 texts", sizes)
	}
}

func TestEmbedAsksForShortVectorsOnlyWhenTheModelCanShortenThem(t *testing.T) {
	for _, tc := range []struct {
		name     string
		model    string
		dims     int
		wantDims int
		wantSent any
	}{
		{"Shortened", "text-embedding-3-small", 256, 256, float64(256)},
		{"NativeLength", "text-embedding-3-small", 0, 1536, nil},
		{"NativeLengthNamed", "text-embedding-3-large", 3072, 3072, nil},
		{"OtherModel", "bge-m3", 1024, 1024, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.wantDims)
			e, err := openai.NewEmbedder(s.client(t, nil), tc.model, &openai.EmbedderOptions{Dims: tc.dims})
			if err != nil {
				t.Fatal(err)
			}
			if e.Dims() != tc.wantDims {
				t.Errorf("Dims() = %d, want %d", e.Dims(), tc.wantDims)
			}
			if _, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"hello"}}); err != nil {
				t.Fatal(err)
			}
			req := s.requests()[0]
			if diff := cmp.Diff(tc.wantSent, req["dimensions"]); diff != "" {
				t.Errorf("dimensions field mismatch (-want +got):\n%s", diff)
			}
			if req["model"] != tc.model {
				t.Errorf("model field = %v, want %s", req["model"], tc.model)
			}
		})
	}
}

func TestNewEmbedderRefusesSettingsTheModelCannotMeet(t *testing.T) {
	c, err := openai.NewClient("https://api.openai.com", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		model string
		opts  openai.EmbedderOptions
		want  string
	}{
		{"UnknownModelWithoutDimensions", "my-embedder", openai.EmbedderOptions{}, "set its dimensions"},
		{"MoreThanNative", "text-embedding-3-small", openai.EmbedderOptions{Dims: 2048}, "at most 1536"},
		{"AdaCannotShorten", "text-embedding-ada-002", openai.EmbedderOptions{Dims: 512}, "cannot shorten"},
		{"BatchAboveLimit", "text-embedding-3-small", openai.EmbedderOptions{BatchSize: 4096}, "limit of 2048"},
		{"NoModel", " ", openai.EmbedderOptions{}, "model name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openai.NewEmbedder(c, tc.model, &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewEmbedder = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestEmbedRefusesMalformedResponses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mangle func(resp map[string]any)
		want   string
	}{
		{"WrongLength", func(r map[string]any) {
			d := r["data"].([]any)[0].(map[string]any)
			d["embedding"] = d["embedding"].([]float32)[:3]
		}, "returned 3 dimensions, want 4"},
		{"MissingEmbedding", func(r map[string]any) { r["data"] = r["data"].([]any)[1:] }, "returned 1 embeddings for 2 texts"},
		{"RepeatedIndex", func(r map[string]any) { r["data"].([]any)[1].(map[string]any)["index"] = 1 }, "index 1 twice"},
		{"ZeroVector", func(r map[string]any) { r["data"].([]any)[0].(map[string]any)["embedding"] = make([]float32, 4) }, "zero"},
		{"NotJSON", func(r map[string]any) { r["data"] = "oops" }, "decoding /v1/embeddings response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.mangle = tc.mangle
			e, err := openai.NewEmbedder(s.client(t, nil), "local", &openai.EmbedderOptions{Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"a", "b"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Embed = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("EmptyText", func(t *testing.T) {
		s := newServer(t, 4)
		e, _ := openai.NewEmbedder(s.client(t, nil), "local", &openai.EmbedderOptions{Dims: 4})
		if _, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"a", " "}}); err == nil || !strings.Contains(err.Error(), "text 1 is empty") {
			t.Errorf("Embed = %v, want an error naming the empty text", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent for input refused up front", n)
		}
	})
}

func TestRequestsRetryOnThrottlingAndServerErrorsOnly(t *testing.T) {
	rateLimited := reply{status: 429, body: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`}
	unavailable := reply{status: 503, body: `{"error":{"message":"The engine is currently overloaded","type":"server_error"}}`}
	for _, tc := range []struct {
		name         string
		queue        []reply
		opts         *openai.ClientOptions
		wantRequests int
		wantErr      []string // "" parts all in the error; nil means success
		wantKind     fault.Kind
	}{
		{"ThrottledTwiceThenServed", []reply{rateLimited, rateLimited}, nil, 3, nil, ""},
		{"GatewayErrorWithAnHTMLBody", []reply{{status: 502, body: "<html>Bad Gateway</html>"}}, nil, 2, nil, ""},
		{"UnavailableUntilTheTriesRunOut", []reply{unavailable, unavailable, unavailable, unavailable}, nil, 4,
			[]string{"HTTP 503", "server_error", "The engine is currently overloaded", "after 4 tries"}, fault.KindUnavailable},
		{"NoRetriesWhenNegative", []reply{rateLimited}, &openai.ClientOptions{MaxRetries: -1}, 1,
			[]string{"HTTP 429", "Rate limit reached"}, fault.KindUnavailable},
		{"RetryAfterBeyondTheLimitFailsAtOnce", []reply{{status: 429, header: map[string]string{"Retry-After": "120"}, body: rateLimited.body}}, nil, 1,
			[]string{"HTTP 429", "retry after 2m0s"}, fault.KindUnavailable},
		{"BadRequestIsNotRetried", []reply{{status: 400, body: `{"error":{"message":"'$.input' is invalid.","type":"invalid_request_error","code":null}}`}}, nil, 1,
			[]string{"HTTP 400 Bad Request", "invalid_request_error", "'$.input' is invalid."}, fault.KindInternal},
		{"UnauthorizedIsNotRetried", []reply{{status: 401, body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`}}, nil, 1,
			[]string{"HTTP 401 Unauthorized", "Incorrect API key provided"}, fault.KindInternal},
		{"AnErrorThatIsAString", []reply{{status: 404, body: `{"error":"model 'x' not found"}`}}, nil, 1,
			[]string{"HTTP 404", "model 'x' not found"}, fault.KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.queue = tc.queue
			opts := tc.opts
			if opts == nil {
				opts = &openai.ClientOptions{MaxBackoff: time.Millisecond}
			}
			e, err := openai.NewEmbedder(s.client(t, opts), "local", &openai.EmbedderOptions{Dims: 4})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"hello"}})
			if n := len(s.requests()); n != tc.wantRequests {
				t.Errorf("%d requests, want %d", n, tc.wantRequests)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Errorf("Embed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Embed succeeded, want an error")
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
			if k := fault.KindOf(err); k != tc.wantKind {
				t.Errorf("error kind %s, want %s", k, tc.wantKind)
			}
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Errorf("error %v does not wrap an *openai.Error", err)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	s := newServer(t, 4)
	s.queue = []reply{{status: 429, header: map[string]string{"Retry-After-Ms": "150"}, body: `{"error":{"message":"slow down"}}`}}
	e, _ := openai.NewEmbedder(s.client(t, nil), "local", &openai.EmbedderOptions{Dims: 4})
	start := time.Now()
	if _, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: []string{"hello"}}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("retried after %s, want at least the 150ms the server asked for", d)
	}
}

func TestRetryGivesUpWhenTheDeadlineIsNearerThanTheWait(t *testing.T) {
	s := newServer(t, 4)
	s.queue = []reply{{status: 429, header: map[string]string{"Retry-After": "5"}, body: `{"error":{"message":"slow down"}}`}}
	e, _ := openai.NewEmbedder(s.client(t, nil), "local", &openai.EmbedderOptions{Dims: 4})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, provider.EmbedRequest{Texts: []string{"hello"}})
	if err == nil || fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "no time left") {
		t.Errorf("Embed = %v, want an unavailable error saying no time was left", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("gave up after %s, want at once", d)
	}
}

func TestGenerateSendsTheRenderedPromptAndReadsTheReply(t *testing.T) {
	history := []provider.Turn{{Role: "user", Content: "Tell me about PGA."}, {Role: "assistant", Content: "It is process memory."}}
	for _, tc := range []struct {
		name          string
		req           provider.GenerateRequest
		reply         string
		wantText      string
		wantMaxTokens float64
		wantRoles     []any
	}{
		{"Answer", provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How big should it be?", History: history, Documents: []string{"Use 20% of memory."}},
			" Use 20% of physical memory.\n", "Use 20% of physical memory.", 1024, []any{"system", "user", "assistant", "user"}},
		{"RephraseWithABound", provider.GenerateRequest{Task: provider.TaskRephrase, Question: "How big should it be?", History: history, MaxTokens: 50},
			`"PGA size recommendation"`, "PGA size recommendation", 50, []any{"system", "user"}},
		{"Grade", provider.GenerateRequest{Task: provider.TaskGrade, Question: "PGA size?", Documents: []string{"Use 20% of memory."}},
			"Yes.", "yes", 16, []any{"system", "user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.chat = func(map[string]any) *string { return &tc.reply }
			g, err := openai.NewGenerator(s.client(t, nil), "gpt-4o-mini")
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want := provider.Generation{Text: tc.wantText, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", InputTokens: 42, OutputTokens: 7}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Generate mismatch (-want +got):\n%s", diff)
			}
			req := s.requests()[0]
			var roles []any
			for _, m := range req["messages"].([]any) {
				roles = append(roles, m.(map[string]any)["role"])
			}
			if diff := cmp.Diff(tc.wantRoles, roles); diff != "" {
				t.Errorf("message roles mismatch (-want +got):\n%s", diff)
			}
			rendered, _ := provider.Render(tc.req)
			if sys := req["messages"].([]any)[0].(map[string]any)["content"]; sys != rendered.System {
				t.Errorf("system message = %q, want the rendered system prompt %q", sys, rendered.System)
			}
			if req["model"] != "gpt-4o-mini" || req["max_tokens"] != tc.wantMaxTokens {
				t.Errorf("model %v max_tokens %v, want gpt-4o-mini %v", req["model"], req["max_tokens"], tc.wantMaxTokens)
			}
		})
	}
}

func TestGenerateFailsOnRepliesItCannotUse(t *testing.T) {
	maybe, blank := "Perhaps.", "  "
	for _, tc := range []struct {
		name  string
		task  provider.Task
		reply *string
		want  string
	}{
		{"GradeNeitherYesNorNo", provider.TaskGrade, &maybe, "not yes or no"},
		{"NullContent", provider.TaskAnswer, nil, "returned no text"},
		{"BlankContent", provider.TaskRephrase, &blank, "returned no text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.chat = func(map[string]any) *string { return tc.reply }
			g, _ := openai.NewGenerator(s.client(t, nil), "gpt-4o-mini")
			_, err := g.Generate(context.Background(), provider.GenerateRequest{Task: tc.task, Question: "q?", Documents: []string{"d"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("NoChoices", func(t *testing.T) {
		s := newServer(t, 4)
		s.queue = []reply{{status: 200, body: `{"model":"m","choices":[],"usage":{}}`}}
		g, _ := openai.NewGenerator(s.client(t, nil), "gpt-4o-mini")
		if _, err := g.Generate(context.Background(), provider.GenerateRequest{Task: provider.TaskAnswer, Question: "q?"}); err == nil || !strings.Contains(err.Error(), "no choices") {
			t.Errorf("Generate = %v, want an error saying there were no choices", err)
		}
	})
}

func TestNewClientAcceptsBaseURLsWithOrWithoutV1(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://api.openai.com", "https://api.openai.com"},
		{"https://api.openai.com/v1", "https://api.openai.com"},
		{"http://localhost:11434/v1/", "http://localhost:11434"},
		{"https://gateway.example.com/openai/v1", "https://gateway.example.com/openai"},
	} {
		c, err := openai.NewClient(tc.in, "", nil)
		if err != nil {
			t.Errorf("NewClient(%q): %v", tc.in, err)
		} else if c.BaseURL() != tc.want {
			t.Errorf("NewClient(%q) base %q, want %q", tc.in, c.BaseURL(), tc.want)
		}
	}
	for _, bad := range []string{"", "api.openai.com", "ftp://example.com", "https://", "https://x.com?key=1"} {
		if _, err := openai.NewClient(bad, "", nil); err == nil {
			t.Errorf("NewClient(%q) succeeded, want an error", bad)
		}
	}
}
