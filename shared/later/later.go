// Package later runs work after a function has answered: off the caller's
// path, yet finished before Lambda freezes the execution environment.
//
// Lambda freezes an environment once its runtime has posted the answer and
// every extension has asked for its next event, so a goroutine left running
// after the answer may be frozen for minutes, or never resume. A [Queue]
// registered with [Queue.Hold] is an internal extension (Lambda Extensions
// API) that asks for its next event only when the invocation has returned and
// the work it queued is done: the caller gets the answer at once, and the work
// still lands. Outside Lambda, work runs in a goroutine and [Queue.Wait]
// waits for it at shutdown.
//
//	q := later.New()
//	if err := q.Hold(os.Getenv("AWS_LAMBDA_RUNTIME_API")); err != nil { ... } // before lambda.Start
//	handler := func(ctx context.Context, in Event) (Out, error) {
//		defer q.Track(ctx)()
//		q.Go(ctx, 2*time.Second, func(ctx context.Context) { record(ctx, in) })
//		return answer(in), nil
//	}
//
// Work after the answer still counts towards the invocation's duration and
// its timeout, so it is bounded by both.
package later

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// A Queue runs work after answers. The zero value is not usable; use [New].
type Queue struct {
	work sync.WaitGroup

	mu    sync.Mutex
	held  bool                     // registered as an extension: track invocations
	ended map[string]chan struct{} // request id -> closed when its handler has returned
}

// New returns an empty Queue.
func New() *Queue { return &Queue{ended: map[string]chan struct{}{}} }

// Held reports whether the queue holds each invocation until its work is
// done ([Queue.Hold]): work queued then delays the invocation's end, where
// otherwise the process lives on after it.
func (q *Queue) Held() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held
}

// Go runs fn in a goroutine with a context that keeps ctx's values but not
// its cancellation, ending after timeout or at ctx's deadline, whichever
// comes first: the invocation's deadline bounds the work after its answer
// too.
func (q *Queue) Go(ctx context.Context, timeout time.Duration, fn func(ctx context.Context)) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	wctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	q.work.Add(1)
	go func() {
		defer q.work.Done()
		defer cancel()
		fn(wctx)
	}()
}

// Wait waits for the work queued so far, or for ctx to end.
func (q *Queue) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		q.work.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Track marks the invocation of ctx as running; the function it returns marks
// it returned, and must be called when the handler returns, after any call of
// [Queue.Go] the handler makes. Without [Queue.Hold] it does nothing.
func (q *Queue) Track(ctx context.Context) func() {
	q.mu.Lock()
	held := q.held
	q.mu.Unlock()
	lc, ok := lambdacontext.FromContext(ctx)
	if !held || !ok || lc.AwsRequestID == "" {
		return func() {}
	}
	return func() { close(q.endedChan(lc.AwsRequestID)) }
}

// endedChan returns the channel closed when the handler of id returns,
// creating it for whichever of the handler and the extension comes first.
func (q *Queue) endedChan(id string) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch, ok := q.ended[id]
	if !ok {
		ch = make(chan struct{})
		q.ended[id] = ch
	}
	return ch
}

// settle waits until the invocation id has returned and the work queued by
// then is done, or until deadline (the invocation's, when work overruns it,
// Lambda ends the invocation anyway).
func (q *Queue) settle(id string, deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	select {
	case <-q.endedChan(id):
		q.Wait(ctx)
	case <-ctx.Done():
	}
	q.mu.Lock()
	delete(q.ended, id)
	q.mu.Unlock()
}
