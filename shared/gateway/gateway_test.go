package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// harness is a gateway on an httptest server with every function in
// process, on an embedded table, as the local server runs it.
type harness struct {
	url   string
	table store.Table
	keys  *apikey.Keys
}

func newHarness(t *testing.T, configure func(*gateway.Options)) *harness {
	return newHarnessWith(t, lambdafn.Deps{}, configure)
}

// newHarnessWith is newHarness with the functions' deps starting from deps
// (their table, blobs and summariser the harness's own).
func newHarnessWith(t *testing.T, deps lambdafn.Deps, configure func(*gateway.Options)) *harness {
	t.Helper()
	tbl := storetest.OpenEmbedded(t)
	cat := catalog.Default()
	deps.Table, deps.Blobs, deps.Summarizer = tbl, storetest.OpenLocalFS(t), offline.Summarizer{}
	connectorsDeps(t, &deps)
	webSearchDeps(t, &deps)
	opts := gateway.Options{
		Catalog:           cat,
		Invoker:           stack(t, deps),
		Keys:              apikey.New(tbl, nil),
		Anonymous:         &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
		AllowLocalOrigins: true,
	}
	if configure != nil {
		configure(&opts)
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return &harness{url: srv.URL, table: tbl, keys: apikey.New(tbl, nil)}
}

// bearer is an http.RoundTripper that adds an Authorization header.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP client session on h, with key as bearer if set.
func (h *harness) connect(t *testing.T, key string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{}
	if key != "" {
		hc.Transport = bearer{key}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return res
}

func mustCall(t *testing.T, cs *mcp.ClientSession, tool string, args any) map[string]any {
	t.Helper()
	res := call(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("CallTool(%s) failed: %s", tool, text(res))
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rawResponse is what a raw POST got back.
type rawResponse struct {
	status   int
	header   http.Header
	body     string
	messages []map[string]any // JSON-RPC messages, from SSE events or a JSON body
}

func post(t *testing.T, url string, header map[string]string, body string) rawResponse {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) rawResponse {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					out.messages = append(out.messages, m)
				}
			}
		}
	} else {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			out.messages = append(out.messages, m)
		}
	}
	return out
}

func initialize(version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version)
}

func TestToolsListCarriesTitlesDescriptionsAndSchemas(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = tool
	}
	public := 0
	for _, want := range catalog.Default().Tools() {
		got, ok := listed[want.Name]
		if want.Visibility == catalog.Internal {
			if ok {
				t.Errorf("tools/list shows the internal tool %s", want.Name)
			}
			continue
		}
		public++
		if !ok {
			t.Errorf("tools/list lacks %s", want.Name)
			continue
		}
		if got.Title != want.Title || got.Description != want.Description {
			t.Errorf("%s listed as title %q, description %q", want.Name, got.Title, got.Description)
		}
		// The gateway lists the catalog's schemas (its snapshot's: package
		// catalog/toolschema checks that they are what the types infer).
		for _, s := range []struct {
			name string
			got  any
			want json.RawMessage
		}{{"input", got.InputSchema, want.InputSchema}, {"output", got.OutputSchema, want.OutputSchema}} {
			var wantSchema, gotSchema any
			json.Unmarshal(s.want, &wantSchema)
			b, _ := json.Marshal(s.got)
			json.Unmarshal(b, &gotSchema)
			if diff := cmp.Diff(wantSchema, gotSchema); diff != "" {
				t.Errorf("%s listed with another %s schema (-built +listed):\n%s", want.Name, s.name, diff)
			}
		}
	}
	if _, ok := listed[gateway.ToolSearchName]; !ok || len(listed) != public+1 {
		t.Errorf("tools/list has %d tools, the catalog %d public ones and tool_search", len(listed), public)
	}
}

func TestInternalToolsAreNeitherListedNorCallable(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) {
		internal := *mustTool(t, "memory_get_summary")
		internal.Name, internal.Visibility = "pipeline_only", catalog.Internal
		cat, err := catalog.New(append(catalog.Default().Tools(), &internal), catalog.Default().Resources(), nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog = cat
	})
	cs := h.connect(t, "", nil)
	res, _ := cs.ListTools(context.Background(), nil)
	for _, tool := range res.Tools {
		if tool.Name == "pipeline_only" {
			t.Error("tools/list shows an internal tool")
		}
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pipeline_only", Arguments: map[string]any{"conversation_id": "x"}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("calling an internal tool: error = %v, want unknown tool", err)
	}
}

func mustTool(t *testing.T, name string) *catalog.Tool {
	tool, ok := catalog.Default().Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}

func TestEverySupportedProtocolVersionWorks(t *testing.T) {
	h := newHarness(t, nil)
	meta := `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			header := map[string]string{"Mcp-Protocol-Version": version}
			callBody := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"v-` + version + `"}}}`
			if version == "2026-07-28" {
				// Sessionless: no initialize; the client describes itself in
				// each request's _meta and names the method in headers.
				disc := post(t, h.url+"/mcp", map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": "server/discover"},
					`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
				if disc.status != 200 || !strings.Contains(disc.body, `"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"`) {
					t.Fatalf("server/discover: %d %s", disc.status, disc.body)
				}
				header["Mcp-Method"], header["Mcp-Name"] = "tools/call", "memory_get_or_create"
				callBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"v-2026"},` + meta + `}}`
			} else {
				init := post(t, h.url+"/mcp", nil, initialize(version))
				if init.status != 200 || len(init.messages) != 1 {
					t.Fatalf("initialize: %d %s", init.status, init.body)
				}
				result, _ := init.messages[0]["result"].(map[string]any)
				if result["protocolVersion"] != version {
					t.Fatalf("initialize negotiated %v, want %s", result["protocolVersion"], version)
				}
			}
			resp := post(t, h.url+"/mcp", header, callBody)
			if resp.status != 200 || !strings.HasPrefix(resp.header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("tools/call: %d %s %s", resp.status, resp.header.Get("Content-Type"), resp.body)
			}
			if !strings.Contains(resp.body, `"created":true`) {
				t.Errorf("tools/call answered %s", resp.body)
			}
		})
	}
}

func TestMcpMethodAndNameHeadersMustMatchTheBody(t *testing.T) {
	h := newHarness(t, nil)
	meta := `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"hdr"},` + meta + `}}`
	for _, tc := range []struct {
		name, method, tool string
		wantStatus         int
		wantText           string
	}{
		{"Matching", "tools/call", "memory_get_or_create", 200, `"created":true`},
		{"WrongMethod", "tools/list", "memory_get_or_create", 400, "Mcp-Method header value 'tools/list' does not match"},
		{"WrongName", "tools/call", "memory_delete", 400, "Mcp-Name header value 'memory_delete' does not match"},
		{"MissingMethod", "", "memory_get_or_create", 400, "missing required Mcp-Method header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": tc.tool}
			if tc.method != "" {
				header["Mcp-Method"] = tc.method
			}
			resp := post(t, h.url+"/mcp", header, body)
			if resp.status != tc.wantStatus || !strings.Contains(resp.body, tc.wantText) {
				t.Errorf("got %d %s, want %d containing %q", resp.status, resp.body, tc.wantStatus, tc.wantText)
			}
		})
	}
	// A rejected request changed nothing.
	cs := h.connect(t, "", nil)
	if out := mustCall(t, cs, "memory_get_or_create", map[string]any{"conversation_id": "hdr"}); out["created"] != false {
		t.Errorf("hdr was created %v times by the matching request only; got created=%v", 1, out["created"])
	}
}

func TestHTTPGuards(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) {
		o.AllowedOrigins = []string{"https://app.example.com"}
		o.MaxBodyBytes = 4096
	})
	bigArgs := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_add_message","arguments":{"conversation_id":"c","role":"user","content":"` + strings.Repeat("x", 5000) + `"}}}`
	for _, tc := range []struct {
		name       string
		req        func() *http.Request
		wantStatus int
		wantText   string
	}{
		{"AForeignOriginIsForbidden", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/mcp", initialize("2025-11-25"))
			r.Header.Set("Origin", "https://evil.example")
			return r
		}, 403, `Origin \"https://evil.example\" is not allowed`},
		{"AForeignOriginIsForbiddenOnTheCompatEndpoint", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"tool-server/tools/list"}`)
			r.Header.Set("Origin", "https://evil.example")
			return r
		}, 403, "not allowed"},
		{"AnAllowedOriginPasses", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/mcp", initialize("2025-11-25"))
			r.Header.Set("Origin", "https://app.example.com")
			return r
		}, 200, `"protocolVersion":"2025-11-25"`},
		{"ALocalOriginPasses", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/mcp", initialize("2025-11-25"))
			r.Header.Set("Origin", "http://localhost:6274")
			return r
		}, 200, `"protocolVersion"`},
		{"ARebindingHostIsForbidden", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/mcp", initialize("2025-11-25"))
			r.Host = "evil.example"
			return r
		}, 403, ""},
		{"GETIs405", func() *http.Request { return rawReq(http.MethodGet, h.url+"/mcp", "") }, 405, "stateless"},
		{"DELETEIs405", func() *http.Request { return rawReq(http.MethodDelete, h.url+"/mcp", "") }, 405, "stateless"},
		{"ADeclaredLargeBodyIs413", func() *http.Request { return rawReq(http.MethodPost, h.url+"/mcp", bigArgs) }, 413, "more than the 4096 bytes this server accepts"},
		{"AChunkedLargeBodyIs413", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/mcp", "")
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(bigArgs)), -1
			return r
		}, 413, ""},
		{"ALargeCompatBodyIs413", func() *http.Request {
			r := rawReq(http.MethodPost, h.url+"/jsonrpc", "")
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(bigArgs)), -1
			return r
		}, 413, "more than the 4096 bytes this server accepts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := do(t, tc.req())
			if resp.status != tc.wantStatus || !strings.Contains(resp.body, tc.wantText) {
				t.Errorf("got %d %q, want %d containing %q", resp.status, resp.body, tc.wantStatus, tc.wantText)
			}
		})
	}
	// The oversized message was never stored.
	cs := h.connect(t, "", nil)
	if res := call(t, cs, "memory_get_context", map[string]any{"conversation_id": "c"}); !res.IsError {
		t.Errorf("conversation c exists after only rejected requests: %s", text(res))
	}
}

func rawReq(method, url, body string) *http.Request {
	r, _ := http.NewRequest(method, url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	return r
}

func TestMemoryToolsWorkThroughTheGateway(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	conv := mustCall(t, cs, "memory_get_or_create", map[string]any{})
	id := conv["conversation_id"].(string)
	for i := 1; i <= 12; i++ {
		mustCall(t, cs, "memory_add_message", map[string]any{"conversation_id": id, "role": "user", "content": fmt.Sprintf("Message %d about brushing.", i)})
	}
	ctxOut := mustCall(t, cs, "memory_get_context", map[string]any{"conversation_id": id})
	// The summary covers 1..5: the context holds it and 6..12.
	if msgs := ctxOut["messages"].([]any); len(msgs) != 7 || ctxOut["summary"] == "" || ctxOut["omitted"] != 0.0 {
		t.Errorf("memory_get_context = %d messages, summary %q, omitted %v; want 7, a summary and 0", len(msgs), ctxOut["summary"], ctxOut["omitted"])
	}
	all := mustCall(t, cs, "memory_get_all_messages", map[string]any{"conversation_id": id})
	if msgs := all["messages"].([]any); len(msgs) != 12 {
		t.Errorf("memory_get_all_messages = %d messages, want 12", len(msgs))
	}
	bad := call(t, cs, "memory_add_message", map[string]any{"conversation_id": id, "role": "robot", "content": "x"})
	if !bad.IsError || !strings.Contains(text(bad), "role: must be one of: user, assistant, system") {
		t.Errorf("a bad role answered %q (isError %v), want a tool error naming role", text(bad), bad.IsError)
	}
	missing := call(t, cs, "memory_get_context", map[string]any{"conversation_id": "nope"})
	if !missing.IsError || !strings.Contains(text(missing), `conversation "nope" does not exist`) {
		t.Errorf("a missing conversation answered %q", text(missing))
	}
	// Resources: listed, readable, completable.
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "memory://conversation/"+id {
		t.Fatalf("resources/list = %+v, %v", res, err)
	}
	read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory://conversation/" + id})
	if err != nil || !strings.Contains(read.Contents[0].Text, "Message 12 about brushing.") {
		t.Fatalf("resources/read = %+v, %v", read, err)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory://conversation/nope"}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("reading a missing conversation: error = %v, want resource not found", err)
	}
	templates, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != catalog.MemoryResourceTemplate {
		t.Errorf("resources/templates/list = %+v, %v", templates, err)
	}
	comp, err := cs.Complete(context.Background(), &mcp.CompleteParams{
		Ref: &mcp.CompleteReference{Type: "ref/resource", URI: catalog.MemoryResourceTemplate}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: id[:6]},
	})
	if err != nil || !cmp.Equal(comp.Completion.Values, []string{id}) {
		t.Errorf("completion = %+v, %v; want [%s]", comp, err, id)
	}
}

func TestEveryToolResultMatchesItsOutputSchema(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	mustCall(t, cs, "memory_get_or_create", map[string]any{"conversation_id": "chat_demo"})
	mustCall(t, cs, "vector_store_create", map[string]any{"alias": "manuals"}) // the vector examples' store
	for _, tool := range catalog.Default().Tools() {
		if tool.Visibility == catalog.Internal {
			continue // hosts cannot call it; the deploy tests replay its example through its handler
		}
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Name == "connector_verify" || tool.Name == "connector_sync" {
				t.Skip("needs a reachable upstream: shared/launch's connector test calls it against go-sdk servers")
			}
			if tool.Family == catalog.ConnectorFamily {
				// The examples' connector, again after connector_delete's example removed it.
				call(t, cs, "connector_create", map[string]any{"name": "github", "base_url": "https://" + exampleConnectorHost + "/mcp", "transport": "streamable_http"})
			}
			var args map[string]any
			json.Unmarshal(tool.Example, &args)
			res := call(t, cs, tool.Name, args)
			if res.IsError {
				t.Fatalf("example call failed: %s", text(res))
			}
			var schema jsonschema.Schema
			if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			rs, err := schema.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			var out any
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &out)
			if err := rs.Validate(out); err != nil {
				t.Errorf("structured content %s does not match the output schema: %v", b, err)
			}
			if res.Meta[invoke.TraceMetaKey] == nil {
				t.Error("result carries no trace id in _meta")
			}
		})
	}
}

func TestAFailingFunctionBecomesAToolErrorNotACrash(t *testing.T) {
	lambdaAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		fmt.Fprint(w, `{"errorMessage":"RequestId: abc Error: Runtime exited with error: signal: killed","errorType":"Runtime.ExitError"}`)
	}))
	t.Cleanup(lambdaAPI.Close)
	h := newHarness(t, func(o *gateway.Options) { o.Invoker = lambdaInvoker(lambdaAPI.URL) })
	cs := h.connect(t, "", nil)
	res := call(t, cs, "memory_get_or_create", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "Runtime exited with error: signal: killed") || !strings.Contains(text(res), "memory_get_or_create could not run") {
		t.Errorf("a crashed function answered %q (isError %v), want a tool error saying so", text(res), res.IsError)
	}
	// The gateway is still serving.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("after a function crash tools/list fails: %v", err)
	}
}

// A function's progress and logs travel back in its response; the gateway
// relays them before the result.
func TestProgressAndLogsFromAFunctionReachTheClient(t *testing.T) {
	type empty struct{}
	noisy := &catalog.Tool{
		Name: "noisy", Title: "Noisy", Description: "Reports progress and logs.", Family: "test", Function: "test/noisy",
		InputSchema: mustSchema[empty](t), OutputSchema: mustSchema[empty](t), Visibility: catalog.Public,
		Limits: catalog.Limits{Timeout: time.Second, MemoryMB: 128},
	}
	h := newHarness(t, func(o *gateway.Options) {
		cat, err := catalog.New(append(catalog.Default().Tools(), noisy), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog = cat
		o.Invoker = invoke.NewLocal(map[string]lambdaHandler{"test/noisy": lambdafn.Tool(noisy, lambdafn.Deps{}, func(ctx context.Context, _ tenant.Caller, _ empty) (empty, error) {
			for i := 0; i <= 2; i++ {
				lambdafn.ReportProgress(ctx, float64(50*i), 100, fmt.Sprintf("step %d", i))
				lambdafn.LogToClient(ctx, "info", "noisy", fmt.Sprintf("log %d", i))
			}
			return empty{}, nil
		})}, nil)
	})
	var (
		mu       sync.Mutex
		progress []float64
		logs     []string
	)
	cs := h.connect(t, "", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params.Progress)
		},
		//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprint(r.Params.Data))
		},
	})
	// 2026-07-28 asks for logs per request, in _meta, rather than with logging/setLevel.
	//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
	params := &mcp.CallToolParams{Name: "noisy", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	// The client dispatches notifications on goroutines of their own, so the
	// last may land just after the result.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		done := len(progress) == 3 && len(logs) == 3
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]float64{0, 50, 100}, progress); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"log 0", "log 1", "log 2"}, logs); diff != "" {
		t.Errorf("logs mismatch (-want +got):\n%s", diff)
	}
}

// stack runs every function in process over deps, as the local server does.
func stack(t testing.TB, deps lambdafn.Deps) *local.Stack {
	t.Helper()
	s, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustSchema[T any](t *testing.T) json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStdioServesTheSameToolsAsTheAnonymousCaller(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	cat := catalog.Default()
	gw, err := gateway.New(gateway.Options{
		Catalog:   cat,
		Invoker:   stack(t, lambdafn.Deps{Table: tbl}),
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := gw.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	out := mustCall(t, cs, "memory_get_or_create", map[string]any{"conversation_id": "desk"})
	if out["created"] != true {
		t.Fatalf("memory_get_or_create over stdio = %v", out)
	}
	if _, err := tbl.Get(ctx, tenant.Key(tenant.Local)+"conv#desk", "meta"); err != nil {
		t.Errorf("the conversation is not stored under tenant local: %v", err)
	}
}

// TestConcurrentPOSTStreams checks what the conformance scenario
// server-sse-multiple-streams would, had it a session to use: several POSTs in
// flight at once each get their own SSE stream carrying their own answer.
func TestConcurrentPOSTStreams(t *testing.T) {
	h := newHarness(t, nil)
	const n = 12
	var wg sync.WaitGroup
	results := make([]rawResponse, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 1000+i)
			if i%2 == 1 {
				body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"stream-%d"}}}`, 1000+i, i)
			}
			req, _ := http.NewRequest(http.MethodPost, h.url+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			results[i] = do(t, req)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || len(r.messages) != 1 {
			t.Errorf("request %d: %d %s with %d messages", i, r.status, r.header.Get("Content-Type"), len(r.messages))
			continue
		}
		if id := r.messages[0]["id"]; id != float64(1000+i) || r.messages[0]["result"] == nil {
			t.Errorf("request %d got the answer to %v: %s", i, id, r.body)
		}
	}
}

// In Lambda the gateway runs under a deadline (its timeout, within API
// Gateway's 30 s) shorter than a long tool's; a function still running when
// it nears gets an answer that says so, not a gateway cut off mid-call.
func TestACallThatOutlastsTheGatewaysDeadlineIsAnsweredInTime(t *testing.T) {
	release := make(chan struct{})
	lambdaAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a function that outlives its caller
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(lambdaAPI.Close)
	t.Cleanup(func() { close(release) })
	gw, err := gateway.New(gateway.Options{
		Catalog: catalog.Default(), Invoker: lambdaInvoker(lambdaAPI.URL),
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	handler := gw.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second) // what the Lambda runtime gives the gateway
		defer cancel()
		handler.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	cs := (&harness{url: srv.URL}).connect(t, "", nil)

	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"memory_get_or_create", map[string]any{}, []string{"memory_get_or_create is still running", "get_audit_trace", "Check them before calling it again"}},
		{"memory_get_context", map[string]any{"conversation_id": "c1"}, []string{"memory_get_context took longer than this endpoint can wait", "Retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			if !res.IsError {
				t.Fatalf("a call the gateway could not wait for succeeded: %s", text(res))
			}
			for _, w := range tt.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("answer %q does not say %q", text(res), w)
				}
			}
			if res.Meta[invoke.TraceMetaKey] == nil {
				t.Error("the answer carries no trace id")
			}
		})
	}
}

// exampleConnectorHost is the host of the catalog's connector examples, which
// the harness's guard allows although nothing answers there.
const exampleConnectorHost = "mcp.example.com"

// connectorsDeps gives d what the connector tools open: a local key file
// sealer and an outbound guard that allows the examples' host.
func connectorsDeps(t testing.TB, d *lambdafn.Deps) {
	t.Helper()
	sealer, err := localkey.LoadKeyFile(filepath.Join(t.TempDir(), "connector-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	guard := &netguard.Policy{AllowedHosts: []string{exampleConnectorHost}}
	d.Sealer, d.CheckURL, d.HTTPClient = sealer, guard.CheckURL, guard.Client(0)
}
