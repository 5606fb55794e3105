// Package pipeline runs the RAG pipeline (rephrase -> retrieve -> grade) that
// infra/statemachines/rag_pipeline.asl.json defines: on AWS by starting a
// synchronous execution of the deployed Express state machine
// (package pipeline/stepfunctions), on a laptop and in tests by running that same
// definition with shared/statemachine, each step invoked through an
// [invoke.Invoker] ([Local]). There is no second, hand-kept copy of the
// pipeline: both runners execute the one ASL file.
//
//	var r pipeline.Runner = deps.Pipeline // config/stepfunctions (AWS) or package local (in process)
//	out, err := r.Run(ctx, pipeline.Input{
//		Request:  pipeline.Request{Caller: caller, TraceID: traceID, RequestID: requestID},
//		Question: "how do I rotate keys?", ThreadID: "chat_1", TopK: 5, Mode: "hybrid",
//	})
//	// out.ContextInput is the query used; out.Degraded names the steps that fell back.
//
// Every step failure degrades rather than fails (rephrase -> the original
// question; retrieve -> no documents; grade -> relevant "yes"), so Run
// returns an error only when the execution itself fails: the state machine
// cannot be started, times out, or meets a States.Runtime error. The caller's
// own mistake is not a step failure: when the retriever refuses the arguments
// (invalid_argument, or not_found for a store that does not exist), the run
// ends with [Output.Refusal] set, for the tool to fail the call with.
package pipeline

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Runner runs the pipeline once. Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, in Input) (Output, error)
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, in Input) (Output, error)

// Run implements [Runner].
func (f RunnerFunc) Run(ctx context.Context, in Input) (Output, error) { return f(ctx, in) }

// Request identifies the call the pipeline runs for; every step receives it
// in its invoke.Request.
type Request struct {
	Caller    tenant.Caller `json:"caller"`
	TraceID   string        `json:"trace_id"`
	RequestID string        `json:"request_id"`
}

// Input is the state machine's input.
type Input struct {
	Request  Request `json:"request"`
	Question string  `json:"question"`
	// ThreadID names the conversation (a memory family conversation id) the
	// rephrase step reads; if empty, it does not rephrase.
	ThreadID string `json:"thread_id,omitempty"`
	// Stores are the vector store aliases to search; if empty, the retriever
	// selects stores itself.
	Stores []string `json:"stores,omitempty"`
	// TopK and Mode are the retriever's top_k and mode. If zero, Run uses
	// [DefaultTopK] and [DefaultMode] ([Input.WithDefaults]).
	TopK   int                 `json:"top_k"`
	Mode   string              `json:"mode"`
	Filter map[string][]string `json:"filter,omitempty"`
	// LLMModel and EmbeddingModel are the request's model overrides, empty
	// for the configured ones: the rephrase and grade steps generate with
	// LLMModel, the retriever embeds with EmbeddingModel.
	LLMModel       string `json:"llm_model,omitempty"`
	EmbeddingModel string `json:"embedding_model,omitempty"`
	// GraphTraversalDepth, if set, makes the retriever fuse the stores'
	// entity graphs into its ranking (rag_graphrag).
	GraphTraversalDepth *int `json:"graph_traversal_depth,omitempty"`
	// SkipGrade keeps the retrieved documents without grading them (a
	// thread with vector_search.grade off): the grade step is never invoked,
	// so it costs no model call, and the output says so (GradeSkipped).
	SkipGrade bool `json:"skip_grade,omitempty"`
}

// The defaults of Input.TopK and Input.Mode, as the retriever's.
const (
	DefaultTopK = 5
	DefaultMode = "hybrid"
)

// WithDefaults returns in with a zero TopK or Mode replaced by its default:
// the state machine needs both.
func (in Input) WithDefaults() Input {
	if in.TopK == 0 {
		in.TopK = DefaultTopK
	}
	if in.Mode == "" {
		in.Mode = DefaultMode
	}
	return in
}

// Document is one retrieved passage, as the retriever returns it and the
// grade step and the pipeline tools take it.
type Document struct {
	DocID    string            `json:"doc_id"`
	ChunkID  string            `json:"chunk_id,omitempty"`
	Content  string            `json:"content"`
	Score    float64           `json:"score"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Store    string            `json:"store,omitempty"`
}

// Output is what a run produced, decoded from the state machine's output by
// [DecodeOutput]. A run the retriever refused has only Question and Refusal.
type Output struct {
	// Question is the original question; ContextInput the query actually
	// used (the rephrased question, or the original one).
	Question       string     `json:"question"`
	ContextInput   string     `json:"context_input"`
	Rephrased      bool       `json:"rephrased"`
	Documents      []Document `json:"documents"`
	SearchedStores []string   `json:"searched_stores"`
	// Graph is what the entity graph contributed to the retrieval; empty
	// unless the input set GraphTraversalDepth and the retrieval ran.
	Graph Graph `json:"graph"`
	// StoreSelection says how the retriever chose the stores it searched;
	// empty when the input named them or the retrieval fell back.
	StoreSelection StoreSelection `json:"store_selection"`
	// Relevant is "yes" or "no"; Graded is false when grading fell back
	// or was skipped. GradeSkipped says the input turned grading off
	// (SkipGrade): the documents are kept as relevant, and the grade step
	// did not run.
	Relevant     string `json:"relevant"`
	Graded       bool   `json:"graded"`
	GradeSkipped bool   `json:"grade_skipped"`
	// Degraded names the steps that fell back, in pipeline order:
	// "rephrase", "retrieve", "grade". The state machine reports them as
	// flags ("fallback"), which DecodeOutput lists here.
	Degraded []string `json:"-"`
	Steps    Steps    `json:"steps"`
	// Refusal is the retriever's error when it refused the caller's
	// arguments (kind invalid_argument or not_found).
	Refusal *invoke.Error `json:"refusal,omitempty"`
}

// Graph is the retriever's account of a retrieval fused with the stores'
// entity graphs (vector.GraphSearch, as the state machine passes it on).
type Graph struct {
	EntitiesMatched []string `json:"entities_matched,omitempty"`
	Depth           *int     `json:"graph_traversal_depth,omitempty"`
	EntitiesReached int      `json:"entities_reached,omitempty"`
	GraphChunks     int      `json:"graph_chunks,omitempty"`
	GraphOnly       int      `json:"graph_only_documents,omitempty"`
	// ExtractionFallbacks: chunks whose entities the configured generator failed to extract.
	ExtractionFallbacks int `json:"extraction_fallback_chunks,omitempty"`
}

// StoreSelection is the retriever's account of how it chose the stores a
// retrieval naming none searched (vector.StoreSelection, as the state
// machine passes it on).
type StoreSelection struct {
	By       string   `json:"by,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Model    string   `json:"model,omitempty"`
	Fallback string   `json:"fallback,omitempty"`
	Ignored  []string `json:"ignored,omitempty"`
}

// Steps says which provider and model each step used: the generator that
// rephrased and graded, the embedder that retrieved. Both are empty for a
// step that fell back or needed no model (a bm25 retrieval, a grade of no
// documents).
type Steps struct {
	Rephrase StepModel `json:"rephrase"`
	Retrieve StepModel `json:"retrieve"`
	Grade    StepModel `json:"grade"`
}

// StepModel is a provider and model.
type StepModel struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}
