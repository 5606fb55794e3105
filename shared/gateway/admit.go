package gateway

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// admit takes a tool call's place within its caller's limits
// ([Options.Limiter]) before its function is invoked, and returns the
// function that gives the place back once the gateway stops waiting for the
// call. A call the limits refuse is not invoked: admit returns instead the
// response its function would have given for a [fault.KindRateLimited]
// error (a tool error whose text names the limit and when to retry, Error's
// kind rate_limited), which every front end answers as it answers a
// function's. A table that cannot be reached refuses the call the same way,
// as unavailable.
func (g *Gateway) admit(ctx context.Context, function string, env *invoke.Request) (release func(), refused *invoke.Response) {
	if g.opts.Limiter == nil {
		return noRelease, nil
	}
	d, _ := deadline(ctx)
	lease, err := g.opts.Limiter.Acquire(ctx, ratelimit.Call{Caller: env.Caller, Function: function, Deadline: d})
	if err != nil {
		if fault.KindOf(err) != fault.KindRateLimited {
			g.log.ErrorContext(ctx, "checking rate limits failed", "tool", env.Tool, "tenant", env.Caller.Tenant, "error", err)
		} else if t, ok := g.opts.Catalog.Tool(env.Tool); ok {
			g.opts.Metrics.Throttled(metrics.Call{Family: t.Family, Function: t.Name, Tenant: env.Caller.Tenant, TraceID: env.TraceID, RequestID: env.RequestID})
		}
		return nil, refusal(env, err)
	}
	return func() { lease.Release(context.WithoutCancel(ctx)) }, nil
}

func noRelease() {}

// refusal is the response of a call refused before its function ran, in
// lambdafn's form (which the fast path passes through).
func refusal(env *invoke.Request, err error) *invoke.Response {
	kind, field, message := fault.Public(err)
	b := []byte(`{"_meta":{"` + invoke.TraceMetaKey + `":`)
	b = rawjson.AppendString(b, env.TraceID)
	b = append(b, `},"content":[{"type":"text","text":`...)
	b = rawjson.AppendString(b, message)
	b = append(b, `}],"isError":true}`...)
	return &invoke.Response{Result: b, Error: &invoke.Error{Kind: string(kind), Field: field, Message: message}}
}
