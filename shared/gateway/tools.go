package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

// callTool returns the MCP handler of tool t: it forwards the call to t's
// function, relays the notifications the function produced, and returns its
// result. A function that fails outright becomes a tool error, never a
// protocol error, so the model can read what happened.
func (g *Gateway) callTool(t *catalog.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		caller, err := g.caller(req.Extra)
		if err != nil {
			return nil, err
		}
		env := &invoke.Request{
			Method: invoke.MethodCallTool, Tool: t.Name, Arguments: req.Params.Arguments,
			Caller: caller, RequestID: newID(), TraceID: traceID(headerOf(req.Extra)),
		}
		if ip := req.Session.InitializeParams(); ip != nil {
			env.ProtocolVersion = ip.ProtocolVersion
		}
		start := time.Now()
		resp, err := g.opts.Invoker.Invoke(ctx, t.Function, env)
		g.log.InfoContext(ctx, "tools/call", "tool", t.Name, "tenant", caller.Tenant, "trace_id", env.TraceID,
			"request_id", env.RequestID, "duration_ms", time.Since(start).Milliseconds(), "error", errString(err))
		if err != nil {
			return functionFailure(t.Name, env, err), nil
		}
		g.relay(ctx, req.Session, req.Params.GetProgressToken(), resp.Notifications)
		var res mcp.CallToolResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			return functionFailure(t.Name, env, fmt.Errorf("undecodable result: %w", err)), nil
		}
		return &res, nil
	}
}

func functionFailure(tool string, env *invoke.Request, err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("%s could not run: %v. Retrying may help; if it keeps failing, the operator can find request %s in the function's logs.", tool, err, env.RequestID)
	var fe *invoke.FunctionError
	if errors.As(err, &fe) && fe.Type == "Sandbox.Timedout" {
		msg = fmt.Sprintf("%s timed out before answering (request %s). Retry, or ask for less at once.", tool, env.RequestID)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		Meta:    mcp.Meta{lambdafn.TraceMetaKey: env.TraceID},
	}
}

// relay sends a function's notifications to the client, in order: progress
// reports tagged with the client's progress token (dropped if it sent none),
// log messages subject to the level it asked for.
func (g *Gateway) relay(ctx context.Context, ss *mcp.ServerSession, token any, notes []invoke.Notification) {
	if ss == nil {
		return
	}
	for _, n := range notes {
		var err error
		switch {
		case n.Progress != nil && token != nil:
			err = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: *n.Progress, Total: n.Total, Message: n.Message})
		case n.Level != "":
			err = ss.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(n.Level), Logger: n.Logger, Data: n.Data})
		}
		if err != nil {
			g.log.WarnContext(ctx, "relaying a notification failed", "error", err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
