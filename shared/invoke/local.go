package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/smithy-go"
)

// Local invokes functions in this process through their Lambda handlers, with
// the same JSON payload, deadline, concurrency limit and error reporting that
// Lambda would give them. It is safe for concurrent use.
type Local struct {
	handlers map[string]lambda.Handler
	timeout  func(function string) time.Duration
	slots    map[string]chan struct{} // for the functions with reserved concurrency
}

// LocalOptions configures [NewLocal]. A nil *LocalOptions sets no limits.
type LocalOptions struct {
	// Timeout returns a function's time limit, as its Lambda configuration
	// would; zero means none beyond the caller's context. If nil, no
	// function has one.
	Timeout func(function string) time.Duration
	// ReservedConcurrency returns how many calls of a function may run at
	// once, as its reserved concurrency does on AWS; zero means no limit. A
	// call past it is refused at once with a [*ThrottledError], as Lambda
	// throttles it, rather than queued. If nil, no function has a limit.
	ReservedConcurrency func(function string) int
}

// NewLocal returns an Invoker over handlers, keyed by function path, with
// the limits opts gives.
func NewLocal(handlers map[string]lambda.Handler, opts *LocalOptions) *Local {
	l := &Local{handlers: handlers, slots: map[string]chan struct{}{}}
	if opts == nil {
		return l
	}
	l.timeout = opts.Timeout
	if opts.ReservedConcurrency != nil {
		for function := range handlers {
			if n := opts.ReservedConcurrency(function); n > 0 {
				l.slots[function] = make(chan struct{}, n)
			}
		}
	}
	return l
}

// ThrottledError is a call refused because its function already runs as
// many calls as its reserved concurrency allows: Lambda's
// TooManyRequestsException, which it also is to code that checks for AWS
// API errors (the pipeline's Retry matches Lambda.TooManyRequestsException).
type ThrottledError struct {
	Function string
	// Limit is the function's reserved concurrency.
	Limit int
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("function %s is at its reserved concurrency of %d: TooManyRequestsException: %s", e.Function, e.Limit, e.ErrorMessage())
}

// ErrorCode is Lambda's error code for a throttled call.
func (e *ThrottledError) ErrorCode() string { return "TooManyRequestsException" }

// ErrorMessage is Lambda's message for a throttled call.
func (e *ThrottledError) ErrorMessage() string { return "Rate Exceeded." }

// ErrorFault says the caller may retry later.
func (e *ThrottledError) ErrorFault() smithy.ErrorFault { return smithy.FaultClient }

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
	return l.call(ctx, function, req, invokeRecovered)
}

// InvokeStream implements [StreamInvoker]: a handler that can stream (a
// [StreamHandler]) answers a streamed answer, read as it writes it; any
// other answers as for InvokeRaw.
func (l *Local) InvokeStream(ctx context.Context, function string, req *Request, onNote func(Notification)) ([]byte, error) {
	streamed := *req
	streamed.Stream = true
	return l.call(ctx, function, &streamed, func(ctx context.Context, h lambda.Handler, payload []byte) ([]byte, error) {
		sh, ok := h.(StreamHandler)
		if !ok {
			return invokeRecovered(ctx, h, payload)
		}
		r, err := invokeStreamRecovered(ctx, sh, payload)
		if err != nil {
			return nil, err
		}
		if c, ok := r.(io.Closer); ok {
			// Reading stops at the deadline, or when the caller goes, as an
			// InvokeWithResponseStream call's would, whether or not the
			// function heeds its context.
			defer c.Close()
			defer context.AfterFunc(ctx, func() { c.Close() })()
		}
		return ReadStream(r, onNote)
	})
}

// call invokes function's handler with req through run, with the
// concurrency limit, deadline, Lambda context and error reporting Lambda
// gives it.
func (l *Local) call(ctx context.Context, function string, req *Request, run func(context.Context, lambda.Handler, []byte) ([]byte, error)) ([]byte, error) {
	h, ok := l.handlers[function]
	if !ok {
		return nil, &FunctionError{Function: function, Type: "ResourceNotFoundException", Message: "no such function"}
	}
	if slots := l.slots[function]; slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			return nil, &ThrottledError{Function: function, Limit: cap(slots)}
		}
	}
	payload, err := Encode(req)
	if err != nil {
		return nil, err
	}
	if l.timeout != nil {
		if d := l.timeout(function); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = withLazyDeadline(ctx, time.Now().Add(d))
			defer cancel()
		}
	}
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       req.RequestID,
		InvokedFunctionArn: "local:function:" + function,
	})
	out, err := run(ctx, h, payload)
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

// invokeStreamRecovered is invokeRecovered for a streamed answer.
func invokeStreamRecovered(ctx context.Context, h StreamHandler, payload []byte) (r io.Reader, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v}
		}
	}()
	return h.InvokeStream(ctx, payload)
}

type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprint(p.value) }

// errorType names err the way aws-lambda-go reports it as errorType.
func errorType(err error) string {
	if _, ok := err.(*panicError); ok {
		return "Runtime.Panic"
	}
	var reported messages.InvokeResponse_Error
	if errors.As(err, &reported) { // as aws-lambda-go reports it
		return reported.Type
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// DecodeResponse decodes the answer of function, as an invoker receives it:
// an answer that is not a [Response] is a [*FunctionError] of type
// InvalidResponse.
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
