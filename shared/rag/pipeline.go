package rag

import (
	"cmp"
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The steps a pipeline run may fall back on (seed 000's degradation).
const (
	StepRephrase = "rephrase"
	StepRetrieve = "retrieve"
	StepGrade    = "grade"
)

// PipelineRequest identifies the call a pipeline run serves: the steps act
// for its caller and log under its ids.
type PipelineRequest struct {
	Caller    tenant.Caller `json:"caller"`
	TraceID   string        `json:"trace_id,omitempty"`
	RequestID string        `json:"request_id,omitempty"`
}

// PipelineInput is the input of one run of the rephrase -> retrieve -> grade
// pipeline (the state machine's input).
type PipelineInput struct {
	Request  PipelineRequest     `json:"request"`
	Question string              `json:"question"`
	ThreadID string              `json:"thread_id,omitempty"`
	Stores   []string            `json:"stores,omitempty"`
	TopK     int                 `json:"top_k"`
	Mode     string              `json:"mode,omitempty"`
	Filter   map[string][]string `json:"filter,omitempty"`
}

// StepInfo names the provider and model a step used.
type StepInfo struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// PipelineOutput is what one pipeline run produced (the state machine's
// output). A run the retriever refused has only Question and Refusal.
type PipelineOutput struct {
	Question       string        `json:"question"`
	ContextInput   string        `json:"context_input"`
	Rephrased      bool          `json:"rephrased"`
	Documents      []Document    `json:"documents"`
	SearchedStores []string      `json:"searched_stores"`
	Relevant       string        `json:"relevant"`
	Graded         bool          `json:"graded"`
	Degraded       []string      `json:"degraded"`
	Steps          PipelineSteps `json:"steps"`
	Refusal        *Refusal      `json:"refusal,omitempty"`
}

// PipelineSteps names the provider and model each step used: the generator
// that rephrased and graded, the embedder that retrieved. Both are empty for
// a step that fell back or did not need a model.
type PipelineSteps struct {
	Rephrase StepInfo `json:"rephrase"`
	Retrieve StepInfo `json:"retrieve"`
	Grade    StepInfo `json:"grade"`
}

// Refusal is the retriever's refusal of the caller's arguments, as the step
// classified it: kind invalid_argument (Field names the argument) or
// not_found (a store that does not exist). It is the caller's mistake, not a
// step failure: the run ends, and the call fails with [Refusal.Err].
type Refusal struct {
	Kind    string `json:"kind"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Err returns the refusal as the error of the call, naming the request's
// field at fault: the retriever's question is the request's query, and a
// store it did not find is one of stores.
func (r *Refusal) Err() error {
	msg := strings.TrimPrefix(r.Message, r.Field+": ")
	if fault.Kind(r.Kind) == fault.KindNotFound {
		return &fault.Error{Kind: fault.KindNotFound, Field: "stores", Message: msg}
	}
	field := cmp.Or(r.Field, "arguments")
	if field == "question" {
		field = "query"
	}
	return fault.Invalid(field, "%s", msg)
}

// Runner runs the pipeline: on AWS the Express state machine, locally the same
// state machine definition interpreted in process. A step that fails falls
// back inside the run (and is listed in Degraded); a retriever that refuses
// the caller's arguments ends it with Refusal; Run itself fails only when the
// run as a whole could not happen.
type Runner interface {
	Run(ctx context.Context, in PipelineInput) (PipelineOutput, error)
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, in PipelineInput) (PipelineOutput, error)

// Run implements [Runner].
func (f RunnerFunc) Run(ctx context.Context, in PipelineInput) (PipelineOutput, error) {
	return f(ctx, in)
}
