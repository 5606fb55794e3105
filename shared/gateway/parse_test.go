package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// rpcErrorOf decodes the JSON-RPC error of a response body.
func rpcErrorOf(t *testing.T, body string) (code int, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("the body is not a JSON-RPC error: %v\n%s", err, body)
	}
	return e.Error.Code, e.Error.Message
}

func TestTheCompatibilityEndpointRefusesWhatIsNotOneRequest(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		name, body string
		wantCode   int
		wantText   string
	}{
		{"TrailingBytes", `{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_or_create","params":{"conversation_id":"trail"}} junk`, -32700, "more follows the JSON value, at byte 108"},
		{"TwoRequests", `{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_or_create","params":{"conversation_id":"trail"}}{"jsonrpc":"2.0","id":2,"method":"tool-server/tools/list"}`, -32700, "more follows the JSON value"},
		{"AnArray", `[{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_or_create","params":{"conversation_id":"trail"}}]`, -32600, "the request must be an object, not array"},
		{"AMethodOfTheWrongType", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600, "method must be a string, not number"},
		{"ParamsOfTheWrongType", `{"jsonrpc":"2.0","id":1,"method":"tool-server/tools/call","params":[1]}`, -32602, "params must be an object, not array"},
		{"BrokenJSON", `{"jsonrpc":`, -32700, "the request body ends inside its JSON value"},
		{"AMutatingNotification", `{"jsonrpc":"2.0","method":"memory-server/memory/get_or_create","params":{"conversation_id":"trail"}}`, -32600, "memory_get_or_create changes state; nothing was done"},
		{"AMutatingToolCallNotification", `{"jsonrpc":"2.0","method":"tool-server/tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"trail"}}}`, -32600, "memory_get_or_create changes state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, h.url+"/jsonrpc", nil, tc.body)
			code, msg := rpcErrorOf(t, resp.body)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantText) {
				t.Errorf("got %d %q, want %d containing %q", code, msg, tc.wantCode, tc.wantText)
			}
			if strings.Contains(msg, "Go ") || strings.Contains(msg, "gateway.") || strings.Contains(msg, "struct") {
				t.Errorf("the message names Go types: %q", msg)
			}
		})
	}
	// None of them did anything.
	resp := post(t, h.url+"/jsonrpc", nil, `{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_summary","params":{"conversation_id":"trail"}}`)
	if code, _ := rpcErrorOf(t, resp.body); code != -32001 {
		t.Errorf("conversation trail exists after only refused requests: %s", resp.body)
	}
}

func TestTheMCPEndpointRefusesMalformedJSONAndLargeBatches(t *testing.T) {
	h := newHarness(t, nil)
	ping := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	for _, tc := range []struct {
		name, version, body  string
		wantStatus, wantCode int
		wantText             string
	}{
		{"BrokenJSON", "2025-11-25", `{bad`, 400, -32700, "parse error: the request body is not valid JSON at byte 2"},
		{"TrailingBytes", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`, 400, -32700, "more follows the JSON value, at byte 41"},
		{"ABatchAtTheCap", "2025-03-26", ping(gateway.MaxBatch), 200, 0, ""},
		{"ABatchOverTheCap", "2025-03-26", ping(gateway.MaxBatch + 1), 400, -32600, fmt.Sprintf("a batch holds %d messages; send 1 to %d per request", gateway.MaxBatch+1, gateway.MaxBatch)},
		{"ABatchOverTheCapWithoutAVersion", "", ping(gateway.MaxBatch + 1), 400, -32600, "a batch holds"},
		{"AnEmptyBatch", "2025-03-26", `[]`, 400, -32600, "a batch holds 0 messages"},
		{"AMethodOfTheWrongType", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":5}`, 400, -32600, "invalid request: method must be a string, not number"},
		{"AnIDOfTheWrongType", "2025-11-25", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, 400, -32600, "invalid request: id must be a string or a number"},
		{"ParamsOfTheWrongType", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, 200, -32602, "invalid params: params must be an object, not array"},
		{"AParamOfTheWrongType", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, 200, -32602, "invalid params: name must be a string, not number"},
		{"ANestedParamOfTheWrongType", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":1}}}`, 200, -32602, "invalid params: clientInfo.name must be a string, not number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{}
			if tc.version != "" {
				header["Mcp-Protocol-Version"] = tc.version
			}
			resp := post(t, h.url+"/mcp", header, tc.body)
			if resp.status != tc.wantStatus {
				t.Fatalf("got %d %s, want %d", resp.status, resp.body, tc.wantStatus)
			}
			if tc.wantCode == 0 {
				if len(resp.messages) != gateway.MaxBatch {
					t.Errorf("a batch of %d got %d answers: %.300s", gateway.MaxBatch, len(resp.messages), resp.body)
				}
				return
			}
			code, msg := rpcErrorOf(t, resp.body)
			if code != tc.wantCode || !strings.Contains(msg, tc.wantText) || resp.header.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %q (%s), want %d containing %q", code, msg, resp.header.Get("Content-Type"), tc.wantCode, tc.wantText)
			}
			if strings.Contains(msg, "Go ") || strings.Contains(msg, "mcp.") {
				t.Errorf("the message names Go types: %q", msg)
			}
		})
	}
}
