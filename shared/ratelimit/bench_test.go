package ratelimit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// BenchmarkAcquireRelease measures what the limiter adds to one call, an
// Acquire and its Release, on each backend: issue 13's "rate limiter
// overhead per call on DynamoDB Local". One instance calls in sequence, as a
// warm function serving one tenant does.
//
//	SWITCHBOARD_TEST_DYNAMODB=http://127.0.0.1:8000 go test -run '^$' -bench AcquireRelease ./shared/ratelimit/
func BenchmarkAcquireRelease(b *testing.B) {
	rates := ratelimit.Limits{TenantRate: ratelimit.DefaultLimits.TenantRate, PrincipalRate: ratelimit.DefaultLimits.PrincipalRate}
	for _, backend := range benchTables(b) {
		for _, bc := range []struct {
			name   string
			limits ratelimit.Limits
			batch  int
		}{
			{"none", ratelimit.Limits{}, 0},
			{"rates,write-every-call", rates, 1},
			{"rates,batched", rates, 0},
			{"defaults", ratelimit.DefaultLimits, 0},
		} {
			b.Run(backend.name+"/"+bc.name, func(b *testing.B) {
				// Refills far beyond the benchmark's pace: it measures cost, not refusals.
				lim := bc.limits
				if lim.TenantRate.PerSecond > 0 {
					lim.TenantRate.PerSecond, lim.PrincipalRate.PerSecond = 1e6, 1e6
				}
				l := ratelimit.New(backend.table, &ratelimit.Options{Defaults: &lim, Batch: bc.batch})
				c := ratelimit.Call{Caller: tenant.Caller{Tenant: newTenant(), Principal: "bench"}, Function: "memory/add_message"}
				ctx := context.Background()
				for b.Loop() {
					c.Deadline = time.Now().Add(15 * time.Second)
					lease, err := l.Acquire(ctx, c)
					if err != nil {
						b.Fatal(err)
					}
					if err := lease.Release(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

type benchTable struct {
	name  string
	table store.Table
}

func benchTables(b *testing.B) []benchTable {
	tbl, err := embedded.Open(filepath.Join(b.TempDir(), "switchboard.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tbl.Close() })
	out := []benchTable{{"embedded", tbl}}
	if os.Getenv(storetest.DynamoDBEnv) != "" {
		out = append(out, benchTable{"dynamo", dynamo.New(storetest.DynamoConfig(b), storetest.DynamoTable(b))})
	}
	return out
}
