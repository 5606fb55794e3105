package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
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
