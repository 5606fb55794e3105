package lambdatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultConcurrency is how many instances a [Function] runs at most when
// [FunctionOptions.Concurrency] is zero.
const DefaultConcurrency = 10

// FunctionOptions configures [NewFunction].
type FunctionOptions struct {
	// ARN is the function's ARN, sent as each invocation's invoked function
	// ARN. If empty, defaults to [DefaultFunctionARN].
	ARN string
	// Timeout is the function's timeout. If zero, defaults to 30 seconds.
	Timeout time.Duration
	// Log, if not nil, receives every instance's output (stdout and
	// stderr), as CloudWatch Logs does; each instance then keeps only the
	// end of it for its errors.
	Log io.Writer
	// Observe, if not nil, is called with every invocation's result (cold
	// reports a cold start), as Lambda's metrics and billing see it:
	// Result.Answered - Result.Received is the duration Lambda bills.
	Observe func(res *Result, cold bool)
	// Concurrency bounds the instances running at once; an invocation that
	// finds them all busy waits for one. If zero, defaults to [DefaultConcurrency].
	Concurrency int
}

// Function runs one function's bootstrap as Lambda runs a function: in
// instances (each a [Process] against its own [Runtime]) started when an
// invocation finds none idle, which is a cold start, and kept for the
// invocations after it, which are warm. An instance that crashes or runs past
// the timeout is ended and replaced by the next cold start. It is safe for
// concurrent use.
//
//	f := lambdatest.NewFunction("bin/memory-add-message/bootstrap", env, &lambdatest.FunctionOptions{Timeout: 10 * time.Second})
//	defer f.Close()
//	res, cold, err := f.Invoke(ctx, event)
type Function struct {
	path string
	env  []string
	opts FunctionOptions
	slot chan struct{}  // one token per instance running
	idle chan *instance // instances waiting for an invocation

	mu     sync.Mutex
	all    map[*instance]bool
	closed bool
}

// instance is one execution environment: a process and its runtime.
type instance struct {
	rt *Runtime
	p  *Process
}

func (in *instance) stop() {
	in.p.Stop()
	in.rt.Close()
}

// NewFunction returns a Function running the bootstrap at path with env (as
// [Start] takes it). It starts no instance: the first invocation, or
// [Function.Prewarm], does.
func NewFunction(path string, env []string, opts *FunctionOptions) *Function {
	f := &Function{path: path, env: env, all: map[*instance]bool{}}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.Timeout <= 0 {
		f.opts.Timeout = 30 * time.Second
	}
	if f.opts.Concurrency <= 0 {
		f.opts.Concurrency = DefaultConcurrency
	}
	f.slot = make(chan struct{}, f.opts.Concurrency)
	f.idle = make(chan *instance, f.opts.Concurrency)
	return f
}

// ErrClosed is returned by [Function.Invoke] after [Function.Close].
var ErrClosed = errors.New("lambdatest: function closed")

// Invoke sends payload to an idle instance, or to a new one (cold reports
// that), and returns its answer. An invocation that runs past the timeout
// ends its instance and answers, as Lambda does, a function error of type
// Sandbox.Timedout; an instance that exits before answering is ended and
// the error is returned.
func (f *Function) Invoke(ctx context.Context, payload []byte) (res *Result, cold bool, err error) {
	in, cold, err := f.acquire(ctx)
	if err != nil {
		return nil, cold, err
	}
	tctx, cancel := context.WithTimeout(ctx, f.opts.Timeout+time.Second)
	defer cancel()
	res, err = in.p.Invoke(tctx, payload)
	switch {
	case err == nil:
		f.release(in)
		f.observe(res, cold)
		return res, cold, nil
	case ctx.Err() == nil && tctx.Err() != nil:
		f.discard(in)
		res = &Result{Error: &FunctionError{Type: "Sandbox.Timedout", Message: fmt.Sprintf("Task timed out after %.2f seconds", f.opts.Timeout.Seconds())}}
		f.observe(res, cold)
		return res, cold, nil
	default:
		f.discard(in)
		return nil, cold, err
	}
}

func (f *Function) observe(res *Result, cold bool) {
	if f.opts.Observe != nil {
		f.opts.Observe(res, cold)
	}
}

// Prewarm starts an instance and leaves it idle, so that a function that
// cannot start is found before its first invocation: it returns the
// process's output if it exits within wait.
func (f *Function) Prewarm(wait time.Duration) error {
	in, err := f.start()
	if err != nil {
		return err
	}
	select {
	case <-in.p.Exited():
		f.discard(in)
		return fmt.Errorf("lambdatest: %s exited at init; output:\n%s", f.path, in.p.Output())
	case <-time.After(wait):
	}
	f.release(in)
	return nil
}

// Recycle ends every idle instance, so that the next invocation is a cold start.
func (f *Function) Recycle() {
	for {
		select {
		case in := <-f.idle:
			f.discard(in)
		default:
			return
		}
	}
}

// Close ends every instance; invocations after it fail with [ErrClosed].
func (f *Function) Close() {
	f.mu.Lock()
	f.closed = true
	all := f.all
	f.all = map[*instance]bool{}
	f.mu.Unlock()
	for in := range all {
		in.stop()
	}
}

// acquire returns an idle instance if there is one; else it starts one,
// when fewer than the concurrency run, or takes the first to be released.
func (f *Function) acquire(ctx context.Context) (*instance, bool, error) {
	for {
		f.mu.Lock()
		closed := f.closed
		f.mu.Unlock()
		if closed {
			return nil, false, ErrClosed
		}
		var in *instance
		select {
		case in = <-f.idle:
		default:
			select {
			case in = <-f.idle:
			case f.slot <- struct{}{}:
				in, err := f.spawn()
				return in, true, err
			case <-ctx.Done():
				return nil, false, fmt.Errorf("lambdatest: waiting for an instance of %s: %w", f.path, ctx.Err())
			}
		}
		select {
		case <-in.p.Exited(): // it died while idle: never hand it out
			f.discard(in)
		default:
			return in, false, nil
		}
	}
}

// start takes a slot and starts an instance in it.
func (f *Function) start() (*instance, error) {
	f.slot <- struct{}{}
	return f.spawn()
}

// spawn starts an instance in a slot already taken, giving the slot back if it cannot.
func (f *Function) spawn() (*instance, error) {
	rt := NewRuntime(&Options{FunctionARN: f.opts.ARN, Timeout: f.opts.Timeout})
	p, err := start(rt, f.path, f.env, f.opts.Log)
	if err != nil {
		rt.Close()
		<-f.slot
		return nil, err
	}
	in := &instance{rt: rt, p: p}
	f.mu.Lock()
	closed := f.closed
	if !closed {
		f.all[in] = true
	}
	f.mu.Unlock()
	if closed {
		in.stop()
		<-f.slot
		return nil, ErrClosed
	}
	return in, nil
}

// release makes in idle again (the idle channel has room for every instance).
func (f *Function) release(in *instance) {
	f.mu.Lock()
	owned := f.all[in]
	f.mu.Unlock()
	if owned {
		f.idle <- in
	}
}

// discard ends in and frees its slot.
func (f *Function) discard(in *instance) {
	f.mu.Lock()
	owned := f.all[in]
	delete(f.all, in)
	f.mu.Unlock()
	in.stop()
	if owned {
		<-f.slot
	}
}
