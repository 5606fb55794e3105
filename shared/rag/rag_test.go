package rag

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/text"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// newService returns a service on a fresh embedded table with the test
// generator and a corpus runner holding the medical corpus for alice.
func newService(t *testing.T, opts Options) (*Service, *corpusRunner, *testGen, store.Table) {
	t.Helper()
	tbl := storetest.OpenEmbedded(t)
	gen := &testGen{}
	runner := &corpusRunner{steps: NewSteps(tbl, gen)}
	runner.add(alice.Tenant, medical...)
	if opts.Generator == nil {
		opts.Generator = gen
	}
	if opts.Runner == nil {
		opts.Runner = runner
	}
	return New(tbl, opts), runner, gen, tbl
}

func TestInvalidRequestsNameTheField(t *testing.T) {
	svc, runner, _, _ := newService(t, Options{})
	ctx := context.Background()
	q := "What are the symptoms of diabetes?"
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"EmptyQuery", func() error { _, err := svc.Basic(ctx, alice, BasicInput{Request{Query: ""}}); return err }, "query"},
		{"BlankQuery", func() error { _, err := svc.Basic(ctx, alice, BasicInput{Request{Query: "  \n"}}); return err }, "query"},
		{"QueryOf8001Characters", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: strings.Repeat("é", 8001)}})
			return err
		}, "query"},
		{"TopKZero", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, TopK: intp(0)}})
			return err
		}, "top_k"},
		{"TopK51", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, TopK: intp(51)}})
			return err
		}, "top_k"},
		{"RequestIDNotAUUIDv4", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, RequestID: "550e8400-e29b-11d4-a716-446655440000"}})
			return err
		}, "request_id"},
		{"UnknownMode", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Mode: "fuzzy"}})
			return err
		}, "mode"},
		{"BadThreadID", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, ThreadID: "a#b"}})
			return err
		}, "thread_id"},
		{"BadConversationID", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, ConversationID: "a#b"}})
			return err
		}, "conversation_id"},
		{"ThreadAndConversationDiffer", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, ThreadID: "chat_1", ConversationID: "chat_2"}})
			return err
		}, "conversation_id"},
		{"StoreAliasWithCapitals", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Stores: []string{"kb", "Manuals"}}})
			return err
		}, "stores"},
		{"StoreAliasOf65Characters", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Stores: []string{strings.Repeat("a", 65)}}})
			return err
		}, "stores"},
		{"EmptyStoreAlias", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Stores: []string{""}}})
			return err
		}, "stores"},
		{"TooManyStores", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Stores: slices.Repeat([]string{"kb"}, vector.MaxSearchStores+1)}})
			return err
		}, "stores"},
		{"TooManyFilterKeys", func() error {
			f := map[string][]string{}
			for i := range vector.MaxFilterKeys + 1 {
				f[fmt.Sprint("k", i)] = []string{"v"}
			}
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Filter: f}})
			return err
		}, "filter"},
		{"TooManyFilterValues", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Filter: map[string][]string{"lang": slices.Repeat([]string{"en"}, vector.MaxFilterValues+1)}}})
			return err
		}, "filter"},
		{"FilterKeyWithoutValues", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, Filter: map[string][]string{"lang": {}}}})
			return err
		}, "filter"},
		{"ConfidenceBelowZero", func() error {
			_, err := svc.CRAG(ctx, alice, CRAGInput{Request: Request{Query: q}, ConfidenceThreshold: floatp(-0.1)})
			return err
		}, "confidence_threshold"},
		{"ConfidenceAboveOne", func() error {
			_, err := svc.CRAG(ctx, alice, CRAGInput{Request: Request{Query: q}, ConfidenceThreshold: floatp(1.5)})
			return err
		}, "confidence_threshold"},
		{"UnknownCorrectionStrategy", func() error {
			_, err := svc.CRAG(ctx, alice, CRAGInput{Request: Request{Query: q}, CorrectionStrategy: "pray"})
			return err
		}, "correction_strategy"},
		{"CandidatePoolBelowTopK", func() error {
			_, err := svc.BasicRerank(ctx, alice, RerankInput{Request: Request{Query: q, TopK: intp(10)}, CandidatePool: intp(5)})
			return err
		}, "candidate_pool"},
		{"CandidatePoolAbove50", func() error {
			_, err := svc.BasicRerank(ctx, alice, RerankInput{Request: Request{Query: q}, CandidatePool: intp(51)})
			return err
		}, "candidate_pool"},
		{"BasicWithALanguageModelOutsideTheAllowList", func() error {
			_, err := svc.Basic(ctx, alice, BasicInput{Request{Query: q, LLMModel: "gpt-9"}})
			return err
		}, "llm_model"},
		{"RerankWithALanguageModelOutsideTheAllowList", func() error {
			_, err := svc.BasicRerank(ctx, alice, RerankInput{Request: Request{Query: q, LLMModel: "gpt-9"}})
			return err
		}, "llm_model"},
		{"CRAGWithALanguageModelOutsideTheAllowList", func() error {
			_, err := svc.CRAG(ctx, alice, CRAGInput{Request: Request{Query: q, LLMModel: "gpt-9"}})
			return err
		}, "llm_model"},
		{"ColbertWithALanguageModelOutsideTheAllowList", func() error {
			_, err := svc.PylateColbert(ctx, alice, ColbertInput{Request: Request{Query: q, LLMModel: "gpt-9"}})
			return err
		}, "llm_model"},
		{"UnknownCandidateSource", func() error {
			_, err := svc.PylateColbert(ctx, alice, ColbertInput{Request: Request{Query: q}, CandidateSource: "oracle"})
			return err
		}, "candidate_source"},
		{"InteractionThresholdAboveOne", func() error {
			_, err := svc.PylateColbert(ctx, alice, ColbertInput{Request: Request{Query: q}, InteractionThreshold: floatp(1.5)})
			return err
		}, "interaction_threshold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.KindInvalid || fe.Field != tc.field {
				t.Fatalf("got %v, want an invalid-argument error naming %s", err, tc.field)
			}
			if !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("message %q does not begin with the field", err)
			}
		})
	}
	if len(runner.runs) != 0 {
		t.Errorf("invalid calls ran the pipeline %d times", len(runner.runs))
	}
	t.Run("InvalidCallsAreNotRecordedAsFailures", func(t *testing.T) {
		h, err := svc.Health(ctx, alice, HealthInput{})
		if err != nil {
			t.Fatal(err)
		}
		for p, st := range h.PipelineStatuses {
			if st.Queries != 0 {
				t.Errorf("%s counts %d queries after only invalid calls", p, st.Queries)
			}
		}
	})
}

func TestTheLongestQueryIsAccepted(t *testing.T) {
	svc, _, _, _ := newService(t, Options{})
	if _, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: strings.Repeat("é", MaxQueryChars)}}); err != nil {
		t.Fatalf("a query of exactly %d characters: %v", MaxQueryChars, err)
	}
}

var uuidV4 = regexp.MustCompile(UUIDv4Pattern)

func TestBasicAnswersFromTheRelevantDocumentsWithSources(t *testing.T) {
	svc, runner, gen, _ := newService(t, Options{})
	const id = "550e8400-e29b-41d4-a716-446655440000"
	resp, err := svc.Basic(callcontext.NewContext(context.Background(), callcontext.Call{TraceID: "trace-1"}), alice, BasicInput{Request{Query: "What are the symptoms of diabetes?", TopK: intp(3), RequestID: id}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ResponseID != id {
		t.Errorf("response_id %q, want the request_id %q", resp.ResponseID, id)
	}
	if want := "Common symptoms of diabetes include increased thirst, frequent urination and fatigue"; resp.Answer != want {
		t.Errorf("answer %q, want %q", resp.Answer, want)
	}
	var ids []string
	for i, d := range resp.RetrievedDocuments {
		ids = append(ids, d.DocID)
		if i > 0 && d.Score > resp.RetrievedDocuments[i-1].Score {
			t.Errorf("documents are not in descending score order: %+v", resp.RetrievedDocuments)
		}
	}
	if diff := cmp.Diff([]string{"d1", "d2", "d4"}, ids); diff != "" {
		t.Errorf("documents mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"source": "medical_textbook_ch5.pdf", "page": "127"}, resp.RetrievedDocuments[0].Metadata); diff != "" {
		t.Errorf("metadata mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"medical_textbook_ch5.pdf", "d4"}, resp.Sources); diff != "" {
		t.Errorf("sources (deduplicated, doc_id without a source) mismatch (-want +got):\n%s", diff)
	}
	m := resp.Metadata
	if m.PipelineName != "basic" || m.Relevant != "yes" || !m.Graded || m.Provider != "test" || m.Model != "extractive" ||
		m.ContextInput != "What are the symptoms of diabetes?" || len(m.Degraded) != 0 || m.Steps.Grade.Provider != "test" ||
		m.Steps.Retrieve != (pipeline.StepModel{Provider: "test", Model: "bag-of-words"}) || m.CorrectionApplied != nil || m.Reranker != "" {
		t.Errorf("metadata %+v", m)
	}
	pm := resp.PerformanceMetrics
	if pm.ExecutionTimeMS < 0 || pm.RetrievalTimeMS < 0 || pm.GenerationTimeMS < 0 || pm.TokensUsed != 15 || m.TokensUsed != 15 || m.ExecutionTimeMS != pm.ExecutionTimeMS {
		t.Errorf("performance metrics %+v, metadata %+v", pm, m)
	}
	if _, err := time.Parse(time.RFC3339Nano, m.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", m.Timestamp, err)
	}
	if got := runner.runs[0]; got.TopK != 3 || !cmp.Equal(got.Request.Caller, alice) || got.Request.RequestID != id || got.Request.TraceID != "trace-1" {
		t.Errorf("the pipeline ran with %+v", got)
	}
	if diff := cmp.Diff([]provider.Task{provider.TaskGrade, provider.TaskAnswer}, gen.tasks()); diff != "" {
		t.Errorf("generator calls mismatch (-want +got):\n%s", diff)
	}
	if ans := gen.calls[len(gen.calls)-1]; ans.MaxTokens != DefaultLimits.MaxTokens || len(ans.Documents) != 3 {
		t.Errorf("the answer was asked with max tokens %d and %d documents", ans.MaxTokens, len(ans.Documents))
	}
}

func TestRequestOptionsShapeTheResponse(t *testing.T) {
	svc, runner, _, _ := newService(t, Options{})
	resp, err := svc.Basic(context.Background(), alice, BasicInput{Request{
		Query: "diabetes symptoms", IncludeSources: boolp(false), IncludeMetadata: boolp(false),
		Stores: []string{"medical"}, Mode: "bm25", Filter: map[string][]string{"lang": {"en"}}, ThreadID: "chat_1",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !uuidV4.MatchString(resp.ResponseID) {
		t.Errorf("generated response_id %q is not a UUID v4", resp.ResponseID)
	}
	if resp.Sources == nil || len(resp.Sources) != 0 {
		t.Errorf("sources %#v, want an empty list", resp.Sources)
	}
	for _, d := range resp.RetrievedDocuments {
		if d.Metadata == nil || len(d.Metadata) != 0 {
			t.Errorf("document metadata %#v, want an empty object", d.Metadata)
		}
	}
	in := runner.runs[0]
	if in.Mode != "bm25" || !cmp.Equal(in.Stores, []string{"medical"}) || !cmp.Equal(in.Filter, map[string][]string{"lang": {"en"}}) || in.ThreadID != "chat_1" || in.TopK != DefaultTopK {
		t.Errorf("the pipeline ran with %+v", in)
	}
}

func TestConversationIDNamesTheThreadToo(t *testing.T) {
	svc, runner, _, _ := newService(t, Options{})
	for _, r := range []Request{
		{Query: "diabetes", ConversationID: "chat_1"},
		{Query: "diabetes", ThreadID: "chat_1", ConversationID: "chat_1"},
	} {
		if _, err := svc.Basic(context.Background(), alice, BasicInput{r}); err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
	}
	for i, in := range runner.runs {
		if in.ThreadID != "chat_1" {
			t.Errorf("run %d read the conversation %q, want chat_1", i, in.ThreadID)
		}
	}
}

func TestARetrieverRefusalFailsTheCallNamingTheField(t *testing.T) {
	svc, _, gen, _ := newService(t, Options{})
	ctx := context.Background()
	for _, call := range []func() (Response, error){
		func() (Response, error) {
			return svc.Basic(ctx, alice, BasicInput{Request{Query: "diabetes", Stores: []string{"docs", "missing"}}})
		},
		func() (Response, error) {
			return svc.BasicRerank(ctx, alice, RerankInput{Request: Request{Query: "diabetes", Stores: []string{"missing"}}})
		},
		func() (Response, error) {
			return svc.CRAG(ctx, alice, CRAGInput{Request: Request{Query: "diabetes", Stores: []string{"missing"}}})
		},
	} {
		resp, err := call()
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.KindNotFound || fe.Field != "stores" || err.Error() != `stores: vector store "missing" does not exist` {
			t.Errorf("got %+v, %v; want not_found naming stores", resp, err)
		}
	}
	if tasks := gen.tasks(); slices.Contains(tasks, provider.TaskAnswer) {
		t.Errorf("an answer was written for a refused call: %v", tasks)
	}
	h, err := svc.Health(ctx, alice, HealthInput{})
	if err != nil {
		t.Fatal(err)
	}
	for p, st := range h.PipelineStatuses {
		if st.Queries != 0 {
			t.Errorf("%s counts %d queries: a refused call is the caller's mistake, not the pipeline's", p, st.Queries)
		}
	}
}

func TestARefusalNamesTheRequestsField(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal invoke.Error
		kind    fault.Kind
		message string
	}{
		{"a store that does not exist is one of stores", invoke.Error{Kind: "not_found", Message: `vector store "kb" does not exist`}, fault.KindNotFound, `stores: vector store "kb" does not exist`},
		{"an invalid argument keeps its field", invoke.Error{Kind: "invalid_argument", Field: "filter", Message: "filter: has 17 keys"}, fault.KindInvalid, "filter: has 17 keys"},
		{"the retriever's question is the request's query", invoke.Error{Kind: "invalid_argument", Field: "question", Message: "question: must not be empty"}, fault.KindInvalid, "query: must not be empty"},
		{"an invalid argument without a field blames the arguments", invoke.Error{Kind: "invalid_argument", Message: "malformed"}, fault.KindInvalid, "arguments: malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := refusal(&tc.refusal)
			if fault.KindOf(err) != tc.kind || err.Error() != tc.message {
				t.Errorf("refusal = %v (%s), want %s: %s", err, fault.KindOf(err), tc.kind, tc.message)
			}
		})
	}
}

func TestDocumentsGradedNotRelevantAreNotUsed(t *testing.T) {
	svc, _, gen, _ := newService(t, Options{})
	resp, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "how do I patch the kernel?"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Answer != "" || len(resp.RetrievedDocuments) != 0 || len(resp.Sources) != 0 || resp.Metadata.Relevant != "no" {
		t.Errorf("response %+v, want an answer written without documents", resp)
	}
	// With documents retrieved but graded irrelevant, the answer is asked without them.
	gen.fn = map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
		provider.TaskGrade: func(provider.GenerateRequest) (provider.Generation, error) {
			return provider.Generation{Text: "No."}, nil
		},
		provider.TaskAnswer: func(r provider.GenerateRequest) (provider.Generation, error) {
			return provider.Generation{Text: "from general knowledge"}, nil
		},
	}
	resp, err = svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
	if err != nil {
		t.Fatal(err)
	}
	if last := gen.calls[len(gen.calls)-1]; last.Task != provider.TaskAnswer || len(last.Documents) != 0 {
		t.Errorf("the answer was asked with %d documents", len(last.Documents))
	}
	if resp.Answer != "from general knowledge" || len(resp.RetrievedDocuments) != 0 || resp.Metadata.Discarded != 2 || resp.Metadata.Relevant != "no" {
		t.Errorf("response %+v", resp)
	}
}

func TestFailingStepsDegradeAsTheSeedSays(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     []string
		relevant string
		graded   bool
		docs     int
	}{
		{"RephraseFailsTheOriginalQuestionIsUsed", []string{StepRephrase}, "yes", true, 2},
		{"RetrievalFailsNoDocuments", []string{StepRetrieve}, "no", true, 0},
		{"GradingFailsTheDocumentsAreKept", []string{StepGrade}, "yes", false, 2},
		{"EverythingFails", []string{StepRephrase, StepRetrieve, StepGrade}, "yes", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, runner, _, _ := newService(t, Options{})
			runner.fail = map[string]bool{}
			for _, s := range tc.fail {
				runner.fail[s] = true
			}
			resp, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
			if err != nil {
				t.Fatalf("a failing step failed the call: %v", err)
			}
			m := resp.Metadata
			if diff := cmp.Diff(tc.fail, m.Degraded); diff != "" {
				t.Errorf("degraded mismatch (-want +got):\n%s", diff)
			}
			if m.Relevant != tc.relevant || m.Graded != tc.graded || len(resp.RetrievedDocuments) != tc.docs || m.ContextInput != "diabetes" {
				t.Errorf("metadata %+v with %d documents", m, len(resp.RetrievedDocuments))
			}
			h, _ := svc.Health(context.Background(), alice, HealthInput{})
			if st := h.PipelineStatuses[PipelineBasic]; st.Queries != 1 || st.Degraded != 1 || st.ErrorRate != 0 {
				t.Errorf("health recorded %+v, want one degraded success", st)
			}
		})
	}
}

func TestAFailedRunOrAnswerFailsTheCall(t *testing.T) {
	boom := errors.New("states.Runtime: execution failed")
	svc, _, _, _ := newService(t, Options{Runner: pipeline.RunnerFunc(func(context.Context, pipeline.Input) (pipeline.Output, error) { return pipeline.Output{}, boom })})
	_, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
	if fault.KindOf(err) != fault.KindUnavailable || !errors.Is(err, boom) {
		t.Errorf("got %v, want unavailable wrapping the runner's error", err)
	}
	svc, _, gen, _ := newService(t, Options{})
	gen.fn = map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
		provider.TaskAnswer: func(provider.GenerateRequest) (provider.Generation, error) { return provider.Generation{}, boom },
	}
	_, err = svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
	if fault.KindOf(err) != fault.KindUnavailable {
		t.Errorf("got %v, want unavailable", err)
	}
	h, _ := svc.Health(context.Background(), alice, HealthInput{})
	if st := h.PipelineStatuses[PipelineBasic]; st.Queries != 1 || st.ErrorRate != 1 || st.Status != Unavailable {
		t.Errorf("health %+v after one failed call", st)
	}
	if _, err := New(storetest.OpenEmbedded(t), Options{}).Basic(context.Background(), alice, BasicInput{Request{Query: "x"}}); fault.KindOf(err) != fault.KindUnavailable {
		t.Errorf("an unconfigured service answered %v", err)
	}
}

func TestOneTenantNeverRetrievesAnothersDocuments(t *testing.T) {
	svc, runner, _, _ := newService(t, Options{})
	runner.add(bob.Tenant, pipeline.Document{DocID: "b1", Content: "Globex sells diabetes test strips.", Metadata: map[string]string{"source": "globex.pdf"}})
	resp, err := svc.Basic(context.Background(), bob, BasicInput{Request{Query: "diabetes symptoms"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.RetrievedDocuments {
		if d.DocID != "b1" {
			t.Errorf("bob retrieved %s", d.DocID)
		}
	}
	if got := runner.runs[0].Request.Caller; !cmp.Equal(got, bob) {
		t.Errorf("the pipeline ran for %+v", got)
	}
	h, _ := svc.Health(context.Background(), alice, HealthInput{})
	if q := h.PipelineStatuses[PipelineBasic].Queries; q != 0 {
		t.Errorf("alice's health counts bob's call: %d queries", q)
	}
}

// blockingRunner holds every run until release is closed, announcing each on started.
type blockingRunner struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingRunner) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return pipeline.Output{Question: in.Question, ContextInput: in.Question, Relevant: "no", Graded: true}, nil
	case <-ctx.Done():
		return pipeline.Output{}, ctx.Err()
	}
}

func TestACallPastItsTimeoutFailsClearly(t *testing.T) {
	br := &blockingRunner{started: make(chan struct{}, 2), release: make(chan struct{})}
	svc, _, _, _ := newService(t, Options{Runner: br, Limits: Limits{Timeout: 200 * time.Millisecond}})
	_, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
	if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "pipeline basic did not retrieve in time to write an answer within its limit") {
		t.Errorf("a run that does not end: got %v", err)
	}
	// An invocation deadline sooner than the limit shortens it, keeping a
	// margin to answer. The run's own deadline shows it, whatever the load.
	var runBy time.Time
	waiting := pipeline.RunnerFunc(func(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
		runBy, _ = ctx.Deadline()
		<-ctx.Done()
		return pipeline.Output{}, ctx.Err()
	})
	svc, _, _, _ = newService(t, Options{Runner: waiting})
	ctx, cancel := context.WithTimeout(context.Background(), DeadlineMargin+200*time.Millisecond)
	defer cancel()
	callBy, _ := ctx.Deadline()
	_, err = svc.Basic(ctx, alice, BasicInput{Request{Query: "diabetes"}})
	if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "did not retrieve in time") {
		t.Errorf("a run cut short by the invocation's deadline: got %v", err)
	}
	if runBy.IsZero() || runBy.After(callBy.Add(-DeadlineMargin)) {
		t.Errorf("the run had until %v, the invocation until %v: want at least %v kept", runBy, callBy, DeadlineMargin)
	}
	// An answer that does not end is cut off at the limit.
	instant := pipeline.RunnerFunc(func(_ context.Context, in pipeline.Input) (pipeline.Output, error) {
		return pipeline.Output{Question: in.Question, ContextInput: in.Question, Relevant: "yes", Graded: true}, nil
	})
	stuck := &testGen{fn: map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
		provider.TaskAnswer: func(provider.GenerateRequest) (provider.Generation, error) {
			time.Sleep(100 * time.Millisecond)
			return provider.Generation{}, context.DeadlineExceeded
		},
	}}
	svc, _, _, _ = newService(t, Options{Runner: instant, Generator: stuck, Limits: Limits{Timeout: 20 * time.Millisecond}})
	_, err = svc.Basic(context.Background(), alice, BasicInput{Request{Query: "diabetes"}})
	if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "did not finish within its limit of 20ms") {
		t.Errorf("an answer that does not end: got %v", err)
	}
}

func TestRerankPutsDocumentsWithMoreQueryTermsCloserTogetherFirst(t *testing.T) {
	docs := []pipeline.Document{
		{DocID: "a", Content: "diabetes diabetes diabetes diabetes", Score: 0.9},
		{DocID: "b", Content: "thirst is common; much later in the text, unrelated words, then diabetes", Score: 0.8},
		{DocID: "c", Content: "nothing relevant here", Score: 0.7},
		{DocID: "d", Content: "diabetes causes thirst", Score: 0.6},
	}
	got := rerank("does diabetes cause thirst", docs)
	var ids []string
	for i, d := range got {
		ids = append(ids, d.DocID)
		if i > 0 && d.Score > got[i-1].Score {
			t.Errorf("scores not descending: %+v", got)
		}
	}
	// d holds the most query terms ("causes" matches "cause"), closest
	// together, and rises from last to first; a repeats one term and falls
	// behind both documents holding several.
	if diff := cmp.Diff([]string{"d", "b", "a", "c"}, ids); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
}

func TestBasicRerankRetrievesAPoolAndKeepsTopK(t *testing.T) {
	svc, runner, _, _ := newService(t, Options{})
	resp, err := svc.BasicRerank(context.Background(), alice, RerankInput{Request: Request{Query: "symptoms of diabetes", TopK: intp(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := runner.runs[0].TopK; got != 20 {
		t.Errorf("retrieved a pool of %d, want max(4*2, 20)", got)
	}
	m := resp.Metadata
	if m.PipelineName != "basic_rerank" || m.Reranker != RerankerName || m.Candidates == nil || *m.Candidates != 3 || len(resp.RetrievedDocuments) != 2 || resp.RetrievedDocuments[0].DocID != "d1" {
		t.Errorf("response %+v", resp)
	}
	if _, err := svc.BasicRerank(context.Background(), alice, RerankInput{Request: Request{Query: "diabetes", TopK: intp(3)}, CandidatePool: intp(3)}); err != nil || runner.runs[1].TopK != 3 {
		t.Errorf("candidate_pool 3: %v, pool %d", err, runner.runs[1].TopK)
	}
}

func TestCRAGCorrectsALowConfidenceRetrieval(t *testing.T) {
	t.Run("ConfidentRetrievalIsNotCorrected", func(t *testing.T) {
		svc, runner, _, _ := newService(t, Options{})
		resp, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: "symptoms of diabetes"}})
		if err != nil {
			t.Fatal(err)
		}
		m := resp.Metadata
		if m.PipelineName != "crag" || *m.CorrectionApplied || *m.ConfidenceScore != 1 || *m.InitialConfidenceScore != 1 || *m.ConfidenceThreshold != 0.8 || m.CorrectionStrategy != "rewrite" || len(runner.runs) != 1 {
			t.Errorf("metadata %+v after %d runs", m, len(runner.runs))
		}
	})
	t.Run("ExpandAddsInformativeTermsFromTheDocuments", func(t *testing.T) {
		svc, runner, _, _ := newService(t, Options{})
		q := "diabetes thirst insulin"
		resp, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: q}, CorrectionStrategy: "expand", ConfidenceThreshold: floatp(1)})
		if err != nil {
			t.Fatal(err)
		}
		m := resp.Metadata
		added, ok := strings.CutPrefix(m.CorrectedQuery, q+" ")
		if !ok || len(runner.runs) != 2 || runner.runs[1].Question != m.CorrectedQuery {
			t.Fatalf("metadata %+v after runs %+v", m, runner.runs)
		}
		for _, w := range strings.Fields(added) {
			if tt := terms(w); len(tt) != 1 || text.IDF(tt[0]) < text.GenericIDF || slices.Contains(terms(q), tt[0]) {
				t.Errorf("expansion added %q: a generic word or one of the question's", w)
			}
		}
	})
	t.Run("NoTimeLeftForASecondRunAnswersFromTheFirst", func(t *testing.T) {
		svc, runner, _, _ := newService(t, Options{Limits: Limits{Timeout: time.Second}})
		var runs int
		first := pipeline.RunnerFunc(func(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
			if runs++; runs == 1 {
				return runner.Run(ctx, in)
			}
			<-ctx.Done() // the second run never ends on its own
			return pipeline.Output{}, ctx.Err()
		})
		svc.runner = first
		resp, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: "diabetes thirst insulin"}, CorrectionStrategy: "expand", ConfidenceThreshold: floatp(1)})
		if err != nil {
			t.Fatalf("CRAG: %v, want the answer from the first run", err)
		}
		m := resp.Metadata
		if runs != 2 || *m.CorrectionApplied || m.CorrectedQuery != "" || len(resp.RetrievedDocuments) == 0 || resp.Answer == "" {
			t.Errorf("after %d runs: %+v", runs, resp)
		}
	})
	t.Run("ThresholdZeroNeverCorrects", func(t *testing.T) {
		svc, runner, _, _ := newService(t, Options{})
		resp, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: "kernel patches"}, ConfidenceThreshold: floatp(0)})
		if err != nil || *resp.Metadata.CorrectionApplied || len(runner.runs) != 1 {
			t.Errorf("%v, %+v", err, resp.Metadata)
		}
	})
}

// scripted is a [Runner] that returns its outputs in turn, recording the inputs.
type scripted struct {
	outs []pipeline.Output
	runs []pipeline.Input
}

func (r *scripted) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	out := r.outs[min(len(r.runs), len(r.outs)-1)]
	r.runs = append(r.runs, in)
	out.Question, out.ContextInput = in.Question, in.Question
	return out, nil
}

func graded(relevant string, contents ...string) pipeline.Output {
	out := pipeline.Output{Relevant: relevant, Graded: true, Degraded: []string{}, SearchedStores: []string{"docs"}}
	for i, c := range contents {
		out.Documents = append(out.Documents, pipeline.Document{DocID: fmt.Sprintf("d%d", i), Content: c, Score: float64(len(contents) - i)})
	}
	return out
}

func TestCRAGKeepsACorrectionOnlyWhenItIsMoreConfident(t *testing.T) {
	const q = "diabetes thirst fatigue"
	for _, tc := range []struct {
		name        string
		first, next pipeline.Output
		regrade     string // the grader's answer for the second run's documents and the user's question
		wantDocs    []string
		wantApplied bool
	}{
		{"AMoreConfidentCorrectionIsKept", graded("yes", "Diabetes causes thirst."), graded("yes", "Diabetes causes thirst and fatigue."), "yes",
			[]string{"Diabetes causes thirst and fatigue."}, true},
		{"AnEquallyConfidentCorrectionIsNotKept", graded("yes", "Diabetes causes thirst."), graded("yes", "Thirst is a sign of diabetes."), "yes",
			[]string{"Diabetes causes thirst."}, false},
		{"ALessConfidentCorrectionIsNotKept", graded("yes", "Diabetes causes thirst."), graded("yes", "Fatigue is common."), "yes",
			[]string{"Diabetes causes thirst."}, false},
		// Issue 10: rag_basic answered nothing, rag_crag "corrected" to an
		// off-topic passage its pipeline graded relevant to the corrected query.
		{"ACorrectionIrrelevantToTheUsersQuestionIsNotKept", graded("no", "Bake the bread at 220 degrees."), graded("yes", "Thirst and fatigue after a marathon."), "no",
			nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := storetest.OpenEmbedded(t)
			gen := &testGen{fn: map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
				provider.TaskRephrase: func(r provider.GenerateRequest) (provider.Generation, error) {
					return provider.Generation{Text: "diabetes symptoms"}, nil
				},
				provider.TaskGrade: func(r provider.GenerateRequest) (provider.Generation, error) {
					if r.Question != q {
						t.Errorf("the corrected retrieval was graded against %q, want the user's question", r.Question)
					}
					return provider.Generation{Text: tc.regrade}, nil
				},
			}}
			runner := &scripted{outs: []pipeline.Output{tc.first, tc.next}}
			svc := New(tbl, Options{Generator: gen, Runner: runner})
			resp, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: q}})
			if err != nil {
				t.Fatal(err)
			}
			var docs []string
			for _, d := range resp.RetrievedDocuments {
				docs = append(docs, d.Content)
			}
			m := resp.Metadata
			if diff := cmp.Diff(tc.wantDocs, docs); diff != "" {
				t.Errorf("documents mismatch (-want +got):\n%s", diff)
			}
			if *m.CorrectionApplied != tc.wantApplied || m.CorrectedQuery != "diabetes symptoms" || len(runner.runs) != 2 {
				t.Errorf("correction_applied %v, corrected_query %q after %d runs", *m.CorrectionApplied, m.CorrectedQuery, len(runner.runs))
			}
			var want float64
			if tc.wantDocs != nil {
				want = text.Coverage(q, tc.wantDocs[0])
			}
			if *m.ConfidenceScore != want || *m.InitialConfidenceScore > *m.ConfidenceScore {
				t.Errorf("confidence %v (initial %v), want %v", *m.ConfidenceScore, *m.InitialConfidenceScore, want)
			}
			if tc.wantDocs == nil && (resp.Answer != "" || m.Relevant != "no" || len(resp.Sources) != 0) {
				t.Errorf("response %+v, want no relevant documents, as rag_basic answers", resp)
			}
		})
	}
}

func TestCRAGRewriteReadsTheConversationAndTheBestPassages(t *testing.T) {
	svc, runner, gen, tbl := newService(t, Options{})
	mem := memory.New(tbl, nil)
	conv, err := mem.GetOrCreate(context.Background(), alice, memory.GetOrCreateInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"My father has diabetes.", "He is always tired."} {
		if _, err := mem.AddMessage(context.Background(), alice, memory.AddMessageInput{ConversationID: conv.ConversationID, Role: "user", Content: m}); err != nil {
			t.Fatal(err)
		}
	}
	var rewrite provider.GenerateRequest
	gen.fn = map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
		provider.TaskRephrase: func(r provider.GenerateRequest) (provider.Generation, error) {
			if r.System == rewriteSystem {
				rewrite = r
			}
			return provider.Generation{Text: r.Question + " fatigue"}, nil
		},
	}
	if _, err := svc.CRAG(context.Background(), alice, CRAGInput{Request: Request{Query: "signs of diabetes", ThreadID: conv.ConversationID}, ConfidenceThreshold: floatp(1)}); err != nil {
		t.Fatal(err)
	}
	var turns []string
	for _, h := range rewrite.History {
		turns = append(turns, h.Content)
	}
	if len(turns) < 3 || turns[0] != "My father has diabetes." || turns[1] != "He is always tired." || len(rewrite.Documents) == 0 || !strings.Contains(rewrite.Documents[0], "diabetes") {
		t.Errorf("the rewrite was asked with history %q and documents %q, want the conversation and the best passages", turns, rewrite.Documents)
	}
	if len(runner.runs) != 2 || runner.runs[1].Question != "signs of diabetes fatigue" {
		t.Errorf("runs %+v", runner.runs)
	}
}

func TestConfidence(t *testing.T) {
	docs := []pipeline.Document{{Content: "diabetes thirst"}, {Content: "diabetes"}}
	for _, tc := range []struct {
		name string
		out  pipeline.Output
		docs []pipeline.Document
		want float64
	}{
		{"NoDocuments", pipeline.Output{Relevant: "no", Graded: true}, nil, 0},
		{"GradedNotRelevant", pipeline.Output{Relevant: "no", Graded: true}, docs, 0},
		{"BestDocumentsCoverage", pipeline.Output{Relevant: "yes", Graded: true}, docs, text.Coverage("diabetes thirst insulin", "diabetes thirst")},
		{"FailedGradeCountsAsRelevant", pipeline.Output{Relevant: "yes", Graded: false}, docs, text.Coverage("diabetes thirst insulin", "diabetes thirst")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := confidence("diabetes thirst insulin", tc.out, tc.docs); got != tc.want {
				t.Errorf("confidence = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAnAllowedLanguageModelServesTheWholeCall names another allowed model
// per request: the pipeline's steps get it, and it writes the answer.
func TestAnAllowedLanguageModelServesTheWholeCall(t *testing.T) {
	large := &testGen{fn: map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){
		provider.TaskAnswer: func(req provider.GenerateRequest) (provider.Generation, error) {
			return provider.Generation{Text: "From the large model.", Provider: "test", Model: "large"}, nil
		},
	}}
	tbl := storetest.OpenEmbedded(t)
	gen := provider.WithGenerators(&testGen{}, "extractive", map[string]provider.Generator{"large": large})
	runner := &corpusRunner{steps: NewSteps(tbl, gen)}
	runner.add(alice.Tenant, medical...)
	svc := New(tbl, Options{Generator: gen, Runner: runner})
	resp, err := svc.Basic(context.Background(), alice, BasicInput{Request{Query: "What are the symptoms of diabetes?", LLMModel: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Metadata.Model != "large" || resp.Answer != "From the large model." {
		t.Errorf("answered by %s: %q", resp.Metadata.Model, resp.Answer)
	}
	if len(runner.runs) != 1 || runner.runs[0].LLMModel != "large" {
		t.Errorf("the pipeline ran with %+v, want llm_model large", runner.runs)
	}
	if len(large.calls) < 2 { // the grade, then the answer
		t.Errorf("the large model served %d generations, want the grade and the answer", len(large.calls))
	}
}
