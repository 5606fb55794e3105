package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// profileHarness is a gateway (web_search searching a stand-in DuckDuckGo)
// with a connector "up" whose upstream offers a tool "look", a resource
// note://forecast and a prompt "brief", proxied as up__look,
// connector://up/note://forecast and up__brief; every function runs in
// process, the settings family's too.
type profileHarness struct {
	*harness
	stack    *local.Stack
	listings *listingCounter
}

// listingCounter is an invoker that counts the connectors' listings and the
// threads' settings read through it, and fails the read of thread
// chat_down's settings, as an unreachable table would.
type listingCounter struct {
	invoke.Invoker
	mu          sync.Mutex
	n, settings int
}

func (c *listingCounter) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	c.mu.Lock()
	switch req.Tool {
	case catalog.ConnectorListingTool:
		c.n++
	case "settings_get":
		c.settings++
	}
	c.mu.Unlock()
	if req.Tool == "settings_get" && strings.Contains(string(req.Arguments), `"chat_down"`) {
		return nil, errors.New("the table is unreachable")
	}
	return c.Invoker.Invoke(ctx, function, req)
}

func (c *listingCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *listingCounter) settingsReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settings
}

func newProfileHarness(t *testing.T) *profileHarness {
	t.Helper()
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "look", Description: "Looks up the weather forecast for a city.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil, nil
		})
	up.AddResource(&mcp.Resource{URI: upstreamResource, Name: "forecast", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "rain by noon"}}}, nil
		})
	up.AddPrompt(&mcp.Prompt{Name: "brief", Description: "Asks for a weather brief."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Brief me on the weather."}}}}, nil
		})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(func() { upstream.CloseClientConnections(); upstream.Close() })

	tbl := storetest.OpenEmbedded(t)
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}
	connectorsDeps(t, &deps)
	webSearchDeps(t, &deps)
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
	deps.CheckURL, deps.HTTPClient = guard.CheckURL, guard.Client(0)
	st, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	listings := &listingCounter{Invoker: st}
	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: listings, Keys: apikey.New(tbl, nil), KeyCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	h := &profileHarness{harness: &harness{url: srv.URL, table: tbl, keys: apikey.New(tbl, nil)}, stack: st, listings: listings}

	admin := h.connect(t, h.key(t, profile.Profile{}), nil)
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"connector_create", map[string]any{"name": "up", "base_url": upstream.URL, "transport": "streamable_http"}},
		{"connector_sync", map[string]any{"name": "up"}},
		{"approval_policy_set", map[string]any{"connector": "up", "tool": "look", "policy": "ALWAYS_ALLOW"}},
	} {
		if res := call(t, admin, step.tool, step.args); res.IsError {
			t.Fatalf("%s: %s", step.tool, text(res))
		}
	}
	return h
}

// key returns a new key of tenant acme with profile p.
func (h *profileHarness) key(t *testing.T, p profile.Profile) string {
	t.Helper()
	secret, key, err := h.keys.Create(context.Background(), "acme", "alice", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.keys.SetProfile(context.Background(), key.Hash, p); err != nil {
		t.Fatal(err)
	}
	return secret
}

// setThread sets the tools a thread of tenant acme enables, with
// settings_update called in process (not through the gateway).
func (h *profileHarness) setThread(t *testing.T, thread string, groups ...string) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"thread_id": thread, "tools_enabled": append([]string{}, groups...)})
	tl, _ := catalog.Default().Tool("settings_update")
	resp, err := h.stack.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: tl.Name, Arguments: args,
		Caller: tenant.Caller{Tenant: "acme", Principal: "alice"}})
	if err != nil || resp.Error != nil {
		t.Fatalf("settings_update %s: %v %+v", thread, err, resp.Error)
	}
}

// threadMeta is the _meta of a request in thread, or nil for none.
func threadMeta(thread string) mcp.Meta {
	if thread == "" {
		return nil
	}
	return mcp.Meta{gateway.ThreadMetaKey: thread}
}

// listed returns the names tools/list gives cs in thread.
func listed(t *testing.T, cs *mcp.ClientSession, thread string) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: threadMeta(thread)})
	if err != nil {
		t.Fatal(err)
	}
	if res.NextCursor != "" {
		t.Fatal("tools/list has a second page")
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// probes are tools of every group and of none, with arguments they accept.
var probes = []struct {
	name string
	args map[string]any
}{
	{"optimizer_vs-storage", map[string]any{}},
	{"optimizer_vs-retriever", map[string]any{"question": "anything"}},
	{"up__look", map[string]any{}},
	{"web_search", map[string]any{"query": "switchboard"}},
	{"memory_get_or_create", map[string]any{"conversation_id": "chat_profiles"}},
	{"memory_delete", map[string]any{"conversation_id": "chat_profiles_gone"}},
	{"tool_search", map[string]any{"query": "weather"}},
}

func TestAHostSeesAndCallsOnlyWhatItsProfileEnables(t *testing.T) {
	h := newProfileHarness(t)
	vs, conn, web := catalog.GroupVectorSearch, catalog.GroupConnectors, catalog.GroupWebSearch
	h.setThread(t, "chat_none")
	h.setThread(t, "chat_vs", vs)
	h.setThread(t, "chat_conn", conn)
	h.setThread(t, "chat_web", web)
	h.setThread(t, "chat_conn_vs", conn, vs)
	h.setThread(t, "chat_all", vs, conn, web)
	all := []string{"optimizer_vs-storage", "optimizer_vs-retriever", "up__look", "web_search", "memory_get_or_create", "memory_delete", "tool_search"}
	for _, tc := range []struct {
		name    string
		key     profile.Profile
		thread  string
		enabled []string // of the probes
		refuser string   // what a refusal names: "API key" or the thread
	}{
		{"a key without a profile, in no thread, may use every tool", profile.Profile{}, "", all, ""},
		{"a key enabling Vector Search alone hides the connectors' and web search tools", profile.Profile{Groups: []string{vs}}, "",
			[]string{"optimizer_vs-storage", "optimizer_vs-retriever", "memory_get_or_create", "memory_delete", "tool_search"}, "API key"},
		{"a key enabling no group keeps only the ungrouped tools", profile.Profile{Groups: []string{}}, "",
			[]string{"memory_get_or_create", "memory_delete", "tool_search"}, "API key"},
		{"a key's allow list admits only what it names", profile.Profile{Allow: []string{"memory_*", "tool_search"}}, "",
			[]string{"memory_get_or_create", "memory_delete", "tool_search"}, "API key"},
		{"a key's deny list takes tools and proxied patterns away", profile.Profile{Deny: []string{"memory_delete", "up__*"}}, "",
			[]string{"optimizer_vs-storage", "optimizer_vs-retriever", "web_search", "memory_get_or_create", "tool_search"}, "API key"},
		{"a thread enabling nothing leaves the ungrouped tools", profile.Profile{}, "chat_none",
			[]string{"memory_get_or_create", "memory_delete", "tool_search"}, "chat_none"},
		{"a thread enabling Vector Search shows the retriever and the store list", profile.Profile{}, "chat_vs",
			[]string{"optimizer_vs-storage", "optimizer_vs-retriever", "memory_get_or_create", "memory_delete", "tool_search"}, "chat_vs"},
		{"a thread enabling Connectors shows the proxied tools", profile.Profile{}, "chat_conn",
			[]string{"up__look", "memory_get_or_create", "memory_delete", "tool_search"}, "chat_conn"},
		{"a thread enabling Web Search shows web search", profile.Profile{}, "chat_web",
			[]string{"web_search", "memory_get_or_create", "memory_delete", "tool_search"}, "chat_web"},
		{"a thread enabling every group shows every tool", profile.Profile{}, "chat_all", all, ""},
		{"a thread cannot enable what the key does not", profile.Profile{Groups: []string{vs}}, "chat_conn_vs",
			[]string{"optimizer_vs-storage", "optimizer_vs-retriever", "memory_get_or_create", "memory_delete", "tool_search"}, "API key"},
		{"a key's deny list holds in a thread enabling everything", profile.Profile{Deny: []string{"web_search"}}, "chat_all",
			[]string{"optimizer_vs-storage", "optimizer_vs-retriever", "up__look", "memory_get_or_create", "memory_delete", "tool_search"}, "API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.connect(t, h.key(t, tc.key), nil)
			names := listed(t, cs, tc.thread)
			for _, internal := range []string{"optimizer_vs-grade", "optimizer_vs-rephrase", "optimizer_vs-search-group", catalog.ConnectorCallTool} {
				if slices.Contains(names, internal) {
					t.Errorf("tools/list shows the internal tool %s", internal)
				}
			}
			for _, p := range probes {
				want := slices.Contains(tc.enabled, p.name)
				if got := slices.Contains(names, p.name); got != want {
					t.Errorf("tools/list shows %s: %v, want %v", p.name, got, want)
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: p.name, Arguments: p.args, Meta: threadMeta(tc.thread)})
				switch {
				case want && err != nil: // it ran: what it answered is the tool's
					t.Errorf("calling %s: %v, want it to run", p.name, err)
				case !want && (err == nil || !strings.Contains(err.Error(), p.name) || !strings.Contains(err.Error(), tc.refuser)):
					t.Errorf("calling %s: %v, %v; want a refusal naming it and %s", p.name, res, err, tc.refuser)
				}
			}
		})
	}
}

// A list whose profile disables Connectors costs no listing of them.
func TestAListWithoutConnectorsDoesNotListThem(t *testing.T) {
	h := newProfileHarness(t)
	h.setThread(t, "chat_vs", catalog.GroupVectorSearch)
	for _, tc := range []struct {
		name     string
		key      profile.Profile
		thread   string
		listings int
	}{
		{"a key enabling Connectors", profile.Profile{}, "", 1},
		{"a key not enabling them", profile.Profile{Groups: []string{catalog.GroupVectorSearch}}, "", 0},
		{"a thread not enabling them", profile.Profile{}, "chat_vs", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.connect(t, h.key(t, tc.key), nil)
			before := h.listings.count()
			listed(t, cs, tc.thread)
			if got := h.listings.count() - before; got != tc.listings {
				t.Errorf("tools/list listed the connectors %d times, want %d", got, tc.listings)
			}
		})
	}
}

func TestInternalToolsAreNeverCallableWhateverTheProfile(t *testing.T) {
	h := newProfileHarness(t)
	cs := h.connect(t, h.key(t, profile.Profile{Allow: []string{"optimizer_vs-*"}}), nil)
	for _, name := range []string{"optimizer_vs-grade", "optimizer_vs-rephrase", catalog.ConnectorCallTool} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"question": "q"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling %s: %v, want unknown tool", name, err)
		}
	}
}

func TestAThreadsSettingsAreReadOnceAndAnUpdateThroughTheGatewayAppliesAtOnce(t *testing.T) {
	h := newProfileHarness(t)
	h.setThread(t, "chat_1", catalog.GroupVectorSearch)
	cs := h.connect(t, h.key(t, profile.Profile{}), nil)
	for range 3 {
		if names := listed(t, cs, "chat_1"); slices.Contains(names, "up__look") || !slices.Contains(names, "optimizer_vs-storage") {
			t.Fatalf("thread chat_1 lists %v", names)
		}
	}
	if reads := h.listings.settingsReads(); reads != 1 {
		t.Errorf("three lists read the thread's settings %d times, want once", reads)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "settings_update",
		Arguments: map[string]any{"thread_id": "chat_1", "tools_enabled": []string{catalog.GroupConnectors}}})
	if err != nil || res.IsError {
		t.Fatalf("settings_update: %v %v", res, err)
	}
	if names := listed(t, cs, "chat_1"); !slices.Contains(names, "up__look") || slices.Contains(names, "optimizer_vs-storage") {
		t.Errorf("after settings_update, thread chat_1 lists %v; want the connectors' tools and no vector search", names)
	}
}

// A thread whose settings cannot be read fails the request, never widens it.
func TestAThreadWhoseSettingsCannotBeReadIsRefused(t *testing.T) {
	h := newProfileHarness(t)
	cs := h.connect(t, h.key(t, profile.Profile{}), nil)
	for _, tc := range []struct {
		name   string
		thread any
		want   string
	}{
		{"a thread id that is not a string", 7, `must be a thread id`},
		{"a thread id settings_get refuses", "chat invalid", `_meta["switchboard.dev/thread_id"]: `},
		{"settings that cannot be read", "chat_down", `the settings of thread "chat_down", which decide its tools, could not be read`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := mcp.Meta{gateway.ThreadMetaKey: tc.thread}
			_, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: meta})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tools/list: %v, want an error containing %s", err, tc.want)
			}
			_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_get_or_create", Arguments: map[string]any{}, Meta: meta})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tools/call: %v, want an error containing %s", err, tc.want)
			}
		})
	}
}

func TestTheCompatibilityEndpointHoldsAKeyToItsProfile(t *testing.T) {
	h := newProfileHarness(t)
	key := h.key(t, profile.Profile{Deny: []string{"memory_get_summary", "memory_add_message"}})
	auth := map[string]string{"Authorization": "Bearer " + key}
	for _, tc := range []struct{ name, body, want string }{
		{"tools/list leaves the denied tools out", `{"jsonrpc":"2.0","method":"tool-server/tools/list","params":{},"id":1}`, `"name":"memory_get_context"`},
		{"tools/call of a denied tool is refused", `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"memory_get_summary","arguments":{"conversation_id":"c"}},"id":2}`, `not enabled for this API key`},
		{"a memory method of a denied tool is refused", `{"jsonrpc":"2.0","method":"memory-server/memory/add_message","params":{"conversation_id":"c","role":"user","content":"hi"},"id":3}`, `not enabled for this API key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, h.url+"/jsonrpc", auth, tc.body)
			if !strings.Contains(resp.body, tc.want) || strings.Contains(resp.body, `"name":"memory_get_summary"`) {
				t.Errorf("got %d %s, want it to contain %s and never list memory_get_summary", resp.status, resp.body, tc.want)
			}
		})
	}
}

// found returns the names tool_search gives cs for query in thread.
func found(t *testing.T, cs *mcp.ClientSession, query, thread string) []string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: gateway.ToolSearchName,
		Arguments: map[string]any{"query": query, "k": 5}, Meta: threadMeta(thread)})
	if err != nil || res.IsError {
		t.Fatalf("tool_search %q: %v %v", query, res, err)
	}
	var out struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	remarshal(t, res.StructuredContent, &out)
	var names []string
	for _, tool := range out.Tools {
		if tool.InputSchema["type"] != "object" {
			t.Errorf("tool_search gives %s without its input schema: %v", tool.Name, tool.InputSchema)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestToolSearchFindsTheToolThatDoesIt(t *testing.T) {
	h := newProfileHarness(t)
	cs := h.connect(t, h.key(t, profile.Profile{}), nil)
	for _, tc := range []struct{ query, want string }{
		{"add a message to a conversation", "memory_add_message"},
		{"which vector stores can I search", "optimizer_vs-storage"},
		{"register an external MCP server", "connector_create"},
		{"weather forecast for a city", "up__look"},
		{"search the web", "web_search"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if names := found(t, cs, tc.query, ""); len(names) == 0 || names[0] != tc.want {
				t.Errorf("tool_search %q = %v, want %s first", tc.query, names, tc.want)
			}
		})
	}
}

func TestToolSearchNeverRevealsAToolTheCallerCannotCall(t *testing.T) {
	h := newProfileHarness(t)
	h.setThread(t, "chat_none")
	for _, tc := range []struct {
		name   string
		key    profile.Profile
		thread string
		query  string
		hidden string
	}{
		{"a denied tool", profile.Profile{Deny: []string{"memory_add_message"}}, "", "add a message to a conversation", "memory_add_message"},
		{"a connector's tool when the key disables Connectors", profile.Profile{Groups: []string{catalog.GroupVectorSearch}}, "", "weather forecast for a city", "up__look"},
		{"a connector's tool when the thread disables Connectors", profile.Profile{}, "chat_none", "weather forecast for a city", "up__look"},
		{"vector search when the thread disables it", profile.Profile{}, "chat_none", "which vector stores can I search", "optimizer_vs-storage"},
		{"web search when the thread disables it", profile.Profile{}, "chat_none", "search the web", "web_search"},
		{"an internal step", profile.Profile{}, "", "grade retrieved documents relevance", "optimizer_vs-grade"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := h.connect(t, h.key(t, tc.key), nil)
			if names := found(t, cs, tc.query, tc.thread); slices.Contains(names, tc.hidden) || slices.Contains(names, gateway.ToolSearchName) {
				t.Errorf("tool_search %q = %v, which holds %s or itself", tc.query, names, tc.hidden)
			}
		})
	}
}

// remarshal decodes v, as the client decoded it, into out.
func remarshal(t *testing.T, v any, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// A token's group scopes (switchboard:group:<group>) enable those groups
// alone, as a key's profile does: on the fast path and the go-sdk's alike.
func TestATokensGroupScopesEnableOnlyThoseGroups(t *testing.T) {
	is := newIssuer(t)
	url, _ := oauthGateway(t, is)
	resource := url + "/mcp"
	for _, tc := range []struct {
		scope    string
		storages bool // whether optimizer_vs-storage is enabled
	}{
		{oauth.ScopeWrite, true},
		{oauth.ScopeWrite + " " + profile.GroupScope(catalog.GroupVectorSearch), true},
		{oauth.ScopeWrite + " " + profile.GroupScope(catalog.GroupConnectors), false},
	} {
		t.Run(tc.scope, func(t *testing.T) {
			hc := &http.Client{Transport: bearer{is.mint(t, "ES256", is.claims(resource, tc.scope))}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: resource, HTTPClient: hc}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			if names := listed(t, cs, ""); slices.Contains(names, "optimizer_vs-storage") != tc.storages || !slices.Contains(names, "memory_add_message") {
				t.Errorf("tools/list = %v; want optimizer_vs-storage %v, memory_add_message listed", names, tc.storages)
			}
			_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "optimizer_vs-storage", Arguments: map[string]any{}})
			if (err == nil) != tc.storages {
				t.Errorf("calling optimizer_vs-storage: %v; want it enabled %v", err, tc.storages)
			}
		})
	}
}

// The real wiring: the default catalog's settings_get and settings_update
// (package settings, its functions in process) decide a thread's tools.
func TestTheSettingsFamilyDecidesAThreadsTools(t *testing.T) {
	h := newHarness(t, nil)
	key, _, err := h.keys.Create(context.Background(), "acme", "alice", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	cs := h.connect(t, key, nil)
	set := func(groups ...string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "settings_update",
			Arguments: map[string]any{"thread_id": "chat_real", "tools_enabled": append([]string{}, groups...)}})
		if err != nil || res.IsError {
			t.Fatalf("settings_update: %v %v", res, err)
		}
	}
	set(catalog.GroupConnectors)
	if names := listed(t, cs, "chat_real"); slices.Contains(names, "optimizer_vs-storage") || !slices.Contains(names, "memory_add_message") {
		t.Errorf("thread chat_real without Vector Search lists %v", names)
	}
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "optimizer_vs-storage", Arguments: map[string]any{}, Meta: threadMeta("chat_real")})
	if err == nil || !strings.Contains(err.Error(), `thread "chat_real" does not enable`) {
		t.Errorf("calling optimizer_vs-storage in chat_real: %v, want a refusal naming the thread", err)
	}
	set(catalog.GroupVectorSearch)
	if names := listed(t, cs, "chat_real"); !slices.Contains(names, "optimizer_vs-storage") {
		t.Errorf("after enabling Vector Search, thread chat_real lists %v", names)
	}
	if names := listed(t, cs, "chat_never_set"); !slices.Contains(names, "optimizer_vs-storage") {
		t.Errorf("a thread never configured (the defaults) lists %v", names)
	}
}
