package invoke

import (
	"context"
	"sync"
	"time"
)

// withLazyDeadline is context.WithDeadline(parent, d) that starts its timer
// only when something waits for the context (Done): [Local] gives every call
// its function's time limit, and most calls end long before it without
// anything having waited for it, while a timer costs allocations and, set
// earlier than the runtime's network poller means to wake, a wake-up of the
// thread sleeping in it. Until then Err reports the deadline from the
// clock, so a call past it is seen as timed out all the same.
func withLazyDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	c := &lazyDeadline{Context: parent, deadline: d}
	return c, c.cancel
}

type lazyDeadline struct {
	context.Context // the parent
	deadline        time.Time
	mu              sync.Mutex
	timed           context.Context // the parent under the deadline, once waited for
	stop            context.CancelFunc
	cancelled       bool
}

// started returns the context with the timer, if it has started.
func (c *lazyDeadline) started() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timed
}

// Deadline implements [context.Context].
func (c *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done implements [context.Context], starting the timer.
func (c *lazyDeadline) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timed == nil {
		c.timed, c.stop = context.WithDeadline(c.Context, c.deadline)
		if c.cancelled {
			c.stop()
		}
	}
	return c.timed.Done()
}

// Err implements [context.Context].
func (c *lazyDeadline) Err() error {
	c.mu.Lock()
	timed, cancelled := c.timed, c.cancelled
	c.mu.Unlock()
	switch {
	case timed != nil:
		return timed.Err()
	case cancelled:
		return context.Canceled
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Value implements [context.Context]: once the timer has started, through
// the context that has it, so that a context derived from c after that
// finds the cancellation it hangs on as it would under WithDeadline's.
func (c *lazyDeadline) Value(key any) any {
	if timed := c.started(); timed != nil {
		return timed.Value(key)
	}
	return c.Context.Value(key)
}

func (c *lazyDeadline) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelled {
		return
	}
	c.cancelled = true
	if c.stop != nil {
		c.stop()
	}
}
