// Package stepfunctions runs the RAG pipeline on AWS, as a synchronous
// execution of the deployed Express state machine: the [pipeline.Runner]
// backend the functions that run the pipeline use when
// SWITCHBOARD_PIPELINE_ARN is set.
//
//	client := sfn.NewFromConfig(awsCfg)
//	var r pipeline.Runner = stepfunctions.New(client, arn)
//	out, err := r.Run(ctx, in)
//
// It is a package of its own so that only the binaries that run the pipeline
// link the Step Functions client (and pay for its initialisation at cold
// start); [pipeline.Local] runs the same definition in process.
package stepfunctions

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

// API is the part of the Step Functions client [Runner] uses.
type API interface {
	StartSyncExecution(ctx context.Context, in *sfn.StartSyncExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartSyncExecutionOutput, error)
}

// Runner runs the pipeline as a synchronous execution of the deployed
// Express state machine. It is safe for concurrent use.
type Runner struct {
	client API
	arn    string
}

var _ pipeline.Runner = (*Runner)(nil)

// New returns a Runner that starts synchronous executions of the state
// machine stateMachineARN. It does no I/O.
func New(client API, stateMachineARN string) *Runner {
	return &Runner{client: client, arn: stateMachineARN}
}

// Run implements the [pipeline.Runner] interface. A FAILED or TIMED_OUT
// execution is a [*pipeline.ExecutionError].
func (r *Runner) Run(ctx context.Context, in pipeline.Input) (pipeline.Output, error) {
	input, err := invoke.Marshal(in.WithDefaults())
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("pipeline: encoding input: %w", err)
	}
	start := &sfn.StartSyncExecutionInput{StateMachineArn: &r.arn, Input: aws.String(string(input))}
	// The caller's X-Ray trace: with tracing on, the execution and the steps
	// it invokes join it.
	if h := callcontext.TraceHeader(ctx, in.Request.TraceID); h != "" {
		start.TraceHeader = &h
	}
	out, err := r.client.StartSyncExecution(ctx, start)
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("pipeline: starting %s: %w", r.arn, err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded {
		return pipeline.Output{}, &pipeline.ExecutionError{Status: string(out.Status), Err: aws.ToString(out.Error), Cause: aws.ToString(out.Cause)}
	}
	return pipeline.DecodeOutput([]byte(aws.ToString(out.Output)))
}

// WithoutHostPrefix is a Step Functions client option that stops the client
// prepending "sync-" to the endpoint's host for StartSyncExecution (the
// service's sync-states host): needed with a custom endpoint, such as a test
// server or an emulator on 127.0.0.1, whose host takes no prefix.
func WithoutHostPrefix(o *sfn.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("SwitchboardDisableHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}
