package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

const xrayHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

// Every call writes one metric record naming its family, its tool, its
// failure's kind and, as properties, its tenant and traces; domain code
// sees the invocation's X-Ray header in the call.
func TestEveryCallWritesOneMetricRecord(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"a call that succeeds", nil, []string{`"Errors":0`, `"Faults":0`}},
		{"a call that fails", fault.NotFound("no conversation c"), []string{`"Errors":1`, `"Faults":0`, `"ErrorKind":"not_found"`, `"ErrorsByKind":1`}},
		{"a call that fails on the server's side", fault.Unavailable(nil, "table down"), []string{`"Errors":1`, `"Faults":1`, `"ErrorKind":"unavailable"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var seen callcontext.Call
			h := Tool(tool, Deps{Metrics: metrics.New(&out)}, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
				seen, _ = callcontext.FromContext(ctx)
				return memory.SummaryOutput{}, tc.err
			})
			payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
				Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "req-1"})
			//lint:ignore SA1029 the key aws-lambda-go puts the invocation's trace header under
			ctx := context.WithValue(context.Background(), "x-amzn-trace-id", xrayHeader)
			if _, err := h.Invoke(ctx, payload); err != nil {
				t.Fatal(err)
			}
			if seen.XRay != xrayHeader {
				t.Errorf("domain code saw X-Ray header %q, want %q", seen.XRay, xrayHeader)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d records, want 1:\n%s", len(lines), out.String())
			}
			want := append([]string{`"Family":"memory"`, `"Function":"memory_get_summary"`, `"Calls":1`, `"tenant":"acme"`,
				`"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`, `"request_id":"req-1"`, `"xray_trace_id":"1-5759e988-bd862e3fe1be46a994272793"`}, tc.want...)
			for _, w := range want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("record lacks %s: %s", w, lines[0])
				}
			}
		})
	}
}

// A resource function's call is a metric record too, named by its path.
func TestAResourceCallWritesAMetricRecord(t *testing.T) {
	var out bytes.Buffer
	h := Resources("memory/resource", Deps{Metrics: metrics.New(&out)}, ResourceFuncs{
		Read: func(context.Context, tenant.Caller, string) (*mcp.ReadResourceResult, error) {
			return nil, fault.NotFound("no such conversation")
		},
	})
	payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodReadResource, URI: "memory://conversation/c", Caller: tenant.Caller{Tenant: "acme", Principal: "p"}})
	if _, err := h.Invoke(context.Background(), payload); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Family":"memory"`, `"Function":"memory/resource"`, `"Calls":1`, `"ErrorKind":"not_found"`, `"tenant":"acme"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("record %s lacks %s", out.String(), want)
		}
	}
}
