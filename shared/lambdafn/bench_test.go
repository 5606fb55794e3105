package lambdafn

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// BenchmarkToolInvoke measures one call through a tool handler (decode,
// check, a domain method that does nothing, encode) as configured locally
// (no log, no metrics) and as deployed (Start's JSON log and its metrics,
// written to io.Discard), side by side in one run.
//
//	go test -run '^$' -bench ToolInvoke -benchmem ./shared/lambdafn/
func BenchmarkToolInvoke(b *testing.B) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
		Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "req-1"})
	for _, bc := range []struct {
		name string
		deps Deps
	}{
		{"local", Deps{}},
		{"deployed", deployedDeps(io.Discard)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := Tool(tool, bc.deps, func(context.Context, tenant.Caller, memory.ConversationInput) (memory.SummaryOutput, error) {
				return memory.SummaryOutput{ConversationID: "c"}, nil
			})
			ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "aws-1"})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Invoke(ctx, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// deployedDeps are the Deps [Start] gives a handler, its log and metrics
// written to w.
func deployedDeps(w io.Writer) Deps {
	return Deps{Logger: slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: lambdacontext.ReplaceAttr})), Metrics: metrics.New(w)}
}
