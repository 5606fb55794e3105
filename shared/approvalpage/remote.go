package approvalpage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Remote is an [Approver] served by another function, as on AWS, where the
// connectors function alone reaches the connector service: it calls that
// function's tools GetTool, ApproveTool and DenyTool (each taking
// connector.ApprovalInput and answering connector.ApprovalOutput as
// structured content, as lambdafn serves any tool) through Invoker, with the
// caller in the envelope as the gateway sends every call. A classified
// refusal comes back with its kind, so the page answers the same statuses
// as with the service in process.
type Remote struct {
	Invoker                        invoke.Invoker
	Function                       string
	GetTool, ApproveTool, DenyTool string
}

func (r Remote) ApprovalGet(ctx context.Context, c tenant.Caller, in connector.ApprovalInput) (connector.ApprovalOutput, error) {
	return r.call(ctx, c, r.GetTool, in)
}

func (r Remote) Approve(ctx context.Context, c tenant.Caller, in connector.ApprovalInput) (connector.ApprovalOutput, error) {
	return r.call(ctx, c, r.ApproveTool, in)
}

func (r Remote) Deny(ctx context.Context, c tenant.Caller, in connector.ApprovalInput) (connector.ApprovalOutput, error) {
	return r.call(ctx, c, r.DenyTool, in)
}

func (r Remote) call(ctx context.Context, c tenant.Caller, tool string, in connector.ApprovalInput) (connector.ApprovalOutput, error) {
	var out connector.ApprovalOutput
	args, err := json.Marshal(in)
	if err != nil {
		return out, fmt.Errorf("approvalpage: encoding the arguments of %s: %w", tool, err)
	}
	id := newID()
	resp, err := r.Invoker.Invoke(ctx, r.Function, &invoke.Request{Method: "tools/call", Tool: tool, Arguments: args,
		Caller: c, RequestID: id, TraceID: id})
	if err != nil {
		return out, fault.Unavailable(err, "calling %s failed", tool)
	}
	if e := resp.Error; e != nil {
		return out, &fault.Error{Kind: fault.Kind(e.Kind), Field: e.Field, Message: e.Message}
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.IsError || json.Unmarshal(res.StructuredContent, &out) != nil {
		return out, fmt.Errorf("approvalpage: %s answered no approval: %.200s", tool, resp.Result)
	}
	return out, nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
