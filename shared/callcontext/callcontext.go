// Package callcontext carries the identity of the call a function serves:
// who it acts for, and the trace and request it belongs to. Package lambdafn
// puts it in the context of every call it hands to domain code; domain code
// reads it to record the trace in audit events (career) or to pass the call's
// identity on to work of its own (the RAG pipeline's steps, a search's
// workers). It is the one way a trace id travels inside a function.
//
//	ctx = callcontext.NewContext(ctx, callcontext.Call{Caller: caller, TraceID: trace, RequestID: id}) // lambdafn
//	if c, ok := callcontext.FromContext(ctx); ok { /* c.TraceID */ }                                  // domain code
package callcontext

import (
	"context"

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
