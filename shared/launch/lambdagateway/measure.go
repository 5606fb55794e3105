package lambdagateway

import (
	"context"
	"errors"
	"time"

	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
)

// measure returns the Lambda handler h writing the gateway's metric
// record of each invocation to m: its latency (to when h returns: a
// streamed answer may still be flowing), a cold start, a fault when h
// fails.
func measure[E, R any](h func(context.Context, E) (R, error), m *metrics.Emitter) func(context.Context, E) (R, error) {
	return func(ctx context.Context, e E) (R, error) {
		start := time.Now()
		out, err := h(ctx, e)
		var kind fault.Kind
		if err != nil {
			kind = fault.KindInternal
		}
		m.Call(metrics.Call{Family: metrics.GatewayFamily, Function: metrics.GatewayFunction, Latency: time.Since(start), Kind: kind,
			XRayTraceID: callcontext.XRayTraceID(callcontext.LambdaTraceHeader(ctx))})
		return out, err
	}
}

// measuredInvoker is the gateway's invoker, writing to m the record of each
// call whose function could not write its own: a throttle when Lambda
// refused the invocation (the function's reserved concurrency), a fault
// when the function failed outright (a crash, a timeout) or the Invoke API
// did. A call the gateway stopped waiting for goes on, and records itself.
type measuredInvoker struct {
	inv invoke.RawInvoker
	cat *catalog.Catalog
	m   *metrics.Emitter
}

var _ invoke.RawInvoker = (*measuredInvoker)(nil)

// Invoke implements [invoke.Invoker].
func (i *measuredInvoker) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	start := time.Now()
	resp, err := i.inv.Invoke(ctx, function, req)
	i.record(ctx, function, req, time.Since(start), err)
	return resp, err
}

// InvokeRaw implements [invoke.RawInvoker].
func (i *measuredInvoker) InvokeRaw(ctx context.Context, function string, req *invoke.Request) ([]byte, error) {
	start := time.Now()
	out, err := i.inv.InvokeRaw(ctx, function, req)
	i.record(ctx, function, req, time.Since(start), err)
	return out, err
}

func (i *measuredInvoker) record(ctx context.Context, function string, req *invoke.Request, d time.Duration, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	c := metrics.Call{Function: req.Tool, Latency: d, Kind: fault.KindInternal,
		Tenant: req.Caller.Tenant, TraceID: req.TraceID, RequestID: req.RequestID}
	if f, ok := i.cat.Function(function); ok {
		c.Family = f.Family
	}
	if c.Function == "" { // a resource's function
		c.Function = function
	}
	var api smithy.APIError
	var fe *invoke.FunctionError
	switch {
	case errors.As(err, &api) && api.ErrorCode() == "TooManyRequestsException":
		i.m.Throttled(c)
	case errors.As(err, &fe):
		i.m.Failed(c)
	default:
		c.Kind = fault.KindUnavailable
		i.m.Failed(c)
	}
}
