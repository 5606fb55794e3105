package gateway

import (
	"context"
	"maps"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
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

// RateLimits returns the limits of a tenant without an override of its
// own, as the deployment configures them (config.EnvRateLimits): spec in
// [ratelimit.ParseLimits]'s syntax over [ratelimit.DefaultLimits] ("" for
// the defaults), with the catalog's [Shares]; and false for "off".
func RateLimits(spec string, cat *catalog.Catalog) (ratelimit.Limits, bool, error) {
	if strings.TrimSpace(spec) == "off" { // config.RateLimitsOff
		return ratelimit.Limits{}, false, nil
	}
	l, err := ratelimit.ParseLimits(spec, ratelimit.DefaultLimits)
	if err != nil {
		return l, false, err
	}
	return Shares(cat, l), true, nil
}

// Shares returns limits with each function's share of calls in flight per
// tenant set from the catalog: half the function's reserved concurrency,
// at least 1, for every function that has one (the pipelines), so that one
// tenant flooding a function leaves the rest of its capacity to others. A
// share limits already gives is kept.
func Shares(cat *catalog.Catalog, limits ratelimit.Limits) ratelimit.Limits {
	shares := map[string]int{}
	for _, f := range cat.Functions() {
		if rc := f.Limits.ReservedConcurrency; rc > 0 {
			shares[f.Path] = max(rc/2, 1)
		}
	}
	maps.Copy(shares, limits.Shares)
	limits.Shares = shares
	return limits
}
