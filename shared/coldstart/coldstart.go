// Package coldstart shortens a Lambda function's cold start: the garbage
// collector stays off from the start of main until the first invocation has
// been answered and its answer sent (it resumes when the second begins). Starting up allocates a few megabytes that all stay live
// (clients, the catalog, decoded schemas), so the one or two collections the
// default settings run meanwhile only cost time: 2 to 5 ms of each cold start
// (issue 11). A soft memory limit keeps that safe: past half of the function's
// memory, the collector runs anyway.
//
//	resume := coldstart.PauseGC(cfg.MemoryMB) // first thing in main
//	// ... open clients, build the handler ...
//	lambda.Start(coldstart.ResumeAfterFirst(handler, resume)) // collection resumes when the second invocation begins
package coldstart

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambda"
)

// DefaultMemoryMB is the function memory [PauseGC] assumes when it is told none.
const DefaultMemoryMB = 128

// PauseGC turns garbage collection off, but for a soft memory limit of half
// of memoryMB (if zero or less, [DefaultMemoryMB]), and returns the function
// that restores the settings it found. Calling that more than once is safe.
func PauseGC(memoryMB int) (resume func()) {
	if memoryMB <= 0 {
		memoryMB = DefaultMemoryMB
	}
	limit := debug.SetMemoryLimit(int64(memoryMB) << 20 / 2)
	percent := debug.SetGCPercent(-1)
	return sync.OnceFunc(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

// ResumeAfterFirst returns h calling resume when its second invocation
// begins: after the first has answered, successfully or not, and the runtime
// has sent that answer. A collection resumed as the first returns would run
// while the answer is being sent.
func ResumeAfterFirst(h lambda.Handler, resume func()) lambda.Handler {
	return &firstAnswer{h: h, resume: sync.OnceFunc(resume)}
}

type firstAnswer struct {
	h       lambda.Handler
	resume  func()
	started atomic.Bool // an invocation has begun
}

// Invoke implements [lambda.Handler].
func (f *firstAnswer) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	f.begin()
	return f.h.Invoke(ctx, payload)
}

// begin resumes collection if an invocation has begun before this one.
func (f *firstAnswer) begin() {
	if f.started.Swap(true) {
		f.resume()
	}
}

// ResumeAfterFirstFunc is [ResumeAfterFirst] for a handler function, which
// lambda.Start calls through reflection. A function may answer an io.Reader
// that the runtime streams (a response-streaming function, such as the
// gateway behind a REST API); a [lambda.Handler] answers bytes only.
func ResumeAfterFirstFunc[E, R any](f func(context.Context, E) (R, error), resume func()) func(context.Context, E) (R, error) {
	first := &firstAnswer{resume: sync.OnceFunc(resume)}
	return func(ctx context.Context, e E) (R, error) {
		first.begin()
		return f(ctx, e)
	}
}
