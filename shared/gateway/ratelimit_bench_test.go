package gateway_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// BenchmarkToolsCallRateLimits measures what the limiter adds to a
// tools/call through the gateway over loopback HTTP, on the embedded store
// the local server uses (the fast path, memory_get_context from the store),
// beside the same gateway without limits, in one run; with DynamoDB Local in
// SWITCHBOARD_TEST_DYNAMODB, also with the limiter's counters there, as
// deployed. The rates are raised
// so that no call is refused: it measures cost, not refusals.
//
//	[SWITCHBOARD_TEST_DYNAMODB=http://127.0.0.1:8000] go test -run '^$' -bench ToolsCallRateLimits -benchtime 2000x ./shared/gateway/
func BenchmarkToolsCallRateLimits(b *testing.B) {
	unrefused := ratelimit.Shares(catalog.Default(), ratelimit.DefaultLimits)
	unrefused.TenantRate.PerSecond, unrefused.PrincipalRate.PerSecond = 1e6, 1e6
	cases := []struct {
		name   string
		limits *ratelimit.Limits
		dynamo bool // the limiter's counters on DynamoDB Local, the rest embedded
	}{
		{"off", nil, false},
		{"defaults", &unrefused, false},
	}
	if os.Getenv(storetest.DynamoDBEnv) != "" {
		cases = append(cases, struct {
			name   string
			limits *ratelimit.Limits
			dynamo bool
		}{"defaults-on-dynamodb-local", &unrefused, true})
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			tbl, err := embedded.Open(filepath.Join(b.TempDir(), "switchboard.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { tbl.Close() })
			deps := lambdafn.Deps{Table: tbl, Summarizer: offline.Summarizer{}}
			opts := gateway.Options{Catalog: catalog.Default(), Invoker: stack(b, deps), Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"}}
			if bc.limits != nil {
				var counters store.Table = tbl
				if bc.dynamo {
					counters = dynamo.New(storetest.DynamoConfig(b), storetest.DynamoTable(b))
				}
				opts.Limiter = ratelimit.New(counters, &ratelimit.Options{Defaults: bc.limits})
			}
			gw, err := gateway.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(gw.Handler())
			b.Cleanup(srv.Close)
			url := srv.URL
			create := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"bench"}}}`
			if answer, err := rawCall(context.Background(), url, "", create); err != nil || isToolError(answer) {
				b.Fatalf("%v %s", err, answer)
			}
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"bench"}}}`
			ctx := context.Background()
			for b.Loop() {
				answer, err := rawCall(ctx, url, "", body)
				if err != nil || isToolError(answer) {
					b.Fatalf("%v %s", err, answer)
				}
			}
		})
	}
}
