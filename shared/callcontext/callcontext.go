// Package callcontext carries the identity of the call a function serves:
// who it acts for, and the trace and request it belongs to. Package lambdafn
// puts it in the context of every call it hands to domain code; domain code
// reads it to record the trace in audit events (career) or to pass the call's
// identity on to work of its own (the RAG pipeline's steps, a search's
// workers). It is the one way a trace id travels inside a function, and
// with it the X-Ray trace header of the invocation, which the calls a
// function makes to other functions and to the state machine carry on
// ([TraceHeader]), so that X-Ray links gateway -> function -> state machine.
//
//	ctx = callcontext.NewContext(ctx, callcontext.Call{Caller: caller, TraceID: trace, RequestID: id}) // lambdafn
//	if c, ok := callcontext.FromContext(ctx); ok { /* c.TraceID */ }                                  // domain code
package callcontext

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Call identifies one call.
type Call struct {
	// Caller is who the call acts for, as the gateway authenticated it.
	Caller tenant.Caller
	// TraceID groups the call's audit events with those of related calls.
	TraceID string
	// RequestID names this one call in the logs.
	RequestID string
	// Thread is the thread the request named in its _meta
	// (the envelope's Thread); "" for none.
	Thread string
	// Profile is the tool profile the call is held to when it calls tools
	// on its caller's behalf (the envelope's Profile); the zero Profile
	// allows every tool.
	Profile profile.Profile
	// XRay is the X-Ray trace header (X-Amzn-Trace-Id) of the Lambda
	// invocation serving the call ([LambdaTraceHeader]); "" without one.
	XRay string
}

type key struct{}

// NewContext returns a copy of ctx carrying c.
func NewContext(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// FromContext returns the Call ctx carries, if any.
func FromContext(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(key{}).(Call)
	return c, ok
}

// LambdaTraceHeader returns the X-Ray trace header of the Lambda invocation
// ctx serves: the runtime's Lambda-Runtime-Trace-Id, which aws-lambda-go
// puts in the invocation's context under the key "x-amzn-trace-id" (a plain
// string key, theirs); "" outside Lambda.
func LambdaTraceHeader(ctx context.Context) string {
	h, _ := ctx.Value("x-amzn-trace-id").(string)
	return h
}

// TraceHeader returns the X-Amzn-Trace-Id header to send with a call made
// for ctx's call to another function or to the state machine: the X-Ray
// header of the call, or of the Lambda invocation ctx serves, so that the
// callee joins its trace; else, when traceID is a W3C trace id (32 lowercase
// hex digits, not all zero: the client's traceparent), the X-Ray trace that
// id maps to (Root=1-<its first 8 digits>-<the other 24>), so that a trace
// the client started is the X-Ray trace; else "".
func TraceHeader(ctx context.Context, traceID string) string {
	if c, ok := FromContext(ctx); ok && c.XRay != "" {
		return c.XRay
	}
	if h := LambdaTraceHeader(ctx); h != "" {
		return h
	}
	if !isW3CTraceID(traceID) {
		return ""
	}
	return "Root=1-" + traceID[:8] + "-" + traceID[8:]
}

// XRayTraceID returns the trace id (the Root) of an X-Ray trace header,
// "" if it names none.
func XRayTraceID(header string) string {
	for header != "" {
		var field string
		field, header, _ = strings.Cut(header, ";")
		if root, ok := strings.CutPrefix(strings.TrimSpace(field), "Root="); ok {
			return root
		}
	}
	return ""
}

func isW3CTraceID(id string) bool {
	return len(id) == 32 && strings.Trim(id, "0123456789abcdef") == "" && strings.Trim(id, "0") != ""
}
