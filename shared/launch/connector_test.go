package launch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/config"
)

// upstreamToken is the bearer token the test upstreams demand; it must never
// appear in anything Switchboard answers.
const upstreamToken = "Bearer upstream-secret-7f3a"

// startUpstream serves a go-sdk MCP server with one tool, echo, over the
// transport named ("streamable_http" or "sse") on 127.0.0.1, refusing
// requests without [upstreamToken], and returns its endpoint.
func startUpstream(t *testing.T, transport string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if transport == "sse" {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != upstreamToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// The connectors' sessions hold event streams open, which Close
		// would wait for.
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// callJSON calls tool through cs and returns its structured content as
// JSON text, failing the test on a tool error unless wantError.
func callJSON(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wantError bool) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if res.IsError != wantError {
		t.Fatalf("%s answered isError %v: %s", tool, res.IsError, text)
	}
	if strings.Contains(text, "upstream-secret") {
		t.Fatalf("%s answered the upstream's secret: %s", tool, text)
	}
	return text
}

// TestTheConnectorToolsRegisterVerifyAndSyncRealUpstreams drives the
// registry tools through the local server over HTTP, with the go-sdk's
// client, against go-sdk upstreams on both transports: what
// --allow-connector-hosts allows is reached over http with sealed headers,
// and a connector without them fails to verify.
func TestTheConnectorToolsRegisterVerifyAndSyncRealUpstreams(t *testing.T) {
	base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, transport := range []string{"streamable_http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			name := "up_" + strings.TrimSuffix(transport, "_http")
			url := startUpstream(t, transport)
			callJSON(t, cs, "connector_create", map[string]any{"name": name, "base_url": url, "transport": transport,
				"headers": map[string]string{"Authorization": upstreamToken}}, false)
			if out := callJSON(t, cs, "connector_verify", map[string]any{"name": name}, false); !strings.Contains(out, `"server_name":"upstream"`) {
				t.Errorf("connector_verify answered %s, want the upstream's name", out)
			}
			var synced struct{ Tools []string }
			json.Unmarshal([]byte(callJSON(t, cs, "connector_sync", map[string]any{"name": name}, false)), &synced)
			if !slices.Contains(synced.Tools, name+"__echo") {
				t.Errorf("connector_sync listed %v, want %s__echo", synced.Tools, name)
			}
			var got struct {
				Connector struct {
					Status     string `json:"status"`
					SyncStatus string `json:"sync_status"`
				}
			}
			json.Unmarshal([]byte(callJSON(t, cs, "connector_get", map[string]any{"name": name}, false)), &got)
			if got.Connector.Status != "CONNECTED" || got.Connector.SyncStatus != "SYNCED" {
				t.Errorf("connector_get: status %s, sync %s; want CONNECTED, SYNCED", got.Connector.Status, got.Connector.SyncStatus)
			}
			callJSON(t, cs, "approval_policy_set", map[string]any{"connector": name, "tool": "echo", "policy": "ALWAYS_ALLOW"}, false)
			if out := callJSON(t, cs, "connector_tools_openai", map[string]any{}, false); !strings.Contains(out, `"name":"`+name+`__echo"`) {
				t.Errorf("connector_tools_openai answered %s, want %s__echo", out, name)
			}
			callJSON(t, cs, "connector_create", map[string]any{"name": name + "_anon", "base_url": url, "transport": transport}, false)
			if out := callJSON(t, cs, "connector_verify", map[string]any{"name": name + "_anon"}, true); !strings.Contains(out, name+"_anon") {
				t.Errorf("verifying without credentials answered %s, want an error naming the connector", out)
			}
		})
	}
	if out := callJSON(t, cs, "connector_health", map[string]any{}, false); !strings.Contains(out, `"up_sse"`) {
		t.Errorf("connector_health answered %s, want every connector", out)
	}
}

// TestTheLocalServerRefusesLoopbackUpstreamsItWasNotTold verifies that
// without --allow-connector-hosts a connector aimed at this machine is
// refused when it is created.
func TestTheLocalServerRefusesLoopbackUpstreamsItWasNotTold(t *testing.T) {
	base, _ := serveLocal(t, t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	url := startUpstream(t, "streamable_http")
	if out := callJSON(t, cs, "connector_create", map[string]any{"name": "local", "base_url": url, "transport": "streamable_http"}, true); !strings.Contains(out, "base_url") {
		t.Errorf("connector_create answered %s, want a refusal naming base_url", out)
	}
}

// TestTheLocalServerSyncsConnectorsOnItsSchedule verifies the local stand-in
// for the EventBridge schedule: with the interval set, a connector nobody
// syncs is synced.
func TestTheLocalServerSyncsConnectorsOnItsSchedule(t *testing.T) {
	t.Setenv(config.EnvConnectorSyncInterval, "1s")
	base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callJSON(t, cs, "connector_create", map[string]any{"name": "up", "base_url": startUpstream(t, "streamable_http"),
		"transport": "streamable_http", "headers": map[string]string{"Authorization": upstreamToken}}, false)
	var got struct {
		Connector struct {
			SyncStatus string `json:"sync_status"`
		}
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		json.Unmarshal([]byte(callJSON(t, cs, "connector_get", map[string]any{"name": "up"}, false)), &got)
		if got.Connector.SyncStatus == "SYNCED" {
			return
		}
	}
	t.Fatalf("the connector is still %s; the schedule did not sync it", got.Connector.SyncStatus)
}
