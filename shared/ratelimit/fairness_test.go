package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// errThrottled is the pipeline function refusing a call beyond its reserved
// concurrency, as Lambda throttles it (and shared/rag's limiter in one process).
var errThrottled = errors.New("function at its reserved concurrency")

// pipelineFunction is a function with reserved concurrency shared by every
// tenant: a call beyond it is refused at once.
type pipelineFunction struct{ slots chan struct{} }

func (f pipelineFunction) serve(d time.Duration) error {
	select {
	case f.slots <- struct{}{}:
		time.Sleep(d)
		<-f.slots
		return nil
	default:
		return errThrottled
	}
}

// call goes through the limiter first, when there is one, as the gateway
// would, then to the function.
func call(ctx context.Context, l *ratelimit.Limiter, f pipelineFunction, c tenant.Caller, d time.Duration) error {
	if l == nil {
		return f.serve(d)
	}
	lease, err := l.Acquire(ctx, ratelimit.Call{Caller: c, Function: "vector/rag_basic", Deadline: time.Now().Add(30 * time.Second)})
	if err != nil {
		return err
	}
	defer lease.Release(context.WithoutCancel(ctx))
	return f.serve(d)
}

// TestAFloodingTenantCannotMakeAnothersCallsFail reproduces issue 13's
// measurement: tenant A floods rag_basic (reserved concurrency 5) from many
// instances while tenant B makes 60 calls; today 22 of B's 60 failed. With
// each tenant held to a share of 2 of the function's 5 places, none may.
// Without the limiter the same run must fail some of B's calls, or the test
// proves nothing.
func TestAFloodingTenantCannotMakeAnothersCallsFail(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		lim := ratelimit.DefaultLimits
		lim.TenantRate = ratelimit.Rate{PerSecond: 500, Burst: 200} // B's 60 calls come fast; only A's flood should meet a limit
		lim.PrincipalRate = lim.TenantRate
		lim.Shares = map[string]int{"vector/rag_basic": 2}
		run := func(limited bool) (failedB int, servedA, refusedA int64) {
			f := pipelineFunction{slots: make(chan struct{}, 5)}
			ls := make([]*ratelimit.Limiter, 4)
			if limited {
				ls = instances(tbl, 4, ratelimit.Options{Defaults: &lim})
			}
			a := tenant.Caller{Tenant: newTenant(), Principal: "flooder"}
			b := tenant.Caller{Tenant: newTenant(), Principal: "patient"}
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var served, refused atomic.Int64
			for g := range 16 {
				wg.Go(func() {
					for ctx.Err() == nil {
						if err := call(ctx, ls[g%len(ls)], f, a, 20*time.Millisecond); err != nil {
							refused.Add(1)
							time.Sleep(time.Millisecond)
						} else {
							served.Add(1)
						}
					}
				})
			}
			time.Sleep(50 * time.Millisecond) // the flood is on
			for i := range 60 {
				if err := call(context.Background(), ls[i%len(ls)], f, b, 5*time.Millisecond); err != nil {
					failedB++
					if limited {
						t.Logf("tenant B's call %d: %v", i, err)
					}
				}
			}
			stop()
			wg.Wait()
			return failedB, served.Load(), refused.Load()
		}
		failed, served, refused := run(false)
		t.Logf("without the limiter: %d of tenant B's 60 calls failed (tenant A: %d served, %d refused)", failed, served, refused)
		if failed == 0 {
			t.Fatal("without the limiter no call of tenant B failed: the flood does not reproduce the issue")
		}
		failed, served, refused = run(true)
		t.Logf("with the limiter: %d of tenant B's 60 calls failed (tenant A: %d served, %d refused)", failed, served, refused)
		if failed != 0 {
			t.Errorf("%d of tenant B's 60 calls failed while tenant A flooded, want 0", failed)
		}
		if served == 0 {
			t.Error("tenant A was never served: its share should still run")
		}
	})
}
