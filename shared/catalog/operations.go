package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Visibility:  Public,
		Limits:      Limits{Timeout: 10 * time.Second, MemoryMB: 256},
		Table:       Read,
		Example:     json.RawMessage(`{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`),
	}}
}
