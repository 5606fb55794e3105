// Package local runs Switchboard's functions in one process, as the deployed
// stack runs them in Lambda: each function's handler is built from one set of
// dependencies and invoked through an [invoke.Invoker] with the same JSON
// payload, its catalog timeout and its reserved concurrency (a call past it
// is refused at once, as Lambda throttles it), and the RAG pipeline runs in
// process over the same functions. The local server, the tests and the
// benchmarks assemble Switchboard this way, and so does a pipeline function
// run alone, over its steps.
//
//	s, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
//	resp, err := s.Invoke(ctx, "memory/add_message", req)
//
// The functions invoke each other (the retriever its search workers, the
// pipeline its steps) through the stack itself, so a stack needs no network
// and no Lambda.
package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

// Options configures [New].
type Options struct {
	// Catalog gives the functions' limits and the pipeline's Task states. If
	// nil, catalog.Default().
	Catalog *catalog.Catalog
	// Deps are what every function is built from. If Deps.Invoker is nil,
	// the functions invoke each other through the stack; if Deps.Pipeline is
	// nil, the pipeline runs in process over the stack's functions.
	Deps lambdafn.Deps
	// Functions are the functions to run; a later one replaces an earlier
	// one with the same path. Catalog gives each its limits (none, for a
	// function it lacks).
	Functions []lambdafn.Function
}

// Stack is a set of functions running in this process. It is an
// [invoke.Invoker] of them, safe for concurrent use.
type Stack struct {
	local    *invoke.Local
	handlers map[string]lambda.Handler
	pipeline pipeline.Runner
	later    *later.Queue
}

var _ invoke.RawInvoker = (*Stack)(nil)

// New builds the handlers of opts.Functions and returns the stack that runs
// them. It does no I/O.
func New(opts Options) (*Stack, error) {
	cat := opts.Catalog
	if cat == nil {
		cat = catalog.Default()
	}
	s := &Stack{handlers: map[string]lambda.Handler{}}
	d := opts.Deps
	if d.Invoker == nil {
		d.Invoker = s
	}
	if d.Later == nil {
		d.Later = later.New()
	}
	s.later = d.Later
	if d.Pipeline == nil {
		p, err := pipeline.NewLocal(cat, s)
		if err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		d.Pipeline = p
	}
	s.pipeline = d.Pipeline
	for _, f := range opts.Functions {
		fd := d
		if fn, ok := cat.Function(f.Path); ok {
			fd = lambdafn.ForFunction(d, fn) // deletes only where the catalog says so, as on AWS
		}
		s.handlers[f.Path] = f.Build(fd)
	}
	s.local = invoke.NewLocal(s.handlers, &invoke.LocalOptions{Timeout: cat.Timeout, ReservedConcurrency: cat.ReservedConcurrency})
	return s, nil
}

// Invoke implements [invoke.Invoker]: it calls function's handler as Lambda
// would, through [invoke.Local].
func (s *Stack) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	return s.local.Invoke(ctx, function, req)
}

// InvokeRaw implements [invoke.RawInvoker]: it calls function's handler as
// Invoke does and returns its payload undecoded, for the gateway's tools/call
// fast path.
func (s *Stack) InvokeRaw(ctx context.Context, function string, req *invoke.Request) ([]byte, error) {
	return s.local.InvokeRaw(ctx, function, req)
}

// InvokeStream implements [invoke.StreamInvoker]: it calls function's
// handler as Invoke does, for a streamed answer, passing each notification
// to onNote as the function makes it.
func (s *Stack) InvokeStream(ctx context.Context, function string, req *invoke.Request, onNote func(invoke.Notification)) ([]byte, error) {
	return s.local.InvokeStream(ctx, function, req, onNote)
}

// Wait waits for the work the functions do after their answers, or for ctx
// to end: before the process exits.
func (s *Stack) Wait(ctx context.Context) error { return s.later.Wait(ctx) }

// Close closes the functions that hold connections (those whose handler
// has a Close method: the connectors' proxy function and its upstream
// sessions), as Lambda's shutdown does a function's: before the process
// exits.
func (s *Stack) Close() error {
	var errs []error
	for _, h := range s.handlers {
		if c, ok := h.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Pipeline returns the pipeline runner the functions were built with.
func (s *Stack) Pipeline() pipeline.Runner { return s.pipeline }

// Handler returns the handler of the function at path, for a caller that
// feeds it raw events (an S3 notification, a sample event file).
func (s *Stack) Handler(path string) (lambda.Handler, bool) {
	h, ok := s.handlers[path]
	return h, ok
}
