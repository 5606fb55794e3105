package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The gateway proxies a tenant's connectors (issue 12) when its catalog has
// the internal tools of catalog.ConnectorProxyFunction: tools/list,
// resources/list and prompts/list add what the tenant's connected
// connectors offer under their proxied names (<connector>__<tool>,
// connector://<connector>/<uri>), read by that function from the capability
// cache (connector_listing: one invocation per list, so the gateway reads
// no tenant's data itself); tools/call of a proxied name, resources/read of
// a proxied URI and prompts/get of a proxied prompt go to that function,
// which holds the pooled upstream sessions. A proxied call never takes the
// fast path, which answers catalog tools only: the go-sdk serves it, the
// same way as callTool serves a catalog tool (request states, relayed
// progress, tool errors for failures).

// proxySeparator ends a connector's name in a proxied name
// (connector.Separator; connector names never hold one).
const proxySeparator = "__"

// proxiedResourceScheme begins a proxied resource's URI (connector.ResourceScheme).
const proxiedResourceScheme = "connector://"

// approvalMetaKey is the _meta key a host's retry carries a page approval's
// id in (connector.ApprovalMetaKey).
const approvalMetaKey = "switchboard.dev/approval_id"

// approvalURLMetaKey is the _meta key a result asking for a page approval
// links the page in (connector.ApprovalURLMetaKey).
const approvalURLMetaKey = "switchboard.dev/approval_url"

// proxy returns the catalog's tool named name if the gateway proxies
// connectors (its catalog has the proxy function's tools).
func (g *Gateway) proxy(name string) (*catalog.Tool, bool) {
	t, ok := g.opts.Catalog.Tool(name)
	return t, ok && t.Function == catalog.ConnectorProxyFunction
}

// ConnectorApprovals returns the approval page's [approvalpage.Approver]
// over the connectors' proxy function invoked through inv (the Lambda API on
// AWS, the local stack in one process), or nil if cat has no such function.
func ConnectorApprovals(cat *catalog.Catalog, inv invoke.Invoker) approvalpage.Approver {
	t, ok := cat.Tool(catalog.ApprovalGetTool)
	if !ok {
		return nil
	}
	return approvalpage.Remote{Invoker: inv, Function: t.Function,
		GetTool: catalog.ApprovalGetTool, ApproveTool: catalog.ApprovalApproveTool, DenyTool: catalog.ApprovalDenyTool}
}

// connectorsMiddleware serves the proxied names: it adds the tenant's
// connectors' tools, resources and prompts to the last page of each list,
// and sends calls, reads and gets of proxied names to the proxy function.
// Everything else passes to next untouched.
func (g *Gateway) connectorsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	if _, ok := g.proxy(catalog.ConnectorCallTool); !ok {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if g.isProxiedName(r.Params.Name) {
				res, err := g.callProxied(ctx, r)
				if err != nil {
					return nil, err
				}
				return typed(r.Session, res, res.InputRequests != nil, &mcp.CallToolResult{})
			}
		case *mcp.ReadResourceRequest:
			if strings.HasPrefix(r.Params.URI, proxiedResourceScheme) {
				res, err := g.readProxied(ctx, r)
				if err != nil {
					return nil, err
				}
				return typed(r.Session, res, false, &mcp.ReadResourceResult{})
			}
		case *mcp.GetPromptRequest:
			if _, known := g.opts.Catalog.Prompt(r.Params.Name); !known && strings.Contains(r.Params.Name, proxySeparator) {
				res, err := g.getProxiedPrompt(ctx, r)
				if err != nil {
					return nil, err
				}
				return typed(r.Session, res, false, &mcp.GetPromptResult{})
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch lr := res.(type) {
		case *mcp.ListToolsResult:
			if lr.NextCursor == "" && g.listsProxied(ctx, req) { // profiles.go
				if l, ok := g.listing(ctx, req.GetExtra()); ok {
					lr.Tools = append(lr.Tools, g.usableTools(req.GetExtra(), l.Tools)...)
				}
			}
			lr.Cacheable = narrower(lr.Cacheable, functionCacheable(mcp.Cacheable{}))
		case *mcp.ListResourcesResult:
			if lr.NextCursor == "" && g.listsProxied(ctx, req) {
				if l, ok := g.listing(ctx, req.GetExtra()); ok {
					lr.Resources = append(lr.Resources, l.Resources...)
				}
			}
			lr.Cacheable = narrower(lr.Cacheable, functionCacheable(mcp.Cacheable{}))
		case *mcp.ListPromptsResult:
			if lr.NextCursor == "" && g.listsProxied(ctx, req) {
				if l, ok := g.listing(ctx, req.GetExtra()); ok {
					lr.Prompts = append(lr.Prompts, l.Prompts...)
				}
			}
			lr.Cacheable = narrower(lr.Cacheable, functionCacheable(mcp.Cacheable{}))
		}
		return res, nil
	}
}

// typed returns res, answered here rather than by a handler of the go-sdk,
// with the result type the go-sdk gives its handlers' results for a client
// on 2026-07-28 or later (complete, or input_required for a result asking
// for input), decoded into into: the field is unexported, so res goes
// through its JSON. Older clients get res as it is.
func typed(ss *mcp.ServerSession, res mcp.Result, inputRequired bool, into mcp.Result) (mcp.Result, error) {
	if version, _ := protocolOf(ss); version < sessionlessVersion {
		return res, nil
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("encoding a proxied result: %v", err)
	}
	kind := `"complete"`
	if inputRequired {
		kind = `"input_required"`
	}
	if len(b) > 2 {
		b = append(b[:len(b)-1], ',')
	} else {
		b = b[:1]
	}
	if err := json.Unmarshal(append(b, `"resultType":`+kind+`}`...), into); err != nil {
		return nil, fmt.Errorf("decoding a proxied result: %w", err)
	}
	return into, nil
}

// isProxiedName reports whether a called tool is a connector's: a name with
// the separator that no catalog tool has.
func (g *Gateway) isProxiedName(name string) bool {
	_, known := g.opts.Catalog.Tool(name)
	return !known && strings.Contains(name, proxySeparator)
}

// proxiedListing is connector_listing's output, with the tools' schemas
// kept as the upstream wrote them.
type proxiedListing struct {
	Tools     []*listedTool   `json:"tools"`
	Resources []*mcp.Resource `json:"resources"`
	Prompts   []*mcp.Prompt   `json:"prompts"`
}

// listedTool is a proxied tool whose schemas stay JSON text, which the
// go-sdk writes out verbatim.
type listedTool struct {
	*mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// listing returns what the caller's connectors offer, from the proxy
// function. A failure leaves them out of the list (logged): the catalog's
// own entries are listed regardless.
func (g *Gateway) listing(ctx context.Context, extra *mcp.RequestExtra) (*proxiedListing, bool) {
	raw, err := g.callProxy(ctx, extra, catalog.ConnectorListingTool, json.RawMessage(`{}`), nil)
	var l proxiedListing
	if err == nil {
		err = json.Unmarshal(raw, &l)
	}
	if err != nil {
		g.log.WarnContext(ctx, "listing the connectors' capabilities failed", "error", err)
		return nil, false
	}
	return &l, true
}

// usableTools returns the proxied tools the request's access token may
// call: a token limited by scopes calls the connectors family's read-only
// tools (the upstream's readOnlyHint) with its read scope, the others with
// its write scope.
func (g *Gateway) usableTools(extra *mcp.RequestExtra, tools []*listedTool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	a, limited := accessOf(tokenInfo(extra))
	for _, t := range tools {
		if t.Tool == nil || limited && !a.Allows(catalog.ConnectorFamily, !readOnly(t.Annotations)) {
			continue
		}
		t.Tool.InputSchema = t.InputSchema
		if len(t.OutputSchema) > 0 {
			t.Tool.OutputSchema = t.OutputSchema
		}
		out = append(out, t.Tool)
	}
	return out
}

func readOnly(a *mcp.ToolAnnotations) bool { return a != nil && a.ReadOnlyHint }

// callProxied serves tools/call of a proxied tool through connector_call,
// as callTool serves a catalog tool: the request state of an approval asked
// by elicitation is bound to the proxied name and the host's arguments, and
// a page approval's id travels from the retry's _meta.
func (g *Gateway) callProxied(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	caller, err := g.caller(req.Extra)
	if err != nil {
		return nil, err
	}
	t, _ := g.proxy(catalog.ConnectorCallTool)
	name := req.Params.Name
	in := proxiedCall{Name: name, Arguments: req.Params.Arguments, Progress: req.Params.GetProgressToken() != nil}
	in.ApprovalID, _ = req.Params.Meta[approvalMetaKey].(string)
	if a, limited := accessOf(tokenInfo(req.Extra)); limited {
		if !a.Allows(catalog.ConnectorFamily, false) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "this access token's scopes do not allow calling " + name}
		}
		in.ReadOnly = !a.Allows(catalog.ConnectorFamily, true)
	}
	args, err := in.encode()
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments: " + err.Error()}
	}
	env := &invoke.Request{
		Method: invoke.MethodCallTool, Tool: t.Name, Arguments: args,
		Caller: caller, RequestID: newID(), TraceID: traceID(headerOf(req.Extra)),
	}
	version, caps := protocolOf(req.Session)
	env.ProtocolVersion = version
	b := elicit.Binding{Caller: caller, Method: invoke.MethodCallTool, Name: name, Arguments: req.Params.Arguments}
	if env.Input, err = g.openRound(version, caps, req.Params.InputResponses, req.Params.RequestState, b); err != nil {
		return nil, err
	}
	res, err := g.serveCall(ctx, req, shownAs(t, name), env, b)
	if res != nil {
		linkApproval(res, publicBase(ctx), in.ApprovalID)
	}
	return res, err
}

// linkApproval makes the links to the approval page in res absolute under
// base, the URL the client reached the gateway at: the connectors function
// links the page by its path (connector.ApprovalURL), which a host cannot
// open and which misses a REST API's stage. The links rewritten are those
// to the approval res asks for (its _meta names it) and to retried, the
// approval the call carried; an upstream's own content that happens to hold
// such a path is never touched otherwise.
func linkApproval(res *mcp.CallToolResult, base, retried string) {
	if base == "" {
		return
	}
	asked, _ := res.Meta[approvalMetaKey].(string)
	for i, id := range []string{asked, retried} {
		if !tenant.IsKeyID(id) || i == 1 && id == asked {
			continue
		}
		path := approvalpage.Prefix + id
		if id == asked && res.Meta[approvalURLMetaKey] == path {
			res.Meta[approvalURLMetaKey] = base + path
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = strings.ReplaceAll(tc.Text, path, base+path)
			}
		}
	}
}

// proxiedCall is connector_call's input (connector.CallInput).
type proxiedCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ApprovalID string          `json:"approval_id,omitempty"`
	Progress   bool            `json:"progress,omitempty"`
	ReadOnly   bool            `json:"read_only,omitempty"`
}

func (in proxiedCall) encode() ([]byte, error) {
	if string(in.Arguments) == "null" {
		in.Arguments = nil
	}
	return json.Marshal(in)
}

// shownAs returns connector_call's entry t as a call of the proxied tool
// name shows it in a failure: named so, which names its connector, and
// taken to change state, since whether it does is the upstream's.
func shownAs(t *catalog.Tool, name string) *catalog.Tool {
	shown := *t
	shown.Name, shown.Mutates = name, true
	return &shown
}

// proxiedTool returns connector_call's entry if name is a proxied tool's.
func (g *Gateway) proxiedTool(name string) (*catalog.Tool, bool) {
	t, ok := g.proxy(catalog.ConnectorCallTool)
	return t, ok && g.isProxiedName(name)
}

// readProxied serves resources/read of a proxied URI through
// connector_resource_read.
func (g *Gateway) readProxied(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	args, _ := json.Marshal(map[string]string{"uri": req.Params.URI}) // a string always encodes
	raw, err := g.callProxy(ctx, req.Extra, catalog.ConnectorResourceTool, args, mcp.ResourceNotFoundError(req.Params.URI))
	if err != nil {
		return nil, err
	}
	var res mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("undecodable resource: %w", err)
	}
	res.Cacheable = functionCacheable(res.Cacheable)
	return &res, nil
}

// getProxiedPrompt serves prompts/get of a proxied prompt through
// connector_prompt_get. A get without arguments sends none (not null, which
// that tool's schema refuses).
func (g *Gateway) getProxiedPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args, _ := json.Marshal(struct { // strings always encode
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments,omitempty"`
	}{req.Params.Name, req.Params.Arguments})
	raw, err := g.callProxy(ctx, req.Extra, catalog.ConnectorPromptTool, args,
		&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + req.Params.Name})
	if err != nil {
		return nil, err
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("undecodable prompt: %w", err)
	}
	return &res, nil
}

// callProxy calls a tool the gateway itself calls (the connectors' proxy
// function's, prompt_get) with args for the request's caller and returns
// its structured content. Its refusals become JSON-RPC
// errors: notFound (if set) for an entry that does not exist, invalid
// params for bad input, internal errors naming the request otherwise.
func (g *Gateway) callProxy(ctx context.Context, extra *mcp.RequestExtra, tool string, args json.RawMessage, notFound error) (json.RawMessage, error) {
	caller, err := g.caller(extra)
	if err != nil {
		return nil, err
	}
	t, _ := g.opts.Catalog.Tool(tool)
	return g.callFunction(ctx, caller, traceID(headerOf(extra)), t, args, notFound)
}

// callFunction calls tool t with args for caller, as callProxy does: for
// the gateway's own needs (a listing, a thread's settings), not a host's call.
func (g *Gateway) callFunction(ctx context.Context, caller tenant.Caller, trace string, t *catalog.Tool, args json.RawMessage, notFound error) (json.RawMessage, error) {
	tool := t.Name
	env := &invoke.Request{Method: invoke.MethodCallTool, Tool: tool, Arguments: args,
		Caller: caller, RequestID: newID(), TraceID: trace}
	// Not admitted by the rate limits: these serve lists, resource reads
	// and prompts, which the limits do not count for the catalog's either.
	resp, err := g.invokeUnlimited(ctx, t.Function, env)
	if err != nil {
		g.log.ErrorContext(ctx, tool+" failed", "request_id", env.RequestID, "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s could not be served (request %s); retry", tool, env.RequestID)}
	}
	if e := resp.Error; e != nil {
		switch kind := fault.Kind(e.Kind); {
		case kind == fault.KindNotFound && notFound != nil:
			return nil, notFound
		case kind == fault.KindInvalid || kind == fault.KindNotFound:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Message}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: e.Message}
	}
	var res struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.StructuredContent) == 0 {
		return nil, errors.New(tool + " answered no result")
	}
	return res.StructuredContent, nil
}

// tokenInfo returns the token a request came with, or nil.
func tokenInfo(extra *mcp.RequestExtra) *auth.TokenInfo {
	if extra == nil {
		return nil
	}
	return extra.TokenInfo
}
