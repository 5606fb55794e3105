package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/statemachine"
)

// LambdaInvokeResource is the Task resource of Step Functions' optimised
// Lambda integration, the only one the pipeline uses.
const LambdaInvokeResource = "arn:aws:states:::lambda:invoke"

// Local runs the pipeline in process: the embedded ASL definition, executed
// by shared/statemachine, with each Task invoking its step function through
// an [invoke.Invoker] as Step Functions' lambda:invoke integration would.
type Local struct {
	machine *statemachine.Machine
	invoker invoke.Invoker
	steps   map[string]bool // the functions its Task states invoke
}

var _ Runner = (*Local)(nil)

// NewLocal returns a Runner of [infra.RAGPipeline] whose steps, the
// functions of cat's pipeline tasks, inv invokes.
func NewLocal(cat *catalog.Catalog, inv invoke.Invoker) (*Local, error) {
	return NewLocalDefinition(infra.RAGPipeline, cat, inv)
}

// NewLocalDefinition is [NewLocal] for another definition of the pipeline,
// such as one whose timeouts a test has shortened.
func NewLocalDefinition(definition []byte, cat *catalog.Catalog, inv invoke.Invoker) (*Local, error) {
	values := map[string]string{}
	steps := map[string]bool{}
	for _, t := range cat.PipelineTasks() {
		// The function path stands in for the ARN; the task maps it back.
		values[t.Substitution] = t.Function
		steps[t.Function] = true
	}
	def, err := statemachine.Substitute(definition, values)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	m, err := statemachine.Parse(def)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return &Local{machine: m, invoker: inv, steps: steps}, nil
}

// Run implements [Runner].
func (l *Local) Run(ctx context.Context, in Input) (Output, error) {
	input, err := invoke.Marshal(in.WithDefaults())
	if err != nil {
		return Output{}, fmt.Errorf("pipeline: encoding input: %w", err)
	}
	out, err := l.Execute(ctx, input)
	if err != nil {
		return Output{}, err
	}
	return DecodeOutput(out)
}

// Execute runs the state machine on input as it is, JSON in and out, as a
// Step Functions execution would: no defaults applied, every field of the
// output kept. A failed execution is an [*ExecutionError].
func (l *Local) Execute(ctx context.Context, input []byte) ([]byte, error) {
	out, err := l.machine.Run(ctx, input, statemachine.RunOptions{Task: l.task})
	if err != nil {
		var e *statemachine.Error
		if errors.As(err, &e) {
			return nil, &ExecutionError{Status: "FAILED", Err: e.Name, Cause: e.Cause}
		}
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return out, nil
}

// DecodeOutput decodes the state machine's output, as a runner returns it,
// listing the steps its fallback flags name as [Output.Degraded].
func DecodeOutput(data []byte) (Output, error) {
	var o machineOutput
	if err := json.Unmarshal(data, &o); err != nil {
		return Output{}, fmt.Errorf("pipeline: decoding output: %w", err)
	}
	if f := o.Fallback; f != nil { // a refused run has none
		o.Degraded = []string{}
		for _, s := range []struct {
			name string
			fell bool
		}{{"rephrase", f.Rephrase}, {"retrieve", f.Retrieve}, {"grade", f.Grade}} {
			if s.fell {
				o.Degraded = append(o.Degraded, s.name)
			}
		}
	}
	return o.Output, nil
}

// machineOutput is the state machine's output. Which steps fell back arrives
// as one flag each: ASL cannot append to an array, and listing them in the
// definition took a state per combination.
type machineOutput struct {
	Output
	Fallback *struct {
		Rephrase bool `json:"rephrase"`
		Retrieve bool `json:"retrieve"`
		Grade    bool `json:"grade"`
	} `json:"fallback"`
}

// lambdaInvokeParameters are the parameters of a lambda:invoke Task.
type lambdaInvokeParameters struct {
	FunctionName string          `json:"FunctionName"`
	Payload      json.RawMessage `json:"Payload"`
}

// task runs one lambda:invoke Task. Its result has the shape Step Functions
// gives it, {"ExecutedVersion", "Payload", "StatusCode"}; a function that
// fails outright is a task error named by the function's errorType, with
// Lambda's error payload as the cause, as on AWS.
func (l *Local) task(ctx context.Context, resource string, parameters json.RawMessage) (json.RawMessage, error) {
	if resource != LambdaInvokeResource {
		return nil, &statemachine.Error{Name: statemachine.ErrRuntime, Cause: fmt.Sprintf("pipeline: unsupported Task resource %q", resource)}
	}
	var p lambdaInvokeParameters
	if err := json.Unmarshal(parameters, &p); err != nil {
		return nil, &statemachine.Error{Name: statemachine.ErrRuntime, Cause: fmt.Sprintf("pipeline: lambda:invoke parameters: %v", err)}
	}
	if !l.steps[p.FunctionName] {
		return nil, &statemachine.Error{Name: "Lambda.ResourceNotFoundException", Cause: fmt.Sprintf("function %s is not a pipeline step", p.FunctionName)}
	}
	var req invoke.Request
	if err := json.Unmarshal(p.Payload, &req); err != nil {
		return nil, &statemachine.Error{Name: "Lambda.InvalidRequestContentException", Cause: err.Error()}
	}
	resp, err := l.invoker.Invoke(ctx, p.FunctionName, &req)
	if err != nil {
		var fe *invoke.FunctionError
		if errors.As(err, &fe) {
			cause, _ := invoke.Marshal(map[string]string{"errorType": fe.Type, "errorMessage": fe.Message})
			return nil, &statemachine.Error{Name: fe.Type, Cause: string(cause)}
		}
		var api smithy.APIError
		if errors.As(err, &api) {
			// A Lambda API error, such as TooManyRequestsException: Step
			// Functions names it Lambda.<code>, which the Retry matches.
			return nil, &statemachine.Error{Name: "Lambda." + api.ErrorCode(), Cause: api.ErrorMessage()}
		}
		return nil, err
	}
	payload, err := invoke.EncodeResponse(resp)
	if err != nil {
		return nil, err
	}
	return invoke.Marshal(map[string]any{"ExecutedVersion": "$LATEST", "Payload": json.RawMessage(payload), "StatusCode": 200})
}

// ExecutionError reports a pipeline execution that failed as a whole: a
// States.Runtime error in the definition, the machine's timeout, or, on AWS,
// a failed or timed-out execution.
type ExecutionError struct {
	// Status is the execution status: FAILED or TIMED_OUT.
	Status string
	// Err and Cause are the execution's error name and cause.
	Err, Cause string
}

func (e *ExecutionError) Error() string {
	return fmt.Sprintf("pipeline: execution %s: %s: %s", e.Status, e.Err, e.Cause)
}
