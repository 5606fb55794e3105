package rag

import (
	"context"

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

// PipelineOutput is what one pipeline run produced (the state machine's output).
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
}

// PipelineSteps names the provider and model of the steps that generate;
// both are empty for a step that fell back or did not need the generator.
type PipelineSteps struct {
	Rephrase StepInfo `json:"rephrase"`
	Grade    StepInfo `json:"grade"`
}

// Runner runs the pipeline: on AWS the Express state machine, locally the same
// state machine definition interpreted in process. A step that fails falls
// back inside the run (and is listed in Degraded); Run itself fails only when
// the run as a whole could not happen.
type Runner interface {
	Run(ctx context.Context, in PipelineInput) (PipelineOutput, error)
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, in PipelineInput) (PipelineOutput, error)

// Run implements [Runner].
func (f RunnerFunc) Run(ctx context.Context, in PipelineInput) (PipelineOutput, error) {
	return f(ctx, in)
}

type traceKey struct{}

// WithTraceID returns ctx carrying the trace id of the call it serves: the
// pipeline's steps then log under it.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

func traceID(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}
