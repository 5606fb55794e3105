package lambdafn

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Bound is one tool of a [Methods] function: its name and how its handler
// is built over the function's service.
type Bound[S any] struct {
	name  string
	build func(svc S, t *catalog.Tool, d Deps) lambda.Handler
}

// Bind binds the default catalog's tool named name to method of a
// [Methods] function's service.
func Bind[S, In, Out any](name string, method func(S, context.Context, tenant.Caller, In) (Out, error)) Bound[S] {
	return Bound[S]{name: name, build: func(svc S, t *catalog.Tool, d Deps) lambda.Handler {
		return Tool(t, d, func(ctx context.Context, c tenant.Caller, in In) (Out, error) { return method(svc, ctx, c, in) })
	}}
}

// Methods returns the function serving several tools of the default
// catalog, which must all name the same function, with methods of one
// service that newService builds once from the function's Deps, so that
// its tools share what the service holds (the connectors' pooled upstream
// sessions). Its handler serves each call with the tool the envelope
// names; if the service has a Close method, the handler's Close calls it
// ([Start] on SIGTERM, package local when its stack closes). It panics as
// [ToolFunction] does, and if the tools are served by different functions.
func Methods[S any](newService func(Deps) S, tools ...Bound[S]) Function {
	entries := make([]*catalog.Tool, len(tools))
	for i, b := range tools {
		t, ok := catalog.Default().Tool(b.name)
		if !ok {
			panic("lambdafn: no tool " + b.name + " in the catalog")
		}
		if i > 0 && t.Function != entries[0].Function {
			panic("lambdafn: tools " + tools[0].name + " and " + b.name + " are served by different functions")
		}
		entries[i] = t
	}
	return Function{Path: entries[0].Function, Build: func(d Deps) lambda.Handler {
		svc := newService(d)
		m := &methods{path: entries[0].Function, tools: map[string]toolServer{}}
		for i, b := range tools {
			m.tools[b.name] = b.build(svc, entries[i], d).(toolServer)
		}
		if c, ok := any(svc).(interface{ Close() error }); ok {
			m.close = c.Close
		}
		return m
	}}
}

// toolServer is a tool's handler, as [Tool] builds it.
type toolServer interface {
	handle(ctx context.Context, req invoke.Request) (invoke.Response, error)
}

// methods is the handler of a [Methods] function.
type methods struct {
	path  string
	tools map[string]toolServer
	close func() error
}

// Invoke implements [lambda.Handler], as a tool's handler does.
func (m *methods) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return serveEnvelope(ctx, payload, func(req invoke.Request) (toolServer, error) {
		h, ok := m.tools[req.Tool]
		if !ok || req.Method != invoke.MethodCallTool {
			return nil, fmt.Errorf("function %s does not serve %s %s", m.path, req.Method, req.Tool)
		}
		return h, nil
	})
}

// OwnsPayloads implements [invoke.PayloadOwner], as a tool's handler does.
func (m *methods) OwnsPayloads() {}

// InvokeStream implements [invoke.StreamHandler], as a tool's handler does.
func (m *methods) InvokeStream(ctx context.Context, payload []byte) (io.Reader, error) {
	return Streamed(m).InvokeStream(ctx, payload)
}

// Close closes the function's service, if it has a Close method.
func (m *methods) Close() error {
	if m.close == nil {
		return nil
	}
	return m.close()
}
