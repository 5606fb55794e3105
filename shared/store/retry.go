package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// MaxRetries bounds the attempts [Retry] makes.
const MaxRetries = 100

// Retry runs fn until it succeeds or fails with something other than a lost
// race ([ErrConditionFailed] or [ErrConflict]): the read-check-write loop every
// optimistic update in Switchboard uses. Between attempts it sleeps with
// capped exponential backoff and full jitter, so that a crowd of writers on
// one item spreads out instead of colliding again. It gives up after
// [MaxRetries] attempts or when ctx is done.
func Retry(ctx context.Context, fn func() error) error {
	backoff := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !(errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrConflict)) {
			return err
		}
		if attempt == MaxRetries {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		t := time.NewTimer(rand.N(backoff) + time.Millisecond/4)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-t.C:
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}
