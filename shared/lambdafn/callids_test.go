package lambdafn

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestDomainCodeSeesTheCallsIDs(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	var trace, request string
	h := Tool(tool, Deps{}, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
		trace, request = CallIDs(ctx)
		return memory.SummaryOutput{}, nil
	})
	payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
		Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "trace-1", RequestID: "req-1"})
	if _, err := h.Invoke(context.Background(), payload); err != nil {
		t.Fatal(err)
	}
	if trace != "trace-1" || request != "req-1" {
		t.Errorf("CallIDs = %q, %q; want trace-1, req-1", trace, request)
	}
	if tr, rq := CallIDs(context.Background()); tr != "" || rq != "" {
		t.Errorf("outside a call: %q, %q", tr, rq)
	}
}
