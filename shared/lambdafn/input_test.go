package lambdafn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// TestAToolThatAsks calls a tool that returns what ask gives it, as the
// gateway sends a call from a client that can answer forms.
func TestAToolThatAsks(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	form := elicit.Form("Which summary?", map[string]any{"type": "object"})
	once := &elicit.State{ID: "s1", Expires: time.Now().Add(time.Minute), Once: true}
	tests := []struct {
		name      string
		ask       *elicit.InputRequired
		input     *elicit.Round
		wantAsk   bool
		wantError string
	}{
		{name: "asks the gateway and tells other front ends it cannot", ask: elicit.Ask("which", form), input: &elicit.Round{Can: []string{elicit.MethodElicit}},
			wantAsk: true, wantError: "Which summary?"},
		{name: "a malformed question is the tool's failure", ask: &elicit.InputRequired{}, input: &elicit.Round{Can: []string{elicit.MethodElicit}},
			wantError: "internal error"},
		{name: "a single-use state is spent before the tool runs, once", input: &elicit.Round{State: once}},
		{name: "a single-use state used again is refused", input: &elicit.Round{State: once}, wantError: "requestState was already used"},
	}
	d := Deps{Table: storetest.OpenEmbedded(t)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Tool(tool, d, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
				if tt.ask != nil {
					return memory.SummaryOutput{}, tt.ask
				}
				return memory.SummaryOutput{}, nil
			})
			payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
				Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, ProtocolVersion: "2026-07-28", Input: tt.input})
			out, err := h.Invoke(context.Background(), payload)
			if err != nil {
				t.Fatal(err)
			}
			var resp invoke.Response
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatal(err)
			}
			if (resp.InputRequired != nil) != tt.wantAsk {
				t.Errorf("asks: %v, want %v", resp.InputRequired != nil, tt.wantAsk)
			}
			if tt.wantAsk {
				if got, ok := resp.InputRequired.Requests["which"].(*mcp.ElicitParams); !ok || got.Message != "Which summary?" {
					t.Errorf("the question came back as %#v", resp.InputRequired.Requests["which"])
				}
			}
			var res mcp.CallToolResult
			if err := json.Unmarshal(resp.Result, &res); err != nil {
				t.Fatal(err)
			}
			if tt.wantError == "" && res.IsError {
				t.Errorf("tool error: %s", resp.Result)
			}
			if tt.wantError != "" && (!res.IsError || !strings.Contains(string(resp.Result), tt.wantError)) {
				t.Errorf("result %s, want a tool error saying %q", resp.Result, tt.wantError)
			}
		})
	}
}
