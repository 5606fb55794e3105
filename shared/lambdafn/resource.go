package lambdafn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// ResourceFuncs are the domain methods behind a resource function.
type ResourceFuncs struct {
	// List returns a page of the caller's concrete resources; nil if the
	// function serves only resources/read.
	List func(ctx context.Context, c tenant.Caller, cursor string) (*mcp.ListResourcesResult, error)
	// Read returns the resource at uri, or a [fault.KindNotFound] error.
	Read func(ctx context.Context, c tenant.Caller, uri string) (*mcp.ReadResourceResult, error)
}

// Resources returns the Lambda handler of the resource function at path.
// Each call writes a metric record (function: the path).
func Resources(path string, d Deps, f ResourceFuncs) lambda.Handler {
	log := d.logger().With("function", path)
	family := ""
	if fn, ok := catalog.Default().Function(path); ok {
		family = fn.Family
	}
	return lambda.NewHandler(func(ctx context.Context, req invoke.Request) (io.Reader, error) {
		if err := tenant.Validate(req.Caller.Tenant); err != nil {
			return nil, fmt.Errorf("envelope has no valid caller: %w", err)
		}
		start := time.Now()
		xray := callcontext.LambdaTraceHeader(ctx)
		ctx = callcontext.NewContext(ctx, callcontext.Call{Caller: req.Caller, TraceID: req.TraceID, RequestID: req.RequestID, XRay: xray})
		var (
			res any
			err error
		)
		switch {
		case req.Method == invoke.MethodReadResource:
			res, err = f.Read(ctx, req.Caller, req.URI)
		case req.Method == invoke.MethodListResources && f.List != nil:
			res, err = f.List(ctx, req.Caller, req.Cursor)
		default:
			return nil, fmt.Errorf("function %s does not serve %s", path, req.Method)
		}
		d.Metrics.Call(metrics.Call{Family: family, Function: path, Latency: time.Since(start), Kind: metrics.KindOf(err),
			Tenant: req.Caller.Tenant, TraceID: req.TraceID, RequestID: req.RequestID, XRayTraceID: callcontext.XRayTraceID(xray)})
		attrs := []any{"method", req.Method, "uri", req.URI, "tenant", req.Caller.Tenant, "trace_id", req.TraceID,
			"request_id", req.RequestID, "duration_ms", time.Since(start).Milliseconds()}
		if err != nil {
			kind, field, message := fault.Public(err)
			log.InfoContext(ctx, "resource call", append(attrs, "outcome", "error: "+string(kind), "error", err.Error())...)
			return encoded(invoke.Response{Error: &invoke.Error{Kind: string(kind), Field: field, Message: message}})
		}
		log.InfoContext(ctx, "resource call", append(attrs, "outcome", "ok")...)
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encoding %s result: %w", req.Method, err)
		}
		return encoded(invoke.Response{Result: b})
	})
}
