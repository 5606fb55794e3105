package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// counting is a table that counts the reads and writes made through it.
type counting struct {
	store.Table
	gets, puts, fails atomic.Int64
}

func (c *counting) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	c.gets.Add(1)
	return c.Table.Get(ctx, pk, sk)
}
func (c *counting) Put(ctx context.Context, it store.Item, cond store.Condition) error {
	c.puts.Add(1)
	err := c.Table.Put(ctx, it, cond)
	if err != nil {
		c.fails.Add(1)
	}
	return err
}

// TestOneInstanceWritesEachItemOnceAndReadsNothing holds the limiter to its
// hot-path cost: an instance serving a tenant alone starts every update
// from the state it wrote last, so after the first reads each call is a
// lease write and its release, plus the rate writes its batches leave
// (principal burst 20: batches of 2; tenant burst 40: batches of 4), and no
// write fails its condition.
func TestOneInstanceWritesEachItemOnceAndReadsNothing(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ct := &counting{Table: tbl}
		lim := ratelimit.DefaultLimits
		lim.TenantRate.PerSecond, lim.PrincipalRate.PerSecond = 1e6, 1e6
		l := ratelimit.New(ct, &ratelimit.Options{Defaults: &lim, Hold: time.Hour})
		c := ratelimit.Call{Caller: tenant.Caller{Tenant: newTenant(), Principal: "p"}, Function: "memory/add_message"}
		const calls = 200
		for range calls {
			c.Deadline = time.Now().Add(15 * time.Second)
			lease, err := l.Acquire(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		gets, puts, fails := ct.gets.Load(), ct.puts.Load(), ct.fails.Load()
		t.Logf("%d calls: %d reads, %d writes, %d failed conditions", calls, gets, puts, fails)
		// Reads: the override and the three items, once each.
		if gets > 4 || puts != 2*calls+calls/2+calls/4 || fails != 0 {
			t.Errorf("%d calls made %d reads and %d writes (%d failed); want at most 4 reads, %d writes, none failed",
				calls, gets, puts, fails, 2*calls+calls/2+calls/4)
		}
	})
}
