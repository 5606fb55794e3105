package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The step contracts (see /work/notes/contracts.md), as test doubles of the
// rag and vector streams' step tools: real lambdafn handlers over fake
// domain functions.
type rephraseIn struct {
	Question string `json:"question"`
	ThreadID string `json:"thread_id,omitempty"`
	LLMModel string `json:"llm_model,omitempty"`
}
type rephraseOut struct {
	Question  string `json:"question"`
	Rephrased bool   `json:"rephrased"`
	Messages  int    `json:"messages"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
}
type retrieveIn struct {
	Question string              `json:"question"`
	Stores   []string            `json:"stores,omitempty"`
	TopK     int                 `json:"top_k,omitempty"`
	Mode     string              `json:"mode,omitempty"`
	Filter   map[string][]string `json:"filter,omitempty"`
	ThreadID string              `json:"thread_id,omitempty"`
	// EmbeddingModel is the request's override.
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// GraphTraversalDepth is rag_graphrag's.
	GraphTraversalDepth *int `json:"graph_traversal_depth,omitempty"`
}
type retrieveOut struct {
	Documents      []pipeline.Document      `json:"documents"`
	SearchedStores []string                 `json:"searched_stores"`
	ContextInput   string                   `json:"context_input"`
	Provider       string                   `json:"provider"`
	Model          string                   `json:"model"`
	StoreSelection *pipeline.StoreSelection `json:"store_selection,omitempty"`
}
type gradeIn struct {
	Question  string              `json:"question"`
	Documents []pipeline.Document `json:"documents"`
	LLMModel  string              `json:"llm_model,omitempty"`
}
type gradeOut struct {
	Relevant string `json:"relevant"`
	Graded   bool   `json:"graded"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func stepTool[In, Out any](name, function string) *catalog.Tool {
	return &catalog.Tool{
		Name: name, Title: name, Description: "A pipeline step.", Family: "vector", Function: function,
		InputSchema: toolschema.JSON[In](nil), OutputSchema: toolschema.JSON[Out](nil),
		Visibility: catalog.Internal, Limits: catalog.Limits{Timeout: 5 * time.Second, MemoryMB: 128},
	}
}

// selection is how the stub retriever chose its store when none was named.
var selection = pipeline.StoreSelection{By: "score", Provider: "openai", Model: "gpt-4o-mini", Fallback: "the model chose no store"}

var doc = pipeline.Document{DocID: "d1", ChunkID: "d1#0", Content: "Rotate keys every 90 days.", Score: 0.5, Metadata: map[string]string{"lang": "en"}, Store: "kb"}

// stepHandlers returns the three step functions' handlers. Rephrase
// rephrases when given a thread; retrieve finds doc in store "kb" and
// refuses a store named "missing" as not found; grade answers "no" when the
// question mentions "unrelated".
func stepHandlers() map[string]lambda.Handler {
	d := lambdafn.Deps{}
	return map[string]lambda.Handler{
		"vector/rephrase": lambdafn.Tool(stepTool[rephraseIn, rephraseOut]("optimizer_vs-rephrase", "vector/rephrase"), d,
			func(_ context.Context, _ tenant.Caller, in rephraseIn) (rephraseOut, error) {
				if in.ThreadID == "" {
					return rephraseOut{Question: in.Question, Provider: "offline", Model: "rephrase-v1"}, nil
				}
				return rephraseOut{Question: in.Question + " (about key rotation)", Rephrased: true, Messages: 4, Provider: "offline", Model: "rephrase-v1"}, nil
			}),
		"vector/retriever": lambdafn.Tool(stepTool[retrieveIn, retrieveOut]("optimizer_vs-retriever", "vector/retriever"), d,
			func(_ context.Context, _ tenant.Caller, in retrieveIn) (retrieveOut, error) {
				if slices.Contains(in.Stores, "missing") {
					return retrieveOut{}, fault.NotFound("vector store %q does not exist", "missing")
				}
				out := retrieveOut{Documents: []pipeline.Document{doc}, SearchedStores: []string{"kb"}, ContextInput: in.Question, Provider: "offline", Model: "hash-384"}
				if len(in.Stores) == 0 {
					out.StoreSelection = &selection
				}
				return out, nil
			}),
		"vector/grade": lambdafn.Tool(stepTool[gradeIn, gradeOut]("optimizer_vs-grade", "vector/grade"), d,
			func(_ context.Context, _ tenant.Caller, in gradeIn) (gradeOut, error) {
				relevant := "yes"
				if strings.Contains(in.Question, "unrelated") || len(in.Documents) == 0 {
					relevant = "no"
				}
				return gradeOut{Relevant: relevant, Graded: true, Provider: "offline", Model: "lexical-v1"}, nil
			}),
	}
}

// fault is how a step misbehaves in a test.
type stepFault string

const (
	noFault        stepFault = ""
	functionError  stepFault = "function-error"   // the Lambda fails outright
	toolError      stepFault = "tool-error"       // the real tool refuses invalid arguments: isError, error kind invalid_argument
	toolFailure    stepFault = "tool-unavailable" // the tool answers isError, error kind unavailable (a dependency failed)
	bareIsError    stepFault = "bare-is-error"    // result.isError true and no error member
	noStructured   stepFault = "no-structured"    // a success without the structured fields
	noModel        stepFault = "no-model"         // a success without provider and model (no model ran)
	slow           stepFault = "timeout"          // slower than the Task state's TimeoutSeconds
	throttleOnce   stepFault = "throttle-once"    // TooManyRequestsException, then a success
	throttleAlways stepFault = "throttle-always"  // TooManyRequestsException every time
	crashAlways    stepFault = "service-failure"  // a Lambda service error every time
)

// faultyInvoker invokes the step handlers in process, failing as told.
type faultyInvoker struct {
	local  *invoke.Local
	faults map[string]stepFault
	mu     sync.Mutex
	calls  []invoke.Request
	count  map[string]int
}

type apiError struct{ code string }

func (e apiError) Error() string                 { return e.code }
func (e apiError) ErrorCode() string             { return e.code }
func (e apiError) ErrorMessage() string          { return "Rate exceeded" }
func (e apiError) ErrorFault() smithy.ErrorFault { return smithy.FaultServer }

func (f *faultyInvoker) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	f.mu.Lock()
	f.calls = append(f.calls, *req)
	f.count[function]++
	n := f.count[function]
	f.mu.Unlock()
	switch f.faults[function] {
	case functionError:
		return nil, &invoke.FunctionError{Function: function, Type: "Runtime.ExitError", Message: "exit status 2"}
	case toolError:
		bad := *req
		bad.Arguments = json.RawMessage(`{"question":42}`) // the real schema check refuses it
		return f.local.Invoke(ctx, function, &bad)
	case toolFailure:
		return &invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"the store is unavailable"}],"isError":true}`),
			Error: &invoke.Error{Kind: string(fault.KindUnavailable), Message: "the store is unavailable"}}, nil
	case bareIsError:
		return &invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"no"}],"isError":true}`)}, nil
	case noModel:
		out := map[string]string{
			"vector/rephrase":  `{"question":"how often?","rephrased":false,"messages":0}`,
			"vector/retriever": `{"documents":[],"searched_stores":["kb"],"context_input":"how often?"}`,
			"vector/grade":     `{"relevant":"no","graded":true}`,
		}[function]
		return &invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"structuredContent":` + out + `}`)}, nil
	case noStructured:
		return &invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"unexpected":true}}`)}, nil
	case slow:
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case throttleOnce:
		if n == 1 {
			return nil, apiError{"TooManyRequestsException"}
		}
	case throttleAlways:
		return nil, apiError{"TooManyRequestsException"}
	case crashAlways:
		return nil, apiError{"ServiceException"}
	}
	return f.local.Invoke(ctx, function, req)
}

// fastDefinition is the pipeline with one-second task timeouts, so that
// the timeout cases run quickly.
func fastDefinition(t *testing.T) []byte {
	t.Helper()
	var def map[string]any
	if err := json.Unmarshal(infra.RAGPipeline, &def); err != nil {
		t.Fatal(err)
	}
	for _, s := range def["States"].(map[string]any) {
		if s := s.(map[string]any); s["Type"] == "Task" {
			s["TimeoutSeconds"] = 1
		}
	}
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var caller = tenant.Caller{Tenant: "acme", Principal: "alice"}

func TestLocalRunsThePipelineAndDegradesOnEveryFailure(t *testing.T) {
	full := pipeline.Output{
		Question: "how often?", ContextInput: "how often? (about key rotation)", Rephrased: true,
		Documents: []pipeline.Document{doc}, SearchedStores: []string{"kb"}, StoreSelection: selection, Relevant: "yes", Graded: true, Degraded: []string{},
		Steps: pipeline.Steps{
			Rephrase: pipeline.StepModel{"offline", "rephrase-v1"}, Retrieve: pipeline.StepModel{"offline", "hash-384"},
			Grade: pipeline.StepModel{"offline", "lexical-v1"},
		},
	}
	with := func(f func(o *pipeline.Output)) pipeline.Output {
		o := full
		o.Documents = append([]pipeline.Document(nil), full.Documents...)
		f(&o)
		return o
	}
	rephraseFell := func(o *pipeline.Output) {
		o.ContextInput, o.Rephrased, o.Steps.Rephrase = "how often?", false, pipeline.StepModel{}
	}
	retrieveFell := func(o *pipeline.Output) {
		o.Documents, o.SearchedStores, o.Steps.Retrieve, o.StoreSelection = []pipeline.Document{}, []string{}, pipeline.StepModel{}, pipeline.StoreSelection{}
	}
	gradeFell := func(o *pipeline.Output) { o.Relevant, o.Graded, o.Steps.Grade = "yes", false, pipeline.StepModel{} }
	in := pipeline.Input{Request: pipeline.Request{Caller: caller, TraceID: "trace-1", RequestID: "req-1"}, Question: "how often?", ThreadID: "chat_1", TopK: 3, Mode: "bm25"}
	missingStore := in
	missingStore.Stores = []string{"kb", "missing"}
	named := in
	named.Stores = []string{"kb"}
	ungraded := in
	ungraded.SkipGrade = true
	ungradedUnrelated := ungraded
	ungradedUnrelated.Question, ungradedUnrelated.ThreadID = "an unrelated question", ""
	gradeSkipped := func(o *pipeline.Output) {
		o.Relevant, o.Graded, o.GradeSkipped, o.Steps.Grade = "yes", false, true, pipeline.StepModel{}
	}

	tests := []struct {
		name   string
		in     pipeline.Input
		faults map[string]stepFault
		want   pipeline.Output
		calls  map[string]int // invocations per function, when checked
	}{
		{"every step succeeds", in, nil, with(func(o *pipeline.Output) {}), nil},
		{"a retrieval of the stores named says nothing of a selection", named, nil,
			with(func(o *pipeline.Output) { o.StoreSelection = pipeline.StoreSelection{} }), nil},
		{"without a thread the question is not rephrased", func() pipeline.Input { i := in; i.ThreadID = ""; return i }(), nil,
			with(func(o *pipeline.Output) { o.ContextInput, o.Rephrased = "how often?", false }), nil},
		{"rephrase fails outright: the original question is used", in, map[string]stepFault{"vector/rephrase": functionError},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), nil},
		{"rephrase answers a tool error", in, map[string]stepFault{"vector/rephrase": toolError},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), nil},
		{"rephrase answers isError without an error member", in, map[string]stepFault{"vector/rephrase": bareIsError},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), nil},
		{"rephrase answers without the fields the pipeline reads", in, map[string]stepFault{"vector/rephrase": noStructured},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), nil},
		{"rephrase times out", in, map[string]stepFault{"vector/rephrase": slow},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), nil},
		{"a rephrase that ran no generator names no provider or model", in, map[string]stepFault{"vector/rephrase": noModel},
			with(func(o *pipeline.Output) {
				o.ContextInput, o.Rephrased, o.Steps.Rephrase = "how often?", false, pipeline.StepModel{}
			}), nil},
		{"a throttled rephrase falls back at once: only the retriever retries", in, map[string]stepFault{"vector/rephrase": throttleOnce},
			with(func(o *pipeline.Output) { rephraseFell(o); o.Degraded = []string{"rephrase"} }), map[string]int{"vector/rephrase": 1}},
		{"retrieve fails outright: no documents", in, map[string]stepFault{"vector/retriever": functionError},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), nil},
		{"retrieve answers an unavailable tool error", in, map[string]stepFault{"vector/retriever": toolFailure},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), nil},
		{"retrieve answers isError without an error member", in, map[string]stepFault{"vector/retriever": bareIsError},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), nil},
		{"retrieve answers without the fields the pipeline reads", in, map[string]stepFault{"vector/retriever": noStructured},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), nil},
		{"a retrieval that names no embedder is no failure", in, map[string]stepFault{"vector/retriever": noModel},
			with(func(o *pipeline.Output) {
				o.Documents, o.Steps.Retrieve, o.Relevant, o.StoreSelection = []pipeline.Document{}, pipeline.StepModel{}, "no", pipeline.StoreSelection{}
			}), nil},
		{"retrieve times out", in, map[string]stepFault{"vector/retriever": slow},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), nil},
		{"a throttled retrieve is retried", in, map[string]stepFault{"vector/retriever": throttleOnce},
			with(func(o *pipeline.Output) {}), map[string]int{"vector/retriever": 2}},
		{"a retrieve throttled every time falls back once its retry is spent", in, map[string]stepFault{"vector/retriever": throttleAlways},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), map[string]int{"vector/retriever": 2}},
		{"a retrieve the Lambda service keeps failing falls back once its retry is spent", in, map[string]stepFault{"vector/retriever": crashAlways},
			with(func(o *pipeline.Output) { retrieveFell(o); o.Relevant = "no"; o.Degraded = []string{"retrieve"} }), map[string]int{"vector/retriever": 2}},
		{"a retriever that refuses the arguments ends the run with its refusal", in, map[string]stepFault{"vector/retriever": toolError},
			pipeline.Output{Question: "how often?", Refusal: &invoke.Error{Kind: "invalid_argument", Field: "question", Message: "question: must be of type string"}},
			map[string]int{"vector/grade": 0}},
		{"a store that does not exist ends the run with the retriever's refusal", missingStore, nil,
			pipeline.Output{Question: "how often?", Refusal: &invoke.Error{Kind: "not_found", Message: `vector store "missing" does not exist`}},
			map[string]int{"vector/retriever": 1, "vector/grade": 0}},
		{"grade fails outright: relevant yes", in, map[string]stepFault{"vector/grade": functionError},
			with(func(o *pipeline.Output) { gradeFell(o); o.Degraded = []string{"grade"} }), nil},
		{"grade answers a tool error", in, map[string]stepFault{"vector/grade": toolError},
			with(func(o *pipeline.Output) { gradeFell(o); o.Degraded = []string{"grade"} }), nil},
		{"grade answers without the fields the pipeline reads", in, map[string]stepFault{"vector/grade": noStructured},
			with(func(o *pipeline.Output) { gradeFell(o); o.Degraded = []string{"grade"} }), nil},
		{"grade times out", in, map[string]stepFault{"vector/grade": slow},
			with(func(o *pipeline.Output) { gradeFell(o); o.Degraded = []string{"grade"} }), nil},
		{"a grade that ran no generator names no provider or model", in, map[string]stepFault{"vector/grade": noModel},
			with(func(o *pipeline.Output) { o.Relevant, o.Steps.Grade = "no", pipeline.StepModel{} }), nil},
		{"a throttled grade falls back at once", in, map[string]stepFault{"vector/grade": throttleAlways},
			with(func(o *pipeline.Output) { gradeFell(o); o.Degraded = []string{"grade"} }), map[string]int{"vector/grade": 1}},
		{"every step fails", in, map[string]stepFault{"vector/rephrase": toolError, "vector/retriever": functionError, "vector/grade": bareIsError},
			with(func(o *pipeline.Output) {
				rephraseFell(o)
				retrieveFell(o)
				gradeFell(o)
				o.Degraded = []string{"rephrase", "retrieve", "grade"}
			}), nil},
		{"grading turned off: the grade step is never invoked and the documents are kept", ungraded, nil,
			with(gradeSkipped), map[string]int{"vector/rephrase": 1, "vector/retriever": 1, "vector/grade": 0}},
		{"grading turned off keeps documents the grade step would reject", ungradedUnrelated, nil,
			with(func(o *pipeline.Output) {
				gradeSkipped(o)
				o.Question, o.ContextInput, o.Rephrased = "an unrelated question", "an unrelated question", false
			}), map[string]int{"vector/grade": 0}},
		{"grading turned off: a grade step that would fail is no fallback", ungraded, map[string]stepFault{"vector/grade": functionError},
			with(gradeSkipped), map[string]int{"vector/grade": 0}},
		{"rephrase and grade fail", in, map[string]stepFault{"vector/rephrase": functionError, "vector/grade": functionError},
			with(func(o *pipeline.Output) { rephraseFell(o); gradeFell(o); o.Degraded = []string{"rephrase", "grade"} }), nil},
	}
	def := fastDefinition(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := &faultyInvoker{local: invoke.NewLocal(stepHandlers(), nil), faults: tc.faults, count: map[string]int{}}
			r, err := pipeline.NewLocalDefinition(def, catalog.Default(), inv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Run(context.Background(), tc.in)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
			for function, n := range tc.calls {
				if inv.count[function] != n {
					t.Errorf("%s was invoked %d times, want %d", function, inv.count[function], n)
				}
			}
		})
	}
}

func TestLocalSendsEachStepTheEnvelopeAndOnlyTheArgumentsGiven(t *testing.T) {
	depth := 2
	tests := []struct {
		name string
		in   pipeline.Input
		want map[string]string // tool -> arguments
	}{
		{
			name: "optional fields absent",
			in:   pipeline.Input{Request: pipeline.Request{Caller: caller, TraceID: "t", RequestID: "r"}, Question: "q?"},
			want: map[string]string{
				"optimizer_vs-rephrase":  `{"question":"q?"}`,
				"optimizer_vs-retriever": `{"mode":"hybrid","question":"q?","top_k":5}`,
				"optimizer_vs-grade":     `{"documents":[{"chunk_id":"d1#0","content":"Rotate keys every 90 days.","doc_id":"d1","metadata":{"lang":"en"},"score":0.5,"store":"kb"}],"question":"q?"}`,
			},
		},
		{
			name: "optional fields given",
			in: pipeline.Input{Request: pipeline.Request{Caller: caller, TraceID: "t", RequestID: "r"}, Question: "q?", ThreadID: "chat_1",
				Stores: []string{"kb", "faq"}, TopK: 7, Mode: "vector", Filter: map[string][]string{"lang": {"en"}},
				LLMModel: "gpt-4o", EmbeddingModel: "text-embedding-3-large", GraphTraversalDepth: &depth},
			want: map[string]string{
				"optimizer_vs-rephrase":  `{"llm_model":"gpt-4o","question":"q?","thread_id":"chat_1"}`,
				"optimizer_vs-retriever": `{"embedding_model":"text-embedding-3-large","filter":{"lang":["en"]},"graph_traversal_depth":2,"mode":"vector","question":"q? (about key rotation)","stores":["kb","faq"],"top_k":7}`,
				"optimizer_vs-grade":     `{"documents":[{"chunk_id":"d1#0","content":"Rotate keys every 90 days.","doc_id":"d1","metadata":{"lang":"en"},"score":0.5,"store":"kb"}],"llm_model":"gpt-4o","question":"q? (about key rotation)"}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := &faultyInvoker{local: invoke.NewLocal(stepHandlers(), nil), count: map[string]int{}}
			r, err := pipeline.NewLocal(catalog.Default(), inv)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(context.Background(), tc.in); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, req := range inv.calls {
				if req.Method != invoke.MethodCallTool || !cmp.Equal(req.Caller, caller) || req.TraceID != "t" || req.RequestID != "r" {
					t.Errorf("step %s got the envelope %+v, want tools/call for %v with trace t and request r", req.Tool, req, caller)
				}
				got[req.Tool] = string(req.Arguments)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("arguments mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalReportsAnExecutionThatFails(t *testing.T) {
	// A step that answers JSON that is no invoke.Response cannot happen with
	// lambdafn; a definition whose path misses is a States.Runtime error.
	def := []byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.missing","End":true}}}`)
	r, err := pipeline.NewLocalDefinition(def, catalog.Default(), &faultyInvoker{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), pipeline.Input{Question: "q"})
	var e *pipeline.ExecutionError
	if !errors.As(err, &e) || e.Err != "States.Runtime" || e.Status != "FAILED" {
		t.Errorf("Run: %v, want an pipeline.ExecutionError FAILED States.Runtime", err)
	}
}

func TestTheDefinitionNamesEveryTaskAndOnlyThem(t *testing.T) {
	var def struct {
		States map[string]struct {
			Type       string
			Resource   string
			Parameters struct {
				FunctionName string
				Payload      struct {
					Tool string `json:"tool"`
				}
			}
		}
	}
	if err := json.Unmarshal(infra.RAGPipeline, &def); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, s := range def.States {
		if s.Type == "Task" {
			if s.Resource != pipeline.LambdaInvokeResource {
				t.Errorf("task %s: resource %s, want %s", name, s.Resource, pipeline.LambdaInvokeResource)
			}
			got[s.Parameters.FunctionName] = s.Parameters.Payload.Tool
		}
	}
	want := map[string]string{}
	for _, task := range catalog.Default().PipelineTasks() {
		want["${"+task.Substitution+"}"] = task.Tool
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks mismatch (-catalog +definition):\n%s", diff)
	}
}
