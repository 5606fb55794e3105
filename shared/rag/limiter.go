package rag

import "github.com/switchboard-dev/switchboard/shared/fault"

// limiter bounds the calls a pipeline serves at once in this process. A call
// beyond the limit is refused at once rather than queued: that is what
// reserved concurrency does on AWS (Lambda throttles the invocation), so a
// caller meets the same behaviour locally and deployed, and a queued call
// would only spend its timeout waiting.
type limiter struct {
	name  string
	slots chan struct{}
}

func newLimiter(name string, n int) *limiter {
	return &limiter{name: name, slots: make(chan struct{}, n)}
}

// acquire takes a slot, returning the function that gives it back, or a
// [fault.KindUnavailable] error when every slot is taken.
func (l *limiter) acquire() (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	default:
		return nil, fault.Unavailable(nil, "pipeline %s is at its limit of %d concurrent queries; retry shortly", l.name, cap(l.slots))
	}
}

// inFlight returns how many slots are taken.
func (l *limiter) inFlight() int { return len(l.slots) }
