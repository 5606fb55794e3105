package ratelimit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// newTenant returns a tenant of its own, so that tests sharing a DynamoDB
// table never share counters.
func newTenant() string { return strings.ToLower(rand.Text()) }

// clock is a settable clock shared by the "instances" of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// instances returns n limiters on one table, as n Lambda instances would be.
func instances(tbl store.Table, n int, opts ratelimit.Options) []*ratelimit.Limiter {
	out := make([]*ratelimit.Limiter, n)
	for i := range out {
		out[i] = ratelimit.New(tbl, &opts)
	}
	return out
}

// refusedBy reports the limit err refuses by, or fails t if err is not a refusal.
func refusedBy(t *testing.T, err error) ratelimit.Limit {
	t.Helper()
	if fault.KindOf(err) != fault.KindRateLimited {
		t.Fatalf("error = %v (kind %s), want kind %s", err, fault.KindOf(err), fault.KindRateLimited)
	}
	ex, ok := errors.AsType[*ratelimit.Exceeded](err)
	if !ok {
		t.Fatalf("error %v does not carry an *Exceeded", err)
	}
	return ex.Limit
}

func TestParseLimitsReadsEveryLimit(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want ratelimit.Limits
	}{
		{"an empty spec keeps the base", "", ratelimit.DefaultLimits},
		{"rates are per second", "tenant_rate=5 tenant_burst=7", func() ratelimit.Limits {
			l := ratelimit.DefaultLimits
			l.TenantRate = ratelimit.Rate{PerSecond: 5, Burst: 7}
			return l
		}()},
		{"rates may be per minute, separated by commas", "principal_rate=120/min,principal_burst=3", func() ratelimit.Limits {
			l := ratelimit.DefaultLimits
			l.PrincipalRate = ratelimit.Rate{PerSecond: 2, Burst: 3}
			return l
		}()},
		{"zero removes a limit", "tenant_concurrency=0 principal_concurrency=0 tenant_rate=0/s", func() ratelimit.Limits {
			l := ratelimit.DefaultLimits
			l.TenantConcurrency, l.PrincipalConcurrency, l.TenantRate.PerSecond = 0, 0, 0
			return l
		}()},
		{"shares are by function", "share.vector/rag_basic=2 share.vector/rag_crag=1", func() ratelimit.Limits {
			l := ratelimit.DefaultLimits
			l.Shares = map[string]int{"vector/rag_basic": 2, "vector/rag_crag": 1}
			return l
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ratelimit.ParseLimits(tt.spec, ratelimit.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want.String() {
				t.Errorf("ParseLimits(%q) = %s, want %s", tt.spec, got, tt.want)
			}
			again, err := ratelimit.ParseLimits(got.String(), ratelimit.Limits{})
			if err != nil || again.String() != got.String() {
				t.Errorf("String does not read back: %s -> %s, %v", got, again, err)
			}
		})
	}
}

func TestParseLimitsNamesWhatIsWrong(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"tenant_rate", `"tenant_rate" is not key=value`},
		{"tenant_speed=3", `unknown limit "tenant_speed"`},
		{"tenant_rate=fast", "tenant_rate:"},
		{"tenant_rate=-1", "tenant_rate:"},
		{"tenant_concurrency=1001", "tenant_concurrency:"},
		{"principal_burst=1.5", "principal_burst:"},
		{"share.=2", `unknown limit "share."`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ratelimit.ParseLimits(tt.spec, ratelimit.DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseLimits(%q) = %v, want an error containing %q", tt.spec, err, tt.want)
			}
		})
	}
}

func TestRateAdmitsExactlyTheBurstAcrossInstances(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		clk := newClock() // stopped: nothing refills, so exactly the burst may pass
		lim := ratelimit.Limits{TenantRate: ratelimit.Rate{PerSecond: 1, Burst: 25}}
		ls := instances(tbl, 6, ratelimit.Options{Defaults: &lim, Batch: 1, Now: clk.Now})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		var admitted, refused atomic.Int64
		var wg sync.WaitGroup
		for g := range 12 {
			wg.Go(func() {
				for range 6 {
					_, err := ls[g%len(ls)].Acquire(context.Background(), ratelimit.Call{Caller: caller})
					switch {
					case err == nil:
						admitted.Add(1)
					case fault.KindOf(err) == fault.KindRateLimited:
						refused.Add(1)
					default:
						t.Errorf("Acquire: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if admitted.Load() != 25 || refused.Load() != 12*6-25 {
			t.Errorf("admitted %d and refused %d of %d calls, want exactly the burst of 25 admitted", admitted.Load(), refused.Load(), 12*6)
		}
	})
}

func TestRateWithBatchesNeverExceedsTheBurst(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		clk := newClock()
		const burst, batch, n = 40, 4, 4
		lim := ratelimit.Limits{TenantRate: ratelimit.Rate{PerSecond: 1, Burst: burst}}
		ls := instances(tbl, n, ratelimit.Options{Defaults: &lim, Batch: batch, Hold: time.Hour, Now: clk.Now})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for range 20 {
					if _, err := ls[g%n].Acquire(context.Background(), ratelimit.Call{Caller: caller}); err == nil {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		// Tokens held by one instance are lost to the others: at most
		// batch-1 per instance.
		if got := admitted.Load(); got > burst || got < burst-n*(batch-1) {
			t.Errorf("admitted %d calls, want %d..%d", got, burst-n*(batch-1), burst)
		}
	})
}

// TestRateHoldsOverTime runs instances against the real clock for a second:
// the calls admitted must stay within burst + rate*elapsed (the tolerance is
// one call, for the clock read between a call's check and the elapsed time),
// and must reach at least half of it (contention on one item must not
// starve the tenant of its own budget).
func TestRateHoldsOverTime(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		lim := ratelimit.Limits{TenantRate: ratelimit.Rate{PerSecond: 40, Burst: 10}}
		ls := instances(tbl, 4, ratelimit.Options{Defaults: &lim, Batch: 1})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		var admitted atomic.Int64
		start := time.Now()
		stop := start.Add(time.Second)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if _, err := ls[g%len(ls)].Acquire(context.Background(), ratelimit.Call{Caller: caller}); err == nil {
						admitted.Add(1)
					} else if fault.KindOf(err) != fault.KindRateLimited {
						t.Errorf("Acquire: %v", err)
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		most := 10 + 40*elapsed.Seconds() + 1
		t.Logf("admitted %d calls in %v; the limit allows %.1f", admitted.Load(), elapsed, most)
		if got := float64(admitted.Load()); got > most || got < most/2 {
			t.Errorf("admitted %.0f calls in %v, want %.1f..%.1f", got, elapsed, most/2, most)
		}
	})
}

func TestConcurrencyNeverExceedsItsLimitAcrossInstances(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		lim := ratelimit.Limits{TenantConcurrency: 3}
		ls := instances(tbl, 4, ratelimit.Options{Defaults: &lim})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		var inFlight, most, admitted atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for range 8 {
					ctx := context.Background()
					lease, err := ls[g%len(ls)].Acquire(ctx, ratelimit.Call{Caller: caller, Deadline: time.Now().Add(time.Minute)})
					if err != nil {
						if refusedBy(t, err) != ratelimit.TenantConcurrency {
							t.Errorf("refused by %v, want tenant concurrency", err)
						}
						continue
					}
					admitted.Add(1)
					n := inFlight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(3 * time.Millisecond)
					inFlight.Add(-1)
					if err := lease.Release(ctx); err != nil {
						t.Errorf("Release: %v", err)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%d calls admitted, at most %d in flight", admitted.Load(), most.Load())
		if most.Load() > 3 {
			t.Errorf("%d calls in flight at once, want at most 3", most.Load())
		}
		// Every lease was released: the tenant may run 3 at once again.
		for i := range 3 {
			if _, err := ls[i].Acquire(context.Background(), ratelimit.Call{Caller: caller}); err != nil {
				t.Errorf("after every release, call %d: %v", i, err)
			}
		}
	})
}

func TestLeasesLapseWhenAnInstanceDiesMidCall(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		clk := newClock()
		lim := ratelimit.Limits{TenantConcurrency: 2}
		ls := instances(tbl, 2, ratelimit.Options{Defaults: &lim, Now: clk.Now})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		deadline := clk.Now().Add(10 * time.Second)
		for range 2 { // the instance that dies: it never releases
			if _, err := ls[0].Acquire(context.Background(), ratelimit.Call{Caller: caller, Deadline: deadline}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := ls[1].Acquire(context.Background(), ratelimit.Call{Caller: caller, Deadline: deadline})
		if refusedBy(t, err) != ratelimit.TenantConcurrency {
			t.Fatalf("while the dead calls' deadlines last: %v, want a tenant concurrency refusal", err)
		}
		clk.Advance(10*time.Second + ratelimit.LeaseGrace)
		for i := range 2 {
			if _, err := ls[1].Acquire(context.Background(), ratelimit.Call{Caller: caller, Deadline: clk.Now().Add(time.Second)}); err != nil {
				t.Errorf("call %d after the dead calls' leases lapsed: %v", i, err)
			}
		}
	})
}

func TestAReleaseOnAnotherInstanceIsSeen(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		lim := ratelimit.Limits{TenantConcurrency: 1}
		ls := instances(tbl, 2, ratelimit.Options{Defaults: &lim})
		caller := tenant.Caller{Tenant: newTenant(), Principal: "p"}
		ctx := context.Background()
		lease, err := ls[0].Acquire(ctx, ratelimit.Call{Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ls[1].Acquire(ctx, ratelimit.Call{Caller: caller}); refusedBy(t, err) != ratelimit.TenantConcurrency {
			t.Fatalf("second call: %v", err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// ls[1] remembers the item as full; it must look again before refusing.
		if _, err := ls[1].Acquire(ctx, ratelimit.Call{Caller: caller}); err != nil {
			t.Errorf("after the release on the other instance: %v", err)
		}
	})
}

// heldRead is a table whose next read of a lease set, once armed, signals
// read and waits for resume before answering: the state it answers with is
// older than anything written meanwhile.
type heldRead struct {
	store.Table
	mu           sync.Mutex
	read, resume chan struct{}
}

func (h *heldRead) arm() (read, resume chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.read, h.resume = make(chan struct{}), make(chan struct{})
	return h.read, h.resume
}

func (h *heldRead) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	it, err := h.Table.Get(ctx, pk, sk)
	if sk != "leases" {
		return it, err
	}
	h.mu.Lock()
	read, resume := h.read, h.resume
	h.read, h.resume = nil, nil
	h.mu.Unlock()
	if read != nil {
		close(read)
		<-resume
	}
	return it, err
}

func TestAReleaseIsNotLostToAStateReadBeforeItsLease(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		lim := ratelimit.Limits{TenantConcurrency: 3}
		held := &heldRead{Table: tbl}
		a := ratelimit.New(held, &ratelimit.Options{Defaults: &lim})
		b := ratelimit.New(tbl, &ratelimit.Options{Defaults: &lim})
		ctx := context.Background()
		call := ratelimit.Call{Caller: tenant.Caller{Tenant: newTenant(), Principal: "p"}, Deadline: time.Now().Add(time.Minute)}
		var onB []*ratelimit.Lease
		for range 3 {
			lease, err := b.Acquire(ctx, call)
			if err != nil {
				t.Fatal(err)
			}
			onB = append(onB, lease)
		}
		// A call on a reads the full lease set and is held there while a
		// place frees up and a second call on a takes it; the first is then
		// refused on what it read, which predates the second call's lease.
		read, resume := held.arm()
		refused := make(chan error)
		go func() {
			_, err := a.Acquire(ctx, call)
			refused <- err
		}()
		<-read
		if err := onB[0].Release(ctx); err != nil {
			t.Fatal(err)
		}
		lease, err := a.Acquire(ctx, call)
		if err != nil {
			t.Fatal(err)
		}
		close(resume)
		if err := <-refused; refusedBy(t, err) != ratelimit.TenantConcurrency {
			t.Fatalf("held call: %v", err)
		}
		for _, l := range append(onB[1:], lease) {
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			if _, err := b.Acquire(ctx, call); err != nil {
				t.Errorf("after every release, call %d: %v", i, err)
			}
		}
	})
}

func TestRefusalsNameTheLimitAndWhenToRetry(t *testing.T) {
	tests := []struct {
		name      string
		limits    ratelimit.Limits
		calls     int // admitted before the refusal
		principal func(i int) string
		want      ratelimit.Limit
		message   string
		retry     time.Duration // at most
	}{
		{"a principal over its rate", ratelimit.Limits{PrincipalRate: ratelimit.Rate{PerSecond: 2, Burst: 2}}, 2,
			func(int) string { return "ann" }, ratelimit.PrincipalRate,
			"principal rate limit reached: each principal of tenant %q may make 2 calls a second (bursts of 2); retry after 0.5 s", 500 * time.Millisecond},
		{"a tenant over its rate, whichever principal calls", ratelimit.Limits{TenantRate: ratelimit.Rate{PerSecond: 0.5, Burst: 3}}, 3,
			func(i int) string { return string(rune('a' + i)) }, ratelimit.TenantRate,
			"tenant rate limit reached: tenant %q may make 0.5 calls a second (bursts of 3); retry after 2.0 s", 2 * time.Second},
		{"a tenant with too many calls in flight", ratelimit.Limits{TenantConcurrency: 2}, 2,
			func(i int) string { return string(rune('a' + i)) }, ratelimit.TenantConcurrency,
			"tenant concurrency limit reached: tenant %q may have 2 calls in flight; retry after 1.0 s", time.Second},
		{"a principal with too many calls in flight", ratelimit.Limits{TenantConcurrency: 5, PrincipalConcurrency: 1}, 1,
			func(int) string { return "ann" }, ratelimit.PrincipalConcurrency,
			"principal concurrency limit reached: each principal of tenant %q may have 1 calls in flight; retry after 1.0 s", time.Second},
		{"a tenant over its share of a function", ratelimit.Limits{Shares: map[string]int{"vector/rag_basic": 2}}, 2,
			func(i int) string { return string(rune('a' + i)) }, ratelimit.FunctionShare,
			"function share reached: tenant %q may have 2 calls to vector/rag_basic in flight; retry after 1.0 s", time.Second},
	}
	tbl := storetest.OpenEmbedded(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			l := ratelimit.New(tbl, &ratelimit.Options{Defaults: &tt.limits, Batch: 1, Now: clk.Now})
			tn := newTenant()
			call := func(i int) error {
				_, err := l.Acquire(context.Background(), ratelimit.Call{Caller: tenant.Caller{Tenant: tn, Principal: tt.principal(i)},
					Function: "vector/rag_basic", Deadline: clk.Now().Add(time.Minute)})
				return err
			}
			for i := range tt.calls {
				if err := call(i); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			err := call(tt.calls)
			if got := refusedBy(t, err); got != tt.want {
				t.Errorf("refused by %s, want %s", got, tt.want)
			}
			if _, _, msg := fault.Public(err); msg != strings.ReplaceAll(tt.message, "%q", `"`+tn+`"`) {
				t.Errorf("message = %q\nwant      %q", msg, strings.ReplaceAll(tt.message, "%q", `"`+tn+`"`))
			}
			if d, ok := fault.RetryAfter(err); !ok || d <= 0 || d > tt.retry {
				t.Errorf("RetryAfter = %v, %v; want (0, %v]", d, ok, tt.retry)
			}
			// Another function, or another tenant, is not held back by this one's share.
			if tt.want == ratelimit.FunctionShare {
				if _, err := l.Acquire(context.Background(), ratelimit.Call{Caller: tenant.Caller{Tenant: tn, Principal: "z"}, Function: "vector/rag_crag"}); err != nil {
					t.Errorf("another function: %v", err)
				}
			}
			if _, err := l.Acquire(context.Background(), ratelimit.Call{Caller: tenant.Caller{Tenant: newTenant(), Principal: tt.principal(0)}, Function: "vector/rag_basic"}); err != nil {
				t.Errorf("another tenant: %v", err)
			}
		})
	}
}

func TestAnOverrideChangesOneTenantsLimits(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		lim := ratelimit.Limits{TenantConcurrency: 1}
		l := ratelimit.New(tbl, &ratelimit.Options{Defaults: &lim, OverrideTTL: -1})
		big, small := newTenant(), newTenant()
		if err := ratelimit.SetOverride(ctx, tbl, big, "tenant_concurrency=3"); err != nil {
			t.Fatal(err)
		}
		hold := func(tn string, n int) int {
			for i := range n {
				if _, err := l.Acquire(ctx, ratelimit.Call{Caller: tenant.Caller{Tenant: tn, Principal: "p"}}); err != nil {
					return i
				}
			}
			return n
		}
		if got := hold(big, 4); got != 3 {
			t.Errorf("the tenant with the override got %d calls in flight, want 3", got)
		}
		if got := hold(small, 4); got != 1 {
			t.Errorf("the tenant without got %d calls in flight, want the default 1", got)
		}
		if err := ratelimit.SetOverride(ctx, tbl, big, "tenant_concurrency=lots"); err == nil {
			t.Error("SetOverride accepted an unreadable spec")
		}
		if err := ratelimit.ClearOverride(ctx, tbl, big); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx, ratelimit.Call{Caller: tenant.Caller{Tenant: big, Principal: "p"}}); refusedBy(t, err) != ratelimit.TenantConcurrency {
			t.Errorf("after clearing the override: %v, want the default's refusal", err)
		}
	})
}
