package approvalpage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Remote is an [Approver] served by another function, as on AWS, where the
// connectors function alone reaches the connector service: it calls that
// function's tools GetTool, ApproveTool and DenyTool (each taking
// connector.ApprovalInput and answering connector.ApprovalOutput as
// structured content, {"approval": {...}}, as lambdafn serves any tool) through Invoker, with the
// caller in the envelope as the gateway sends every call. A classified
// refusal comes back with its kind, so the page answers the same statuses
// as with the service in process.
type Remote struct {
	Invoker                        invoke.Invoker
	Function                       string
	GetTool, ApproveTool, DenyTool string
}

func (r Remote) Get(ctx context.Context, c tenant.Caller, id string) (Approval, error) {
	return r.call(ctx, c, r.GetTool, id)
}

func (r Remote) Approve(ctx context.Context, c tenant.Caller, id string) (Approval, error) {
	return r.call(ctx, c, r.ApproveTool, id)
}

func (r Remote) Deny(ctx context.Context, c tenant.Caller, id string) (Approval, error) {
	return r.call(ctx, c, r.DenyTool, id)
}

func (r Remote) call(ctx context.Context, c tenant.Caller, tool, approvalID string) (Approval, error) {
	var out struct {
		Approval Approval `json:"approval"`
	}
	args, err := json.Marshal(map[string]string{"id": approvalID})
	if err != nil {
		return Approval{}, fmt.Errorf("approvalpage: encoding the arguments of %s: %w", tool, err)
	}
	id := newID()
	resp, err := r.Invoker.Invoke(ctx, r.Function, &invoke.Request{Method: "tools/call", Tool: tool, Arguments: args,
		Caller: c, RequestID: id, TraceID: id})
	if err != nil {
		return Approval{}, fault.Unavailable(err, "calling %s failed", tool)
	}
	if e := resp.Error; e != nil {
		return Approval{}, &fault.Error{Kind: fault.Kind(e.Kind), Field: e.Field, Message: e.Message}
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.IsError || json.Unmarshal(res.StructuredContent, &out) != nil {
		return Approval{}, fmt.Errorf("approvalpage: %s answered no approval: %.200s", tool, resp.Result)
	}
	return out.Approval, nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
