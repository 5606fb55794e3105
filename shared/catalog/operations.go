package catalog

import (
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// OperationsFamily names the tools that operate Switchboard itself.
const OperationsFamily = "operations"

func operationsTools() []*Tool {
	return []*Tool{{
		Name:        "get_audit_trace",
		Title:       "Read an audit trace",
		Description: "Returns the audit events of one trace in your tenant, oldest first: every state-changing call with its tool, principal, request id and outcome. Every tool result carries its trace id in _meta; send a W3C traceparent header to group several calls under one trace.",
		Family:      OperationsFamily,
		Function:    "operations/get_audit_trace",
		Input: schemaFor[audit.TraceInput](func(p map[string]*jsonschema.Schema) {
			p["trace_id"].Pattern, p["trace_id"].MaxLength = audit.TracePattern, ptr(128)
			p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(store.MaxQueryLimit))
		}),
		Output:      schemaFor[audit.TraceOutput](nil),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Visibility:  Public,
		Limits:      Limits{Timeout: 10 * time.Second, MemoryMB: 256},
		Table:       Read,
		Example:     json.RawMessage(`{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`),
	}}
}
