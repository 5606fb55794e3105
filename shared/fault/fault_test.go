package fault_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

func TestRateLimitedStatesWhenToRetry(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		wantAfter  time.Duration
		wantSuffix string
	}{
		{"a wait in tenths is kept", 1200 * time.Millisecond, 1200 * time.Millisecond, "; retry after 1.2 s"},
		{"a wait between tenths is rounded up", 1201 * time.Millisecond, 1300 * time.Millisecond, "; retry after 1.3 s"},
		{"no wait still asks for a tenth", 0, 100 * time.Millisecond, "; retry after 0.1 s"},
		{"a negative wait asks for a tenth", -time.Second, 100 * time.Millisecond, "; retry after 0.1 s"},
		{"a long wait is whole seconds", 42 * time.Second, 42 * time.Second, "; retry after 42.0 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("calling: %w", fault.RateLimited(nil, tt.retryAfter, "tenant rate limit of %d calls a second reached", 20))
			kind, _, msg := fault.Public(err)
			if kind != fault.KindRateLimited {
				t.Errorf("kind = %s, want %s", kind, fault.KindRateLimited)
			}
			if want := "tenant rate limit of 20 calls a second reached" + tt.wantSuffix; msg != want {
				t.Errorf("message = %q, want %q", msg, want)
			}
			if got, ok := fault.RetryAfter(err); !ok || got != tt.wantAfter {
				t.Errorf("RetryAfter = %v, %v; want %v, true", got, ok, tt.wantAfter)
			}
		})
	}
}

func TestRetryAfterIsAbsentFromOtherErrors(t *testing.T) {
	for _, err := range []error{fault.Unavailable(nil, "down"), fmt.Errorf("plain"), nil} {
		if d, ok := fault.RetryAfter(err); ok {
			t.Errorf("RetryAfter(%v) = %v, true; want false", err, d)
		}
	}
}
