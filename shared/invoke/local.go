package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Local invokes functions in this process through their Lambda handlers, with
// the same JSON payload, deadline and error reporting that Lambda would give
// them.
type Local struct {
	handlers map[string]lambda.Handler
	timeout  func(function string) time.Duration
}

// NewLocal returns an Invoker over handlers, keyed by function path. timeout
// gives each function's time limit, as its Lambda configuration would; nil
// means no limit beyond the caller's context.
func NewLocal(handlers map[string]lambda.Handler, timeout func(function string) time.Duration) *Local {
	return &Local{handlers: handlers, timeout: timeout}
}

// Invoke implements [Invoker].
func (l *Local) Invoke(ctx context.Context, function string, req *Request) (*Response, error) {
	out, err := l.InvokeRaw(ctx, function, req)
	if err != nil {
		return nil, err
	}
	return DecodeResponse(function, out)
}

// InvokeRaw implements [RawInvoker].
func (l *Local) InvokeRaw(ctx context.Context, function string, req *Request) ([]byte, error) {
	h, ok := l.handlers[function]
	if !ok {
		return nil, &FunctionError{Function: function, Type: "ResourceNotFoundException", Message: "no such function"}
	}
	payload, err := Encode(req)
	if err != nil {
		return nil, err
	}
	if l.timeout != nil {
		if d := l.timeout(function); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       req.RequestID,
		InvokedFunctionArn: "local:function:" + function,
	})
	out, err := invokeRecovered(ctx, h, payload)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Past its deadline Lambda stops a function and drops what it
		// answers; so does this invoker, whatever the handler returned.
		return nil, &FunctionError{Function: function, Type: "Sandbox.Timedout", Message: "Task timed out"}
	}
	if err != nil {
		return nil, &FunctionError{Function: function, Type: errorType(err), Message: err.Error()}
	}
	if _, owned := h.(PayloadOwner); !owned {
		// aws-lambda-go's handlers answer from a buffer they reuse.
		out = bytes.Clone(out)
	}
	return out, nil
}

// PayloadOwner is implemented by a handler whose Invoke returns a payload no
// one else holds, which [Local] then passes on as it is. The handlers
// aws-lambda-go builds answer from a buffer they reuse, so Local copies
// theirs.
type PayloadOwner interface {
	lambda.Handler
	// OwnsPayloads does nothing: it marks the handler.
	OwnsPayloads()
}

// invokeRecovered turns a panic into an error, as the Lambda runtime reports one.
func invokeRecovered(ctx context.Context, h lambda.Handler, payload []byte) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v}
		}
	}()
	return h.Invoke(ctx, payload)
}

type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprint(p.value) }

// errorType names err the way aws-lambda-go reports it as errorType.
func errorType(err error) string {
	if _, ok := err.(*panicError); ok {
		return "Runtime.Panic"
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// DecodeResponse decodes the response payload of function, as an
// [Invoker] does: a payload that is not a response is a [FunctionError].
func DecodeResponse(function string, out []byte) (*Response, error) {
	var resp Response
	if !decodeQuickly(out, &resp) {
		if err := json.Unmarshal(out, &resp); err != nil {
			return nil, &FunctionError{Function: function, Type: "InvalidResponse", Message: fmt.Sprintf("undecodable response: %v", err)}
		}
	}
	if len(resp.Result) == 0 && resp.Error == nil {
		return nil, &FunctionError{Function: function, Type: "InvalidResponse", Message: "response has neither a result nor an error"}
	}
	return &resp, nil
}
