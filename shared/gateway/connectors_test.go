package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A token whose scopes allow only read-only tools lists the proxied tools
// its upstream marks readOnlyHint and calls them, and is refused the others
// without the upstream being called; a token allowing writes lists and
// calls both.
func TestAReadScopeListsAndCallsOnlyReadOnlyProxiedTools(t *testing.T) {
	changed := 0
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "look", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looked"}}}, nil, nil
	})
	mcp.AddTool(up, &mcp.Tool{Name: "change"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		changed++
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "changed"}}}, nil, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(func() { upstream.CloseClientConnections(); upstream.Close() })

	is := newIssuer(t)
	srv := httptest.NewUnstartedServer(nil)
	resource := "http://" + srv.Listener.Addr().String() + "/mcp"
	tbl := storetest.OpenEmbedded(t)
	scopes := oauth.DefaultScopes("memory")
	v, err := oauth.NewValidator(oauth.ValidatorOptions{Issuer: is.url, JWKSURL: is.jwks, Resource: resource, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}
	connectorsDeps(t, &deps)
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
	deps.CheckURL, deps.HTTPClient = guard.CheckURL, guard.Client(0)
	gw, err := gateway.New(gateway.Options{
		Catalog: catalog.Default(), Invoker: stack(t, deps), Keys: apikey.New(tbl, nil),
		OAuth: &gateway.OAuth{Validator: v, Metadata: oauth.ResourceMetadata{Resource: resource, AuthorizationServers: []string{is.url}, ScopesSupported: scopes.Supported()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = gw.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	session := func(scope string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{is.mint(t, "ES256", is.claims(resource, scope))}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ctx := context.Background()
	writer, reader := session(oauth.ScopeWrite), session(oauth.ScopeRead)
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"connector_create", map[string]any{"name": "up", "base_url": upstream.URL, "transport": "streamable_http"}},
		{"connector_sync", map[string]any{"name": "up"}},
		{"approval_policy_set", map[string]any{"connector": "up", "tool": "look", "policy": "ALWAYS_ALLOW"}},
		{"approval_policy_set", map[string]any{"connector": "up", "tool": "change", "policy": "ALWAYS_ALLOW"}},
	} {
		if res, err := writer.CallTool(ctx, &mcp.CallToolParams{Name: step.tool, Arguments: step.args}); err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", step.tool, res, err)
		}
	}
	listed := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			if strings.HasPrefix(tl.Name, "up__") {
				names = append(names, tl.Name)
			}
		}
		slices.Sort(names)
		return names
	}
	if got := listed(writer); !slices.Equal(got, []string{"up__change", "up__look"}) {
		t.Errorf("a write token lists %v, want both tools", got)
	}
	if got := listed(reader); !slices.Equal(got, []string{"up__look"}) {
		t.Errorf("a read token lists %v, want the read-only tool alone", got)
	}
	if res, err := reader.CallTool(ctx, &mcp.CallToolParams{Name: "up__look"}); err != nil || res.IsError {
		t.Errorf("a read token calling up__look: %+v, %v", res, err)
	}
	res, err := reader.CallTool(ctx, &mcp.CallToolParams{Name: "up__change"})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "read-only") || changed != 0 {
		t.Errorf("a read token calling up__change: %+v, %v (upstream calls %d); want a refusal", res, err, changed)
	}
	if res, err := writer.CallTool(ctx, &mcp.CallToolParams{Name: "up__change"}); err != nil || res.IsError || changed != 1 {
		t.Errorf("a write token calling up__change: %+v, %v (upstream calls %d)", res, err, changed)
	}
}

// A proxied call lands in the audit log beside Switchboard's own calls: the
// host reads its ToolCalled event with get_audit_trace under the trace its
// result names, once the proxy function's work after the answer is done;
// and connector_health counts it (its function is the one that called).
func TestAProxiedCallIsAuditedAndCounted(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(func() { upstream.CloseClientConnections(); upstream.Close() })
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}
		connectorsDeps(t, &deps)
		guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
		deps.CheckURL, deps.HTTPClient = guard.CheckURL, guard.Client(0)
		st := stack(t, deps)
		t.Cleanup(func() { st.Close() })
		caller := tenant.Caller{Tenant: "audit-" + audit.NewTraceID()[:12], Principal: "alice"}
		gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: st, Anonymous: &caller})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(gw.Handler())
		t.Cleanup(srv.Close)
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		mustCall(t, cs, "connector_create", map[string]any{"name": "up", "base_url": upstream.URL, "transport": "streamable_http"})
		mustCall(t, cs, "connector_sync", map[string]any{"name": "up"})
		mustCall(t, cs, "approval_policy_set", map[string]any{"connector": "up", "tool": "echo", "policy": "ALWAYS_ALLOW"})

		res := call(t, cs, "up__echo", map[string]any{"text": "a private argument"})
		trace, _ := res.Meta[invoke.TraceMetaKey].(string)
		if res.IsError || text(res) != "a private argument" || trace == "" {
			t.Fatalf("up__echo = %+v", res)
		}
		if err := st.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		out := mustCall(t, cs, "get_audit_trace", map[string]any{"trace_id": trace})
		events, _ := out["events"].([]any)
		if len(events) != 1 {
			t.Fatalf("the proxied call's trace holds %d events, want its ToolCalled: %v", len(events), out)
		}
		ev := events[0].(map[string]any)
		detail, _ := ev["detail"].(map[string]any)
		if ev["type"] != audit.ToolCalled || ev["tool"] != "up__echo" || ev["principal"] != "alice" || ev["outcome"] != "ok" ||
			detail["connector"] != "up" || detail["tool"] != "echo" || len(fmt.Sprint(detail["arguments_sha256"])) != 64 {
			t.Errorf("event %v, want up__echo's ToolCalled with its connector, tool and arguments' digest", ev)
		}
		if b, _ := json.Marshal(out); strings.Contains(string(b), "a private argument") {
			t.Errorf("the audit trail holds the call's arguments: %s", b)
		}
		health := mustCall(t, cs, "connector_health", map[string]any{})
		conns, _ := health["connectors"].([]any)
		if len(conns) != 1 || conns[0].(map[string]any)["calls"] != float64(1) || conns[0].(map[string]any)["cache_hits"] == float64(0) {
			t.Errorf("connector_health after one proxied call: %v, want it counted", health)
		}
	})
}
