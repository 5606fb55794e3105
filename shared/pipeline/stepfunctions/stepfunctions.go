// Package stepfunctions runs the RAG pipeline on AWS, as a synchronous
// execution of the deployed Express state machine: the [pipeline.Runner]
// backend the functions that run the pipeline use when
// SWITCHBOARD_PIPELINE_ARN is set.
//
//	var r pipeline.Runner = stepfunctions.New(awsCfg, arn)
//	out, err := r.Run(ctx, in)
//
// It starts an execution with one signed StartSyncExecution call through
// shared/awsjson, not the SDK's Step Functions client, whose package
// initialisers would cost every cold start of those functions; and it is a
// package of its own so that only they link it. [pipeline.Local] runs the
// same definition in process.
package stepfunctions

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

// Runner runs the pipeline as a synchronous execution of the deployed
// Express state machine. It is safe for concurrent use.
type Runner struct {
	cfg aws.Config
	arn string
}

var _ pipeline.Runner = (*Runner)(nil)

// New returns a Runner that starts synchronous executions of the state
// machine stateMachineARN, calling Step Functions as cfg configures it
// (region, credentials, endpoint). It does no I/O.
func New(cfg aws.Config, stateMachineARN string) *Runner {
	return &Runner{cfg: cfg, arn: stateMachineARN}
}

// maxAnswer bounds StartSyncExecution's answer: an execution's input and
// output are at most 256 KiB each.
const maxAnswer = 1 << 20

// startSync is StartSyncExecution's request, and execution its answer.
type (
	startSync struct {
		StateMachineARN string `json:"stateMachineArn"`
		Input           string `json:"input"`
		TraceHeader     string `json:"traceHeader,omitempty"`
	}
	execution struct {
		Status string `json:"status"`
		Output string `json:"output"`
		Error  string `json:"error"`
		Cause  string `json:"cause"`
	}
)

// Run implements the [pipeline.Runner] interface. A FAILED or TIMED_OUT
// execution is a [*pipeline.ExecutionError].
func (r *Runner) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	input, err := invoke.Marshal(in.WithDefaults())
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("pipeline: encoding input: %w", err)
	}
	// The caller's X-Ray trace: with tracing on, the execution and the steps
	// it invokes join it.
	start := startSync{StateMachineARN: r.arn, Input: string(input), TraceHeader: callcontext.TraceHeader(ctx, in.Request.TraceID)}
	var out execution
	err = awsjson.Retry(ctx, func() (bool, error) {
		return awsjson.Call(ctx, &r.cfg, awsjson.StepFunctionsSync, "StartSyncExecution", start, &out, maxAnswer)
	})
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("pipeline: starting %s: %w", r.arn, err)
	}
	if out.Status != "SUCCEEDED" {
		return pipeline.Output{}, &pipeline.ExecutionError{Status: out.Status, Err: out.Error, Cause: out.Cause}
	}
	return pipeline.DecodeOutput([]byte(out.Output))
}
