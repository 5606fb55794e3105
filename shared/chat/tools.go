package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// proxySeparator joins a connector's name and its tool's in a proxied name.
const proxySeparator = "__"

var (
	_ Tools     = (*Invoked)(nil)
	_ Approvals = (*Invoked)(nil)
)

// Invoked lists and calls tools through an [invoke.Invoker], by name, as the
// gateway does: the catalog's tools that a chat may call ([catalog.ChatCallable]),
// each in its own function, and the caller's connector tools
// (<connector>__<tool>) through the connectors' proxy function, whose
// approval policies apply as to any call (a tool that needs approval
// answers with the approval page's link, which the answer passes on).
type Invoked struct {
	Catalog *catalog.Catalog
	Invoker invoke.Invoker
	// Limiter, if set, holds each call to its caller's rate limits, as the
	// gateway holds the caller's own calls: a call they refuse is not
	// made, and the model reads why (the limit met, when to retry) as the
	// tool's error.
	Limiter *ratelimit.Limiter
}

// List implements [Tools].
func (v *Invoked) List(ctx context.Context, c tenant.Caller) ([]Tool, error) {
	var out []Tool
	for _, t := range v.Catalog.Tools() {
		if !catalog.ChatCallable(t) {
			continue
		}
		// The catalog's group (catalog.Groups are seed 000's names, as this
		// package's); a tool in none is always on.
		group := cmp.Or(t.Group, ToolsSwitchboard)
		out = append(out, Tool{Group: group, ToolSpec: specOf(t.Name, t.Description, t.InputSchema)})
	}
	if _, ok := v.Catalog.Tool(catalog.ConnectorListingTool); !ok {
		return out, nil
	}
	raw, err := v.structured(ctx, c, catalog.ConnectorListingTool, json.RawMessage(`{}`))
	if err != nil {
		return out, fmt.Errorf("chat: listing connector tools: %w", err)
	}
	var listing struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &listing); err != nil {
		return out, fmt.Errorf("chat: listing connector tools: %w", err)
	}
	for _, t := range listing.Tools {
		out = append(out, Tool{Group: ToolsConnectors, ToolSpec: specOf(t.Name, t.Description, t.InputSchema)})
	}
	return out, nil
}

// Call implements [Tools].
func (v *Invoked) Call(ctx context.Context, c tenant.Caller, name string, args json.RawMessage) (ToolResult, error) {
	return v.call(ctx, c, name, args, "")
}

// CallApproved implements [Approvals]: the connector tool's call through
// connector_call with approval id, as a host's retry carries it in _meta.
func (v *Invoked) CallApproved(ctx context.Context, c tenant.Caller, name string, args json.RawMessage, id string) (ToolResult, error) {
	if id == "" || !strings.Contains(name, proxySeparator) {
		return ToolResult{}, fault.Invalid("tool", "%q is not a connector tool an approval may cover", name)
	}
	return v.call(ctx, c, name, args, id)
}

// ApprovalStatus implements [Approvals] through approval_get, the page's
// read, which settles an approval past its expiry as expired.
func (v *Invoked) ApprovalStatus(ctx context.Context, c tenant.Caller, id string) (string, error) {
	t, ok := v.Catalog.Tool(catalog.ApprovalGetTool)
	if !ok {
		return "", fault.Unavailable(nil, "this server has no connectors' approvals")
	}
	args, _ := json.Marshal(map[string]string{"id": id})
	resp, err := v.Invoker.Invoke(ctx, t.Function, envelope(ctx, c, t.Name, args))
	if err != nil {
		return "", err
	}
	if resp.Error != nil {
		return "", &fault.Error{Kind: fault.Kind(resp.Error.Kind), Field: resp.Error.Field, Message: resp.Error.Message}
	}
	var res struct {
		StructuredContent struct {
			Approval struct {
				Status string `json:"status"`
			} `json:"approval"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.StructuredContent.Approval.Status == "" {
		return "", fmt.Errorf("chat: %s answered no approval", t.Name)
	}
	return res.StructuredContent.Approval.Status, nil
}

// call calls name for c, a connector tool with approvalID if it is set.
func (v *Invoked) call(ctx context.Context, c tenant.Caller, name string, args json.RawMessage, approvalID string) (ToolResult, error) {
	function, tool := "", name
	if t, ok := v.Catalog.Tool(name); ok && catalog.ChatCallable(t) {
		function = t.Function
	} else if p, ok := v.Catalog.Tool(catalog.ConnectorCallTool); ok && strings.Contains(name, proxySeparator) {
		function, tool = p.Function, p.Name
		args, _ = json.Marshal(struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			ApprovalID string          `json:"approval_id,omitempty"`
		}{name, args, approvalID})
	} else {
		return ToolResult{}, fault.Invalid("tool", "%q is not a tool a chat may call", name)
	}
	if v.Limiter != nil {
		d, _ := ctx.Deadline()
		lease, err := v.Limiter.Acquire(ctx, ratelimit.Call{Caller: c, Function: function, Deadline: d})
		if err != nil {
			_, _, msg := fault.Public(err)
			return ToolResult{Text: msg, IsError: true}, nil
		}
		defer lease.Release(context.WithoutCancel(ctx))
	}
	resp, err := v.Invoker.Invoke(ctx, function, envelope(ctx, c, tool, args))
	if err != nil {
		return ToolResult{}, err
	}
	return resultText(resp)
}

// structured calls an internal tool and returns its structured content.
func (v *Invoked) structured(ctx context.Context, c tenant.Caller, name string, args json.RawMessage) (json.RawMessage, error) {
	t, _ := v.Catalog.Tool(name)
	resp, err := v.Invoker.Invoke(ctx, t.Function, envelope(ctx, c, name, args))
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, errors.New(resp.Error.Message)
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.StructuredContent) == 0 {
		return nil, errors.New(name + " answered no result")
	}
	return res.StructuredContent, nil
}

// envelope is the request a tool's function gets for the chat's call: the
// chat's caller, trace and request.
func envelope(ctx context.Context, c tenant.Caller, tool string, args json.RawMessage) *invoke.Request {
	env := &invoke.Request{Method: invoke.MethodCallTool, Tool: tool, Arguments: args, Caller: c}
	if call, ok := callcontext.FromContext(ctx); ok {
		env.TraceID, env.RequestID = call.TraceID, call.RequestID
	}
	return env
}

// resultText is a tool's answer as the model reads it: its text content, or
// its structured content as the function wrote it (never decoded, so numbers
// keep their digits); a failed call's message.
func resultText(resp *invoke.Response) (ToolResult, error) {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		// The approval a connector call asked for (connector.ApprovalMetaKey, ApprovalURLMetaKey).
		Meta struct {
			ApprovalID  string `json:"switchboard.dev/approval_id"`
			ApprovalURL string `json:"switchboard.dev/approval_url"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		if resp.Error != nil {
			return ToolResult{Text: resp.Error.Message, IsError: true}, nil
		}
		return ToolResult{}, fmt.Errorf("undecodable tool result: %w", err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if c.Type == "text" && c.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(c.Text)
		}
	}
	if b.Len() == 0 && len(res.StructuredContent) > 0 {
		b.Write(res.StructuredContent)
	}
	out := ToolResult{Text: b.String(), IsError: res.IsError || resp.Error != nil}
	if out.Text == "" && resp.Error != nil {
		out.Text = resp.Error.Message
	}
	if out.IsError && tenant.IsKeyID(res.Meta.ApprovalID) {
		// A call asking for approval is a tool error naming it.
		out.ApprovalID, out.ApprovalURL = res.Meta.ApprovalID, res.Meta.ApprovalURL
	}
	return out, nil
}

// specOf is a tool's spec, with an empty object schema for one without any.
func specOf(name, description string, schema json.RawMessage) provider.ToolSpec {
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return provider.ToolSpec{Name: name, Description: description, InputSchema: schema}
}
