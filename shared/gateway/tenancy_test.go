package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
)

func newKey(t *testing.T, h *harness, tenantID, principal string) string {
	t.Helper()
	key, _, err := h.keys.Create(context.Background(), tenantID, principal, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) { o.Anonymous = nil })
	key := newKey(t, h, "acme", "alice")
	// A key created two minutes ago that expired a minute ago.
	past := apikey.New(h.table, &apikey.Options{Now: func() time.Time { return time.Now().Add(-2 * time.Minute) }})
	expired, _, err := past.Create(context.Background(), "acme", "old", nil, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		auth       string
		wantStatus int
		wantText   string
	}{
		{"NoKeyIsUnauthorized", "", 401, "no bearer token"},
		{"AnUnknownKeyIsUnauthorized", "Bearer sb_notakey", 401, "unknown, revoked or expired API key"},
		{"AnExpiredKeyIsUnauthorized", "Bearer " + expired, 401, "unknown, revoked or expired"},
		{"AnotherSchemeIsUnauthorized", "Basic " + key, 401, "no bearer token"},
		{"AValidKeyIsServed", "Bearer " + key, 200, `"protocolVersion"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{}
			if tc.auth != "" {
				header["Authorization"] = tc.auth
			}
			resp := post(t, h.url+"/mcp", header, initialize("2025-11-25"))
			if resp.status != tc.wantStatus || !strings.Contains(resp.body, tc.wantText) {
				t.Errorf("got %d %q, want %d containing %q", resp.status, resp.body, tc.wantStatus, tc.wantText)
			}
			if tc.wantStatus == 401 && !strings.Contains(resp.header.Get("WWW-Authenticate"), `resource_metadata="`+h.url+`/.well-known/oauth-protected-resource"`) {
				t.Errorf("401 without a resource_metadata challenge: %q", resp.header.Get("WWW-Authenticate"))
			}
		})
	}
	meta := do(t, mustRequest(t, http.MethodGet, h.url+"/.well-known/oauth-protected-resource"))
	if meta.status != 200 || !strings.Contains(meta.body, `"resource":"`+h.url+`/mcp"`) {
		t.Errorf("protected resource metadata: %d %s", meta.status, meta.body)
	}
	// A server without keys says what to do with a key it cannot check.
	noKeys := newHarness(t, func(o *gateway.Options) { o.Keys = nil })
	resp := post(t, noKeys.url+"/mcp", map[string]string{"Authorization": "Bearer " + key}, initialize("2025-11-25"))
	if resp.status != 401 || !strings.Contains(resp.body, "no API keys configured") {
		t.Errorf("a key sent to a keyless server: %d %s", resp.status, resp.body)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTenantsNeverReachEachOther has tenant A build a conversation and then
// lets tenant B try every way in: each tool, the resources, completion and the
// compatibility endpoint. B must learn nothing and change nothing.
func TestTenantsNeverReachEachOther(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) { o.Anonymous = nil })
	keyA, keyB := newKey(t, h, "tenant-a", "alice"), newKey(t, h, "tenant-b", "bob")
	a, b := h.connect(t, keyA, nil), h.connect(t, keyB, nil)
	const id = "secret-plans"
	mustCall(t, a, "memory_get_or_create", map[string]any{"conversation_id": id})
	for i := 1; i <= 12; i++ {
		mustCall(t, a, "memory_add_message", map[string]any{"conversation_id": id, "role": "user", "content": fmt.Sprintf("Secret %d.", i)})
	}
	mustCall(t, a, "memory_set_summary", map[string]any{"conversation_id": id, "summary": "A's private summary."})
	before := mustCall(t, a, "memory_get_all_messages", map[string]any{"conversation_id": id})
	addTrace := call(t, a, "memory_get_summary", map[string]any{"conversation_id": id}).Meta["switchboard.dev/trace_id"].(string)

	idArgs := map[string]any{"conversation_id": id}
	for _, tool := range catalog.Default().Tools() {
		if tool.Family != catalog.MemoryFamily || tool.Name == "memory_get_or_create" {
			continue
		}
		t.Run("Tool/"+tool.Name, func(t *testing.T) {
			args := map[string]any{"conversation_id": id}
			switch tool.Name {
			case "memory_add_message":
				args["role"], args["content"] = "user", "B was here"
			case "memory_set_summary":
				args["summary"] = "B was here"
			}
			res := call(t, b, tool.Name, args)
			if !res.IsError || !strings.Contains(text(res), "does not exist") {
				t.Errorf("tenant B's %s on A's conversation answered %q (isError %v), want not found", tool.Name, text(res), res.IsError)
			}
			if strings.Contains(text(res), "Secret") {
				t.Errorf("tenant B saw A's messages: %s", text(res))
			}
		})
	}
	t.Run("ResourcesList", func(t *testing.T) {
		res, err := b.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Resources) != 0 {
			t.Errorf("tenant B lists %v", res.Resources)
		}
	})
	t.Run("ResourcesRead", func(t *testing.T) {
		if _, err := b.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory://conversation/" + id}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
			t.Errorf("tenant B reading A's conversation: error = %v", err)
		}
	})
	t.Run("Completion", func(t *testing.T) {
		comp, err := b.Complete(context.Background(), &mcp.CompleteParams{
			Ref: &mcp.CompleteReference{Type: "ref/resource", URI: catalog.MemoryResourceTemplate}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "sec"},
		})
		if err != nil || len(comp.Completion.Values) != 0 {
			t.Errorf("tenant B's completion = %+v, %v; want nothing", comp, err)
		}
	})
	t.Run("AuditTrace", func(t *testing.T) {
		out := mustCall(t, b, "get_audit_trace", map[string]any{"trace_id": addTrace})
		if events := out["events"].([]any); len(events) != 0 {
			t.Errorf("tenant B reads %d events of A's trace", len(events))
		}
	})
	t.Run("CompatEndpoint", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_context","params":{"conversation_id":"` + id + `"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/add_message","params":{"conversation_id":"` + id + `","role":"user","content":"B"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/clear","params":{"conversation_id":"` + id + `"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/delete","params":{"conversation_id":"` + id + `"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"memory-server/resources/read","params":{"uri":"memory://conversation/` + id + `"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tool-server/tools/call","params":{"name":"memory_get_all_messages","arguments":{"conversation_id":"` + id + `"}}}`,
		} {
			resp := post(t, h.url+"/jsonrpc", map[string]string{"Authorization": "Bearer " + keyB}, body)
			if !strings.Contains(resp.body, `"code":-32001`) || strings.Contains(resp.body, "Secret") {
				t.Errorf("tenant B via /jsonrpc %s\n answered %s, want -32001", body, resp.body)
			}
		}
		list := post(t, h.url+"/jsonrpc", map[string]string{"Authorization": "Bearer " + keyB}, `{"jsonrpc":"2.0","id":1,"method":"memory-server/resources/list"}`)
		if !strings.Contains(list.body, `"resources":[]`) {
			t.Errorf("tenant B lists via /jsonrpc: %s", list.body)
		}
	})
	// B can use the same name for its own conversation without touching A's.
	mustCall(t, b, "memory_get_or_create", idArgs)
	mustCall(t, b, "memory_add_message", map[string]any{"conversation_id": id, "role": "user", "content": "B's own"})
	mustCall(t, b, "memory_delete", idArgs)
	after := mustCall(t, a, "memory_get_all_messages", idArgs)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("A's conversation changed while B tried (-before +after):\n%s", diff)
	}
	if sum := mustCall(t, a, "memory_get_summary", idArgs); !strings.HasSuffix(sum["summary"].(string), "A's private summary.") || strings.Contains(sum["summary"].(string), "B was here") {
		t.Errorf("A's summary is now %q", sum["summary"])
	}
}

func TestMutatingCallsLeaveAnAuditTrailInOrder(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) { o.Anonymous = nil })
	key := newKey(t, h, "acme", "alice")
	const trace = "0af7651916cd43dd8448eb211c80319c"
	traceparent := map[string]string{"Authorization": "Bearer " + key, "Traceparent": "00-" + trace + "-b7ad6b7169203331-01", "Mcp-Protocol-Version": "2025-11-25"}
	calls := []struct{ tool, args string }{
		{"memory_get_or_create", `{"conversation_id":"audited"}`},
		{"memory_add_message", `{"conversation_id":"audited","role":"user","content":"one"}`},
		{"memory_get_context", `{"conversation_id":"audited"}`}, // a read: no event
		{"memory_add_message", `{"conversation_id":"audited","role":"robot","content":"bad"}`},
		{"memory_clear", `{"conversation_id":"audited"}`},
	}
	for i, c := range calls {
		resp := post(t, h.url+"/mcp", traceparent, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, c.tool, c.args))
		if resp.status != 200 || !strings.Contains(resp.body, trace) {
			t.Fatalf("%s: %d %s (want the trace id in _meta)", c.tool, resp.status, resp.body)
		}
	}
	cs := h.connect(t, key, nil)
	out := mustCall(t, cs, "get_audit_trace", map[string]any{"trace_id": trace})
	var events []struct {
		Tenant, Type, Tool, Principal, Outcome string
		RequestID                              string `json:"request_id"`
		Time                                   time.Time
	}
	b, _ := json.Marshal(out["events"])
	json.Unmarshal(b, &events)
	var got []string
	for i, e := range events {
		got = append(got, e.Tool+" "+e.Outcome)
		if e.Tenant != "acme" || e.Type != "ToolCalled" || e.Principal != "alice" || e.RequestID == "" || e.Time.IsZero() {
			t.Errorf("event %d = %+v", i, e)
		}
		if i > 0 && e.Time.Before(events[i-1].Time) {
			t.Errorf("event %d is older than event %d", i, i-1)
		}
	}
	want := []string{"memory_get_or_create ok", "memory_add_message ok", "memory_add_message error: invalid_argument", "memory_clear ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
	bad := call(t, cs, "get_audit_trace", map[string]any{"trace_id": "not a trace!"})
	if !bad.IsError || !strings.Contains(text(bad), "trace_id") {
		t.Errorf("a malformed trace id answered %q", text(bad))
	}
}

// The compatibility endpoint's listings of servers and their tools answer
// the callers /mcp answers, and /health anyone.
func TestTheServersListingsNeedTheAuthenticationOfMCP(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) { o.Anonymous = nil })
	key := newKey(t, h, "acme", "alice")
	for _, tc := range []struct {
		name, path, auth string
		wantStatus       int
		wantText         string
	}{
		{"the servers are refused without a key", "/servers", "", 401, "no bearer token"},
		{"a server's capabilities are refused without a key", "/servers/tool-server/capabilities", "", 401, "no bearer token"},
		{"an unknown key is refused", "/servers", "Bearer sb_notakey", 401, "unknown, revoked or expired API key"},
		{"the servers are listed for a key", "/servers", "Bearer " + key, 200, `"name":"memory-server"`},
		{"a server's tools are listed for a key", "/servers/tool-server/capabilities", "Bearer " + key, 200, `"name":"memory_get_context"`},
		{"health needs no key", "/health", "", 200, `"status":"healthy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := mustRequest(t, http.MethodGet, h.url+tc.path)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp := do(t, req)
			if resp.status != tc.wantStatus || !strings.Contains(resp.body, tc.wantText) {
				t.Errorf("GET %s = %d %s, want %d containing %s", tc.path, resp.status, resp.body, tc.wantStatus, tc.wantText)
			}
		})
	}
}

func TestTheCompatibilityEndpoint(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"GetOrCreate", `{"jsonrpc":"2.0","method":"memory-server/memory/get_or_create","params":{"conversation_id":"chat_xxx"},"id":1}`, `"result":{"conversation_id":"chat_xxx","created":true}`},
		{"AddMessage", `{"jsonrpc":"2.0","method":"memory-server/memory/add_message","params":{"conversation_id":"chat_xxx","role":"user","content":"Message content"},"id":6}`, `"status":"success"`},
		{"GetContext", `{"jsonrpc":"2.0","method":"memory-server/memory/get_context","params":{"conversation_id":"chat_xxx","max_messages":20},"id":2}`, `"content":"Message content"`},
		{"SetSummaryAcceptsCompress", `{"jsonrpc":"2.0","method":"memory-server/memory/set_summary","params":{"conversation_id":"chat_xxx","summary":"S1","compress":false},"id":5}`, `"status":"success"`},
		{"GetSummary", `{"jsonrpc":"2.0","method":"memory-server/memory/get_summary","params":{"conversation_id":"chat_xxx"},"id":7}`, `"summary":"S1"`},
		{"ResourcesList", `{"jsonrpc":"2.0","method":"memory-server/resources/list","params":{},"id":10}`, `"uri":"memory://conversation/chat_xxx"`},
		{"ResourcesRead", `{"jsonrpc":"2.0","method":"memory-server/resources/read","params":{"uri":"memory://conversation/chat_xxx"},"id":11}`, `"mimeType":"application/json"`},
		{"ToolsList", `{"jsonrpc":"2.0","method":"tool-server/tools/list","params":{},"id":12}`, `"name":"memory_add_message"`},
		{"ToolsCall", `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"memory_get_summary","arguments":{"conversation_id":"chat_xxx"}},"id":13}`, `"structuredContent"`},
		{"Clear", `{"jsonrpc":"2.0","method":"memory-server/memory/clear","params":{"conversation_id":"chat_xxx"},"id":8}`, `"status":"cleared"`},
		{"Delete", `{"jsonrpc":"2.0","method":"memory-server/memory/delete","params":{"conversation_id":"chat_xxx"},"id":9}`, `"status":"deleted"`},
		{"ParseError", `{"jsonrpc":`, `"code":-32700`},
		{"InvalidRequest", `{"jsonrpc":"1.0","method":"memory-server/memory/get_summary","id":1}`, `"code":-32600`},
		{"MethodNotFound", `{"jsonrpc":"2.0","method":"memory-server/memory/fly","id":1}`, `"code":-32601`},
		{"UnknownServer", `{"jsonrpc":"2.0","method":"ghost-server/memory/get_summary","id":1}`, `"code":-32601`},
		{"InvalidParams", `{"jsonrpc":"2.0","method":"memory-server/memory/add_message","params":{"conversation_id":"c"},"id":1}`, `"code":-32602`},
		{"ResourceNotFound", `{"jsonrpc":"2.0","method":"memory-server/memory/get_context","params":{"conversation_id":"gone"},"id":1}`, `"code":-32001`},
		{"UnknownResource", `{"jsonrpc":"2.0","method":"memory-server/resources/read","params":{"uri":"file:///etc/passwd"},"id":1}`, `"code":-32001`},
		{"UnknownTool", `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"rm_rf","arguments":{}},"id":1}`, `"code":-32602`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, h.url+"/jsonrpc", nil, tc.body)
			if resp.status != 200 || !strings.Contains(resp.body, tc.want) {
				t.Errorf("got %d %s, want 200 containing %s", resp.status, resp.body, tc.want)
			}
		})
	}
	t.Run("ANotificationThatReadsGetsNoAnswer", func(t *testing.T) {
		resp := post(t, h.url+"/jsonrpc", nil, `{"jsonrpc":"2.0","method":"memory-server/memory/get_summary","params":{"conversation_id":"note"}}`)
		if resp.status != http.StatusAccepted || resp.body != "" {
			t.Errorf("got %d %q, want 202 and no body", resp.status, resp.body)
		}
	})
	for path, want := range map[string]string{
		"/health":                             `"servers":["memory-server","tool-server"],"status":"healthy"`,
		"/servers":                            `"name":"memory-server"`,
		"/servers/memory-server/capabilities": `"server_name":"memory-server"`,
		"/servers/tool-server/capabilities":   `"name":"memory_get_context"`,
		"/servers/ghost-server/capabilities":  `no server \"ghost-server\"`,
	} {
		t.Run("GET"+path, func(t *testing.T) {
			resp := do(t, mustRequest(t, http.MethodGet, h.url+path))
			if !strings.Contains(resp.body, want) {
				t.Errorf("GET %s = %d %s, want it to contain %s", path, resp.status, resp.body, want)
			}
		})
	}
}
