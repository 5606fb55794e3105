package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
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
		if !allows(req.Extra, t) { // checkScopes answers 403 first; this is the backstop
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "this access token's scopes do not allow calling " + t.Name}
		}
		env := &invoke.Request{
			Method: invoke.MethodCallTool, Tool: t.Name, Arguments: req.Params.Arguments,
			Caller: caller, RequestID: newID(), TraceID: traceID(headerOf(req.Extra)),
		}
		if env.Thread, err = metaThread(req.Params.Meta); err != nil {
			return nil, err
		}
		if len(t.Invokes) > 0 {
			p, _, err := g.requestProfile(ctx, req.Extra, req.Params.Meta)
			if err != nil {
				return nil, err
			}
			env.Profile = heldTo(t, p)
		}
		version, caps := protocolOf(req.Session)
		env.ProtocolVersion = version
		b := elicit.Binding{Caller: caller, Method: invoke.MethodCallTool, Name: t.Name, Arguments: req.Params.Arguments}
		if env.Input, err = g.openRound(version, caps, req.Params.InputResponses, req.Params.RequestState, b); err != nil {
			return nil, err
		}
		return g.serveCall(ctx, req, t, env, b)
	}
}

// serveCall invokes t's function with env, the call req made (bound to b),
// relays the notifications the function produced and returns its result,
// an input request whose state it seals, or a tool error saying what
// failed.
func (g *Gateway) serveCall(ctx context.Context, req *mcp.CallToolRequest, t *catalog.Tool, env *invoke.Request, b elicit.Binding) (*mcp.CallToolResult, error) {
	start := time.Now()
	call := ctx
	if token := req.Params.GetProgressToken(); token != nil && t.Progress {
		call = relaying(ctx, func(n invoke.Notification) { g.relay(ctx, req.Session, token, []invoke.Notification{n}) })
	}
	resp, err := g.invoke(call, t.Function, env)
	g.log.InfoContext(ctx, "tools/call", "tool", t.Name, "tenant", env.Caller.Tenant, "trace_id", env.TraceID,
		"request_id", env.RequestID, "duration_ms", time.Since(start).Milliseconds(), "error", errString(err))
	if err != nil {
		return functionFailure(t, env, err), nil
	}
	g.relay(ctx, req.Session, req.Params.GetProgressToken(), resp.Notifications)
	if ask := resp.InputRequired; ask != nil && env.Input != nil {
		state, err := g.sealAsk(b, env.Input, ask)
		var refusal *jsonrpc.Error
		switch {
		case errors.As(err, &refusal): // the client cannot answer what was asked
			return nil, err
		case err != nil:
			return functionFailure(t, env, err), nil
		}
		return &mcp.CallToolResult{Meta: mcp.Meta{invoke.TraceMetaKey: env.TraceID}, InputRequests: ask.Requests, RequestState: state}, nil
	}
	res, err := decodeToolResult(resp.Result)
	if err != nil {
		return functionFailure(t, env, fmt.Errorf("undecodable result: %w", err)), nil
	}
	return res, nil
}

// toolResultWire is a CallToolResult as functions write it. Decoding into it
// keeps the structured content as raw JSON, which the go-sdk then writes out
// verbatim, instead of a map it would re-encode.
type toolResultWire struct {
	Meta              mcp.Meta          `json:"_meta,omitempty"`
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// decodeToolResult decodes a function's CallToolResult. Text content, all a
// Switchboard function writes, is decoded directly; anything else (images,
// audio, embedded resources) goes through the go-sdk's full decoder.
func decodeToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var w toolResultWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Meta: w.Meta, IsError: w.IsError, Content: make([]mcp.Content, 0, len(w.Content))}
	if len(w.StructuredContent) > 0 {
		res.StructuredContent = w.StructuredContent
	}
	for _, c := range w.Content {
		// MCP text content has type, text, and optionally annotations and _meta.
		var item struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			Annotations json.RawMessage `json:"annotations"`
			Meta        json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(c, &item); err != nil {
			return nil, err
		}
		if item.Type != "text" || item.Annotations != nil || item.Meta != nil {
			var full mcp.CallToolResult
			if err := json.Unmarshal(raw, &full); err != nil {
				return nil, err
			}
			full.StructuredContent = res.StructuredContent
			return &full, nil
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: item.Text})
	}
	return res, nil
}

// answerReserve is what the gateway keeps of the deadline it runs under (its
// Lambda's timeout, within API Gateway's 30 s) to answer when a function it
// waits for runs longer.
const answerReserve = 1500 * time.Millisecond

// errNotAwaited reports that the gateway stopped waiting for a function,
// which goes on running: a Lambda invocation outlives its caller.
var errNotAwaited = errors.New("the endpoint stopped waiting for it")

// invoke calls function with env, cancelling the call when its HTTP request
// ends (the client went away); a tool call is first admitted within its
// caller's limits (admit). Under a deadline it waits until only
// [answerReserve] of it is left, then returns errNotAwaited, so that a long
// call gets an answer instead of the gateway being cut off mid-call.
func (g *Gateway) invoke(ctx context.Context, function string, env *invoke.Request) (*invoke.Response, error) {
	if p, ok := takePrefetched(ctx, function, env); ok {
		return p.resp, p.err
	}
	if env.Method == invoke.MethodCallTool {
		release, refused := g.admit(ctx, function, env)
		if refused != nil {
			return refused, nil
		}
		defer release()
	}
	return g.invokeUnlimited(ctx, function, env)
}

// invokeUnlimited is invoke without the admission: for the gateway's own
// calls that serve a list, a resource read or a prompt, which the limits do
// not count, as they do not count the catalog's.
func (g *Gateway) invokeUnlimited(ctx context.Context, function string, env *invoke.Request) (*invoke.Response, error) {
	ctx, cancel := withRequestEnd(ctx)
	defer cancel()
	return await(ctx, func(ctx context.Context) (*invoke.Response, error) { return g.call(ctx, function, env) })
}

// call invokes function with env: for a streamed answer, each notification
// relayed as it arrives, when ctx carries a relay (a tools/call of a tool
// that reports progress, from a client that gave a progress token) and the
// invoker can stream; else for its whole answer.
func (g *Gateway) call(ctx context.Context, function string, env *invoke.Request) (*invoke.Response, error) {
	onNote, _ := ctx.Value(relayKey{}).(func(invoke.Notification))
	si, ok := g.opts.Invoker.(invoke.StreamInvoker)
	if onNote == nil || !ok {
		return g.opts.Invoker.Invoke(ctx, function, env)
	}
	raw, err := si.InvokeStream(ctx, function, env, onNote)
	if err != nil {
		return nil, err
	}
	return invoke.DecodeResponse(function, raw)
}

type relayKey struct{}

// relaying returns ctx carrying onNote, the relay of a call's
// notifications as they arrive (see [Gateway.call]).
func relaying(ctx context.Context, onNote func(invoke.Notification)) context.Context {
	return context.WithValue(ctx, relayKey{}, onNote)
}

// await makes a call to a function under ctx, which ends with the call's
// HTTP request, as [Gateway.invoke] does: under a deadline it gives up with
// errNotAwaited when only [answerReserve] of it is left.
func await[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	d, ok := deadline(ctx)
	if !ok {
		return call(ctx)
	}
	wait, cancel := context.WithDeadline(ctx, d.Add(-answerReserve))
	defer cancel()
	v, err := call(wait)
	if err != nil && wait.Err() != nil && ctx.Err() == nil {
		var zero T
		return zero, errNotAwaited
	}
	return v, err
}

func functionFailure(t *catalog.Tool, env *invoke.Request, err error) *mcp.CallToolResult {
	msg := fmt.Sprintf("%s could not run: %v. Retrying may help; if it keeps failing, the operator can find request %s in the function's logs.", t.Name, err, env.RequestID)
	var fe *invoke.FunctionError
	switch {
	case errors.Is(err, errNotAwaited) && t.Mutates:
		msg = fmt.Sprintf("%s is still running (request %s) after the longest this endpoint can wait, and finishes on its own: "+
			"its changes, and its audit events in trace %s (get_audit_trace), appear when it completes. Check them before calling it again.",
			t.Name, env.RequestID, env.TraceID)
	case errors.Is(err, errNotAwaited):
		msg = fmt.Sprintf("%s took longer than this endpoint can wait (request %s). Retry, or ask for less at once.", t.Name, env.RequestID)
	case errors.As(err, &fe) && fe.Type == "Sandbox.Timedout":
		msg = fmt.Sprintf("%s timed out before answering (request %s). Retry, or ask for less at once.", t.Name, env.RequestID)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		Meta:    mcp.Meta{invoke.TraceMetaKey: env.TraceID},
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
			//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
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
