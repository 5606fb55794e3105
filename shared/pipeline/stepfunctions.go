package pipeline

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// SFNAPI is the part of the Step Functions client [StepFunctions] uses.
type SFNAPI interface {
	StartSyncExecution(ctx context.Context, in *sfn.StartSyncExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartSyncExecutionOutput, error)
}

// StepFunctions runs the pipeline as a synchronous execution of the deployed
// Express state machine.
type StepFunctions struct {
	client SFNAPI
	arn    string
}

var _ Runner = (*StepFunctions)(nil)

// NewStepFunctions returns a Runner that starts synchronous executions of
// the state machine stateMachineARN.
func NewStepFunctions(client SFNAPI, stateMachineARN string) *StepFunctions {
	return &StepFunctions{client: client, arn: stateMachineARN}
}

// Run implements [Runner]. A FAILED or TIMED_OUT execution is an
// [*ExecutionError].
func (s *StepFunctions) Run(ctx context.Context, in Input) (Output, error) {
	input, err := invoke.Marshal(in.withDefaults())
	if err != nil {
		return Output{}, fmt.Errorf("pipeline: encoding input: %w", err)
	}
	start := &sfn.StartSyncExecutionInput{StateMachineArn: &s.arn, Input: aws.String(string(input))}
	out, err := s.client.StartSyncExecution(ctx, start)
	if err != nil {
		return Output{}, fmt.Errorf("pipeline: starting %s: %w", s.arn, err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded {
		return Output{}, &ExecutionError{Status: string(out.Status), Err: aws.ToString(out.Error), Cause: aws.ToString(out.Cause)}
	}
	return decodeOutput([]byte(aws.ToString(out.Output)))
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
