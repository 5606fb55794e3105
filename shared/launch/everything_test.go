package launch

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/connector"
)

// TestServerEverythingIsProxiedThroughTheLocalServer proxies the MCP
// reference server, @modelcontextprotocol/server-everything, which
// scripts/test starts over Streamable HTTP (SWITCHBOARD_TEST_EVERYTHING_HTTP)
// and the legacy SSE transport (SWITCHBOARD_TEST_EVERYTHING_SSE), through
// the local server over HTTP: registered, verified and synced, its tools
// listed as everything__*, echo called, a call its server refuses passed
// through as isError, and its long-running operation's progress received by
// the client. Each transport skips when its URL is unset.
func TestServerEverythingIsProxiedThroughTheLocalServer(t *testing.T) {
	for _, tc := range []struct{ transport, env string }{
		{connector.TransportStreamable, "SWITCHBOARD_TEST_EVERYTHING_HTTP"},
		{connector.TransportSSE, "SWITCHBOARD_TEST_EVERYTHING_SSE"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			upstream := os.Getenv(tc.env)
			if upstream == "" {
				t.Skipf("%s is not set (scripts/test starts server-everything)", tc.env)
			}
			base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
			var mu sync.Mutex
			var progress []float64
			cs := connectLocal(t, base, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				progress = append(progress, req.Params.Progress)
			}})
			ctx := context.Background()
			callJSON(t, cs, "connector_create", map[string]any{"name": "everything", "base_url": upstream, "transport": tc.transport}, false)
			if out := callJSON(t, cs, "connector_verify", map[string]any{"name": "everything"}, false); !strings.Contains(out, `"CONNECTED"`) {
				t.Fatalf("connector_verify answered %s", out)
			}
			callJSON(t, cs, "connector_sync", map[string]any{"name": "everything"}, false)
			for _, tool := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
				callJSON(t, cs, "approval_policy_set", map[string]any{"connector": "everything", "tool": tool, "policy": "ALWAYS_ALLOW"}, false)
			}

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var proxied []string
			for _, tl := range tools.Tools {
				if strings.HasPrefix(tl.Name, "everything__") {
					proxied = append(proxied, tl.Name)
				}
			}
			for _, want := range []string{"everything__echo", "everything__get-sum", "everything__trigger-long-running-operation"} {
				if !slices.Contains(proxied, want) {
					t.Fatalf("tools/list lists %v, without %s", proxied, want)
				}
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__echo", Arguments: map[string]any{"message": "through switchboard"}})
			if err != nil || res.IsError || !strings.Contains(textOf(res), "through switchboard") {
				t.Fatalf("everything__echo answered %+v, %v", res, err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__get-sum", Arguments: map[string]any{"a": "one", "b": 2}})
			if err != nil || !res.IsError || strings.Contains(textOf(res), "connector") {
				t.Fatalf("everything__get-sum with a string answered %+v, %v; want the upstream's own isError result", res, err)
			}
			params := &mcp.CallToolParams{Name: "everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
			params.SetProgressToken("long")
			res, err = cs.CallTool(ctx, params)
			if err != nil || res.IsError || !strings.Contains(textOf(res), "completed") {
				t.Fatalf("everything__trigger-long-running-operation answered %+v, %v", res, err)
			}
			got := awaitProgress(&mu, &progress, 3)
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress received %v, want the operation's 1, 2, 3", got)
			}
		})
	}
}
