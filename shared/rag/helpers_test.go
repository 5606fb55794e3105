package rag

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// testGen is a generator for tests: extractive and deterministic by default
// (answer: the first document's first sentence; rephrase: the question plus
// the last user message of the history; grade: yes when a document shares a
// term with the question), each task replaceable to inject failures.
type testGen struct {
	mu    sync.Mutex
	calls []provider.GenerateRequest
	fn    map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error)
}

func (g *testGen) Generate(ctx context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	g.mu.Lock()
	g.calls = append(g.calls, req)
	fn := g.fn[req.Task]
	g.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return provider.Generation{}, err
	}
	if fn != nil {
		return fn(req)
	}
	out := provider.Generation{Provider: "test", Model: "extractive", InputTokens: 10, OutputTokens: 5}
	switch req.Task {
	case provider.TaskAnswer:
		if len(req.Documents) > 0 {
			out.Text, _, _ = strings.Cut(req.Documents[0], ".")
		}
	case provider.TaskRephrase:
		out.Text = req.Question
		for _, t := range slices.Backward(req.History) {
			if t.Role == "user" {
				out.Text = req.Question + " " + t.Content
				break
			}
		}
	case provider.TaskGrade:
		out.Text = "no"
		q := distinct(terms(req.Question))
		for _, d := range req.Documents {
			if c, _ := evidence(q, terms(d)); c > 0 {
				out.Text = "yes"
			}
		}
	}
	return out, nil
}

func (g *testGen) tasks() []provider.Task {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []provider.Task
	for _, c := range g.calls {
		out = append(out, c.Task)
	}
	return out
}

// corpusRunner is a test [pipeline.Runner]: rephrase and grade through [Steps], and a
// retrieval that ranks each tenant's own documents by query-term coverage
// and refuses a store named "missing" as not found. fail names steps to
// fail, to exercise the seed's degradation, which it applies as the state
// machine does.
type corpusRunner struct {
	steps *Steps
	mu    sync.Mutex
	docs  map[string][]pipeline.Document // by tenant
	fail  map[string]bool
	runs  []pipeline.Input
}

func (r *corpusRunner) add(tenant string, docs ...pipeline.Document) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.docs == nil {
		r.docs = map[string][]pipeline.Document{}
	}
	r.docs[tenant] = append(r.docs[tenant], docs...)
}

func (r *corpusRunner) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	r.mu.Lock()
	r.runs = append(r.runs, in)
	docs := slices.Clone(r.docs[in.Request.Caller.Tenant])
	fail := r.fail
	r.mu.Unlock()
	out := pipeline.Output{Question: in.Question, ContextInput: in.Question, Degraded: []string{}}
	c := in.Request.Caller
	reph, err := r.steps.Rephrase(ctx, c, RephraseInput{Question: in.Question, ThreadID: in.ThreadID, LLMModel: in.LLMModel})
	if fail[StepRephrase] || err != nil {
		out.Degraded = append(out.Degraded, StepRephrase)
	} else {
		out.ContextInput, out.Rephrased = reph.Question, reph.Rephrased
		out.Steps.Rephrase = pipeline.StepModel{Provider: reph.Provider, Model: reph.Model}
	}
	if slices.Contains(in.Stores, "missing") {
		return pipeline.Output{Question: in.Question, Refusal: &invoke.Error{Kind: "not_found", Message: `vector store "missing" does not exist`}}, nil
	}
	if fail[StepRetrieve] {
		out.Degraded = append(out.Degraded, StepRetrieve)
	} else {
		out.Steps.Retrieve = pipeline.StepModel{Provider: "test", Model: "bag-of-words"}
		q := distinct(terms(out.ContextInput))
		for _, d := range docs {
			if cov, _ := evidence(q, terms(d.Content)); cov > 0 {
				d.Score = cov
				out.Documents = append(out.Documents, d)
			}
		}
		out.Documents = byScore(out.Documents, in.TopK)
		out.SearchedStores = []string{"docs"}
	}
	grade, err := r.steps.Grade(ctx, c, GradeInput{Question: out.ContextInput, Documents: out.Documents, LLMModel: in.LLMModel})
	if fail[StepGrade] || err != nil {
		out.Degraded = append(out.Degraded, StepGrade)
		out.Relevant = "yes"
	} else {
		out.Relevant, out.Graded = grade.Relevant, true
		out.Steps.Grade = pipeline.StepModel{Provider: grade.Provider, Model: grade.Model}
	}
	return out, ctx.Err()
}

var (
	alice = tenant.Caller{Tenant: "acme", Principal: "alice"}
	bob   = tenant.Caller{Tenant: "globex", Principal: "bob"}
)

// medical is a small corpus about diabetes and teeth.
var medical = []pipeline.Document{
	{DocID: "d1", ChunkID: "d1#0", Content: "Common symptoms of diabetes include increased thirst, frequent urination and fatigue. See a doctor.", Metadata: map[string]string{"source": "medical_textbook_ch5.pdf", "page": "127"}},
	{DocID: "d2", ChunkID: "d2#0", Content: "Diabetes is managed with diet, exercise and insulin.", Metadata: map[string]string{"source": "medical_textbook_ch5.pdf", "page": "130"}},
	{DocID: "d3", ChunkID: "d3#0", Content: "Replace your toothbrush every three months, or sooner if the bristles fray.", Metadata: map[string]string{"source": "dental.md"}},
	{DocID: "d4", ChunkID: "d4#0", Content: "Symptoms of a cold include a runny nose."},
}

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }
func boolp(v bool) *bool        { return &v }
