package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
)

// failure is a Bedrock error reply, as the service sends it: the status,
// the X-Amzn-ErrorType header and a {"message"} body.
type failure struct {
	status  int
	code    string
	message string
}

var (
	throttled  = failure{429, "ThrottlingException", "Too many requests, please wait before trying again."}
	badRequest = failure{400, "ValidationException", "Malformed input request: #/inputText: expected minLength: 1, actual: 0, please reformat your input and try again."}
	denied     = failure{403, "AccessDeniedException", "You don't have access to the model with the specified model ID."}
)

// call is one request the fake service received.
type call struct {
	op      string // "invoke" or "converse"
	modelID string // as the path carried it, still escaped
	body    map[string]any
	raw     []byte
}

// runtime speaks the Bedrock Runtime REST wire format: POST
// /model/{modelId}/invoke with the model's own JSON body, and POST
// /model/{modelId}/converse with the Converse request. Queued failures are
// served first, in order; then Titan requests get an embedding of the asked
// dimensions (or wrongDims values) and Converse requests get reply.
type runtime struct {
	t         *testing.T
	srv       *httptest.Server
	mu        sync.Mutex
	calls     []call
	failures  []failure
	wrongDims int
	reply     string
	// answer, if set, is the whole Converse answer, sent instead of one made of reply.
	answer map[string]any
}

func newRuntime(t *testing.T) *runtime {
	rt := &runtime{t: t}
	rt.srv = httptest.NewServer(http.HandlerFunc(rt.serve))
	t.Cleanup(rt.srv.Close)
	return rt
}

// client is an SDK client pointed at the fake service, with static
// credentials and retries that back off for at most a millisecond. It reads
// each answer whole before the SDK sees it: the SDK closes the request's
// body once the answer's headers are in, and when that races the transport
// still finishing the request (as with a stand-in answering at once), the
// transport closes the connection under the answer's body and the SDK sends
// the call again, so that the calls counted were one more than the
// service's answers asked for.
func (rt *runtime) client() *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(rt.srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		Retryer:      retry.AddWithMaxBackoffDelay(retry.NewStandard(), time.Millisecond),
		HTTPClient:   readWhole{rt.srv.Client()},
	})
}

// readWhole is an HTTP client that has read each answer's body by the time
// it returns the answer.
type readWhole struct{ c *http.Client }

func (r readWhole) Do(req *http.Request) (*http.Response, error) {
	resp, err := r.c.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func (rt *runtime) recorded() []call {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]call(nil), rt.calls...)
}

func (rt *runtime) serve(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") || !strings.Contains(auth, "Signature=") {
		rt.t.Errorf("Authorization %q is not a SigV4 signature for bedrock in us-east-1", auth)
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 3 || parts[0] != "model" {
		rt.t.Errorf("request %s %s, want POST /model/{modelId}/{invoke|converse}", r.Method, r.URL.EscapedPath())
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		rt.t.Errorf("Content-Type %q, want application/json", ct)
	}
	data, _ := io.ReadAll(r.Body)
	c := call{op: parts[2], modelID: parts[1], raw: data}
	if err := json.Unmarshal(data, &c.body); err != nil {
		rt.t.Errorf("body %q is not JSON: %v", data, err)
	}
	rt.mu.Lock()
	rt.calls = append(rt.calls, c)
	var fail *failure
	if len(rt.failures) > 0 {
		fail = &rt.failures[0]
		rt.failures = rt.failures[1:]
	}
	rt.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "2c9a9a6e-0d6f-4f1d-9d43-7c3b1f6f0d1e")
	if fail != nil {
		w.Header().Set("X-Amzn-Errortype", fail.code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.WriteHeader(fail.status)
		fmt.Fprintf(w, `{"message":%q}`, fail.message)
		return
	}
	switch c.op {
	case "invoke":
		dims := int(c.body["dimensions"].(float64))
		if rt.wrongDims != 0 {
			dims = rt.wrongDims
		}
		vec := titanVector(c.body["inputText"].(string), dims)
		json.NewEncoder(w).Encode(map[string]any{
			"embedding": vec, "inputTextTokenCount": len(strings.Fields(c.body["inputText"].(string))),
			"embeddingsByType": map[string]any{"float": vec},
		})
	case "converse":
		if rt.answer != nil {
			json.NewEncoder(w).Encode(rt.answer)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": rt.reply}}}},
			"stopReason": "end_turn",
			"usage":      map[string]any{"inputTokens": 125, "outputTokens": 9, "totalTokens": 134},
			"metrics":    map[string]any{"latencyMs": 412},
		})
	default:
		rt.t.Errorf("operation %q, want invoke or converse", c.op)
	}
}

// titanVector is a unit vector determined by text, as Titan returns with "normalize": true.
func titanVector(text string, dims int) []float64 {
	v := make([]float64, dims)
	var sum float64
	for i := range v {
		v[i] = float64((len(text)*31+i*17)%13) - 6
		sum += v[i] * v[i]
	}
	for i := range v {
		v[i] /= math.Sqrt(sum)
	}
	return v
}

func TestTitanEmbedderSendsOneSignedInvokeModelPerText(t *testing.T) {
	rt := newRuntime(t)
	e, err := bedrock.NewEmbedder(rt.client(), &bedrock.EmbedderOptions{Dims: 256, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"vector index accuracy", "patching", "PGA_AGGREGATE_TARGET sizing", "a", "another passage of text"}
	got, err := e.Embed(context.Background(), provider.EmbedRequest{Texts: texts, Purpose: provider.ForQuery})
	if err != nil {
		t.Fatal(err)
	}
	if got.Provider != "bedrock" || got.Model != "amazon.titan-embed-text-v2:0" || got.Dims != 256 || len(got.Vectors) != len(texts) {
		t.Fatalf("Embed = provider %q model %q dims %d, %d vectors; want bedrock amazon.titan-embed-text-v2:0 256, %d",
			got.Provider, got.Model, got.Dims, len(got.Vectors), len(texts))
	}
	for i, v := range got.Vectors {
		want := titanVector(texts[i], 256)
		for j := range v {
			if math.Abs(float64(v[j])-want[j]) > 1e-6 {
				t.Fatalf("vector %d differs from the embedding of text %d at %d", i, i, j)
			}
		}
	}
	calls := rt.recorded()
	if len(calls) != len(texts) {
		t.Fatalf("%d calls, want one per text (%d)", len(calls), len(texts))
	}
	seen := map[string]bool{}
	for _, c := range calls {
		if c.op != "invoke" || c.modelID != "amazon.titan-embed-text-v2%3A0" {
			t.Errorf("call %s on model %q, want invoke on amazon.titan-embed-text-v2%%3A0", c.op, c.modelID)
		}
		text, _ := c.body["inputText"].(string)
		seen[text] = true
		want := map[string]any{"inputText": text, "dimensions": float64(256), "normalize": true}
		if diff := cmp.Diff(want, c.body); diff != "" {
			t.Errorf("InvokeModel body mismatch (-want +got):\n%s", diff)
		}
	}
	if len(seen) != len(texts) {
		t.Errorf("texts sent %v, want each of %v once", seen, texts)
	}
}

func TestTitanEmbedderFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  []failure
		wrongDims int
		texts     []string
		wantCalls int
		wantErr   []string
		wantKind  fault.Kind
	}{
		{"ThrottledOnceIsRetriedBySDK", []failure{throttled}, 0, []string{"x"}, 2, nil, ""},
		{"ThrottledUntilTheSDKGivesUpIsUnavailable", []failure{throttled, throttled, throttled}, 0, []string{"x"}, 3,
			[]string{"bedrock: invoke model amazon.titan-embed-text-v2:0", "ThrottlingException", "Too many requests"}, fault.KindUnavailable},
		{"ValidationExceptionSaysWhatWasWrong", []failure{badRequest}, 0, []string{"x"}, 1,
			[]string{"ValidationException", "Malformed input request"}, fault.KindInternal},
		{"AccessDeniedNamesThePermission", []failure{denied}, 0, []string{"x"}, 1,
			[]string{"AccessDeniedException", "bedrock:InvokeModel"}, fault.KindInternal},
		{"WrongDimensionCount", nil, 512, []string{"x"}, 1, []string{"returned 512 dimensions, want 256"}, fault.KindInternal},
		{"EmptyTextIsRefusedUpFront", nil, 0, []string{"x", ""}, 0, []string{"text 1 is empty"}, fault.KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			rt.failures, rt.wrongDims = tc.failures, tc.wrongDims
			e, err := bedrock.NewEmbedder(rt.client(), &bedrock.EmbedderOptions{Dims: 256, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), provider.EmbedRequest{Texts: tc.texts})
			if n := len(rt.recorded()); n != tc.wantCalls {
				t.Errorf("%d calls, want %d", n, tc.wantCalls)
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
		})
	}
}

func TestNewEmbedderAcceptsOnlyTitanDimensions(t *testing.T) {
	rt := newRuntime(t)
	for dims, want := range map[int]int{0: 1024, 256: 256, 512: 512, 1024: 1024} {
		e, err := bedrock.NewEmbedder(rt.client(), &bedrock.EmbedderOptions{Dims: dims})
		if err != nil {
			t.Errorf("NewEmbedder(dims %d): %v", dims, err)
		} else if e.Dims() != want {
			t.Errorf("NewEmbedder(dims %d).Dims() = %d, want %d", dims, e.Dims(), want)
		}
	}
	for _, dims := range []int{384, 1536, -1} {
		if _, err := bedrock.NewEmbedder(rt.client(), &bedrock.EmbedderOptions{Dims: dims}); err == nil || !strings.Contains(err.Error(), "256, 512 or 1024") {
			t.Errorf("NewEmbedder(dims %d) = %v, want an error listing the valid dimensions", dims, err)
		}
	}
	if _, err := bedrock.NewEmbedder(nil, nil); err == nil {
		t.Error("NewEmbedder(nil client) succeeded")
	}
}

func TestConverseGeneratorSendsTheRenderedPrompt(t *testing.T) {
	history := []provider.Turn{{Role: "user", Content: "Tell me about PGA."}, {Role: "assistant", Content: "It is process memory."}}
	for _, tc := range []struct {
		name     string
		req      provider.GenerateRequest
		reply    string
		wantText string
	}{
		{"Answer", provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How big should it be?", History: history, Documents: []string{"Use 20% of memory."}, MaxTokens: 300},
			"Start with 20% of physical memory.", "Start with 20% of physical memory."},
		{"Rephrase", provider.GenerateRequest{Task: provider.TaskRephrase, Question: "How big should it be?", History: history},
			"PGA size recommendation\n", "PGA size recommendation"},
		{"Grade", provider.GenerateRequest{Task: provider.TaskGrade, Question: "PGA size?", Documents: []string{"Use 20% of memory."}},
			"No", "no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			rt.reply = tc.reply
			g, err := bedrock.NewGenerator(rt.client(), "us.anthropic.claude-3-5-haiku-20241022-v1:0")
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Generate(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want := provider.Generation{Text: tc.wantText, Provider: "bedrock", Model: "us.anthropic.claude-3-5-haiku-20241022-v1:0", InputTokens: 125, OutputTokens: 9}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Generate mismatch (-want +got):\n%s", diff)
			}
			calls := rt.recorded()
			if len(calls) != 1 || calls[0].op != "converse" {
				t.Fatalf("calls %+v, want one converse", calls)
			}
			if id, _ := url.PathUnescape(calls[0].modelID); id != "us.anthropic.claude-3-5-haiku-20241022-v1:0" || !strings.Contains(calls[0].modelID, "%3A") {
				t.Errorf("path model id %q, want the escaped inference profile id", calls[0].modelID)
			}
			p, _ := provider.Render(tc.req)
			var messages []any
			for _, m := range p.Messages {
				messages = append(messages, map[string]any{"role": m.Role, "content": []any{map[string]any{"text": m.Content}}})
			}
			maxTokens := tc.req.MaxTokens
			if maxTokens == 0 {
				maxTokens = provider.DefaultMaxTokens(tc.req.Task)
			}
			wantBody := map[string]any{
				"system":          []any{map[string]any{"text": p.System}},
				"messages":        messages,
				"inferenceConfig": map[string]any{"maxTokens": float64(maxTokens)},
			}
			if diff := cmp.Diff(wantBody, calls[0].body); diff != "" {
				t.Errorf("Converse body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverseGeneratorFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures []failure
		reply    string
		task     provider.Task
		wantErr  []string
		wantKind fault.Kind
	}{
		{"ThrottledThroughout", []failure{throttled, throttled, throttled}, "", provider.TaskAnswer,
			[]string{"bedrock: converse", "ThrottlingException"}, fault.KindUnavailable},
		{"ModelNotReady", []failure{{429, "ModelNotReadyException", "Model is not ready"}, {429, "ModelNotReadyException", "Model is not ready"}, {429, "ModelNotReadyException", "Model is not ready"}}, "", provider.TaskAnswer,
			[]string{"ModelNotReadyException"}, fault.KindUnavailable},
		{"UnknownModel", []failure{{400, "ValidationException", "The provided model identifier is invalid."}}, "", provider.TaskAnswer,
			[]string{"ValidationException", "The provided model identifier is invalid."}, fault.KindInternal},
		{"GradeNeitherYesNorNo", nil, "It depends.", provider.TaskGrade, []string{"not yes or no"}, fault.KindInternal},
		{"NoText", nil, "", provider.TaskAnswer, []string{"returned no text", "end_turn"}, fault.KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			rt.failures, rt.reply = tc.failures, tc.reply
			g, _ := bedrock.NewGenerator(rt.client(), bedrock.DefaultGenerationModel)
			_, err := g.Generate(context.Background(), provider.GenerateRequest{Task: tc.task, Question: "q?", Documents: []string{"d"}})
			if err == nil {
				t.Fatal("Generate succeeded, want an error")
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
			if k := fault.KindOf(err); k != tc.wantKind {
				t.Errorf("error kind %s, want %s", k, tc.wantKind)
			}
		})
	}
}

func TestCancelledContextIsNotUnavailable(t *testing.T) {
	rt := newRuntime(t)
	g, _ := bedrock.NewGenerator(rt.client(), bedrock.DefaultGenerationModel)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: "q?"})
	if !errors.Is(err, context.Canceled) || fault.KindOf(err) == fault.KindUnavailable {
		t.Errorf("Generate = %v, want context.Canceled, not an unavailable dependency", err)
	}
}
