package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// The compatibility endpoint's two servers, as the memory server seed named them.
const (
	memoryServer = "memory-server"
	toolServer   = "tool-server"
)

// The seed's error codes beyond JSON-RPC's own.
const (
	codeResourceNotFound = -32001
	codeToolExecution    = -32002
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "servers": []string{memoryServer, toolServer}, "version": Version})
}

// capabilities describes one compatibility server: memory-server offers the
// memory family as seed-style methods plus the conversation resources;
// tool-server offers every public tool through tools/list and tools/call.
func (g *Gateway) capabilities(name string) (map[string]any, bool) {
	switch name {
	case memoryServer:
		var methods []string
		for _, t := range g.opts.Catalog.Tools() {
			if t.Compat != "" && t.Visibility == catalog.Public {
				methods = append(methods, t.Compat)
			}
		}
		sort.Strings(methods)
		var resources []any
		for _, r := range g.opts.Catalog.Resources() {
			if r.Family == catalog.MemoryFamily {
				resources = append(resources, map[string]any{"uriTemplate": r.URITemplate, "name": r.Name, "description": r.Description, "mimeType": r.MIMEType})
			}
		}
		return map[string]any{"tools": []any{}, "resources": resources, "prompts": []any{}, "methods": append(methods, "resources/list", "resources/read")}, true
	case toolServer:
		return map[string]any{"tools": g.publicTools(), "resources": []any{}, "prompts": []any{}, "methods": []string{"tools/list", "tools/call"}}, true
	}
	return nil, false
}

func (g *Gateway) publicTools() []*mcp.Tool {
	var tools []*mcp.Tool
	listed := g.listed()
	for _, t := range g.opts.Catalog.Tools() {
		if t.Visibility == catalog.Public {
			tools = append(tools, listed[t.Name])
		}
	}
	return tools
}

func (g *Gateway) serveServers(w http.ResponseWriter, r *http.Request) {
	var servers []any
	for _, name := range []string{memoryServer, toolServer} {
		caps, _ := g.capabilities(name)
		servers = append(servers, map[string]any{"name": name, "capabilities": caps})
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": servers})
}

func (g *Gateway) serveCapabilities(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	caps, ok := g.capabilities(name)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("no server %q: the servers are %s and %s", name, memoryServer, toolServer)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server_name": name, "capabilities": caps})
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
}

// serveJSONRPC answers the seed's POST /jsonrpc: one JSON-RPC 2.0 request
// whose method is "<server>/<method>", such as memory-server/memory/add_message.
// A request without an id is a notification, which gets no answer; one that
// would change state is refused instead, since its caller could never learn
// whether it did.
func (g *Gateway) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if err := oneValue(body); err != nil {
		writeRPC(w, nil, nil, &rpcError{Code: jsonrpc.CodeParseError, Message: "parse error: " + jsonProblem("the request body", err)})
		return
	}
	usage := `want one request, {"jsonrpc":"2.0","method":"<server>/<method>","params":{...},"id":...}`
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeRPC(w, nil, nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + jsonProblem("the request", err) + "; " + usage})
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeRPC(w, req.ID, nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + usage})
		return
	}
	if len(req.ID) == 0 {
		if tool, ok := g.compatMutates(req.Method, req.Params); ok {
			writeRPC(w, nil, nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
				"invalid request: a request without an id is a notification, which gets no answer, and %s changes state; nothing was done: send it with an id", tool)})
			return
		}
		g.dispatchCompat(r, req.Method, req.Params)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	res, rerr := g.dispatchCompat(r, req.Method, req.Params)
	writeRPC(w, req.ID, res, rerr)
}

// compatMutates reports whether the compatibility method would call a tool
// that changes state, and which.
func (g *Gateway) compatMutates(method string, params json.RawMessage) (string, bool) {
	server, name, _ := strings.Cut(method, "/")
	switch {
	case server == memoryServer:
		for _, t := range g.opts.Catalog.Tools() {
			if t.Compat == name && t.Visibility == catalog.Public {
				return t.Name, t.Mutates
			}
		}
	case server == toolServer && name == "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(params, &p)
		if t, ok := g.opts.Catalog.Tool(p.Name); ok && t.Visibility == catalog.Public {
			return t.Name, t.Mutates
		}
	}
	return "", false
}

func (g *Gateway) dispatchCompat(r *http.Request, method string, params json.RawMessage) (any, *rpcError) {
	server, name, ok := strings.Cut(method, "/")
	notFound := &rpcError{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found; GET /servers lists the methods", method)}
	if !ok {
		return nil, notFound
	}
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	switch {
	case server == memoryServer && name == "resources/list":
		return g.compatResources(r, invoke.MethodListResources, params)
	case server == memoryServer && name == "resources/read":
		return g.compatResources(r, invoke.MethodReadResource, params)
	case server == memoryServer:
		for _, t := range g.opts.Catalog.Tools() {
			if t.Compat == name && t.Visibility == catalog.Public {
				res, rerr := g.compatCall(r, t, params)
				if rerr != nil {
					return nil, rerr
				}
				return res.StructuredContent, nil
			}
		}
	case server == toolServer && name == "tools/list":
		extra := extraFrom(r)
		tools, _ := g.visibleTools(extra, g.publicTools())
		tools = g.permitted(keyProfile(extra.TokenInfo), tools)
		return map[string]any{"tools": tools}, nil
	case server == toolServer && name == "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + jsonProblem("params", err)}
		}
		t, ok := g.opts.Catalog.Tool(p.Name)
		if !ok || t.Visibility != catalog.Public {
			return nil, &rpcError{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q; tool-server/tools/list lists them", p.Name)}
		}
		return g.compatCall(r, t, p.Arguments)
	}
	return nil, notFound
}

// compatCall calls a tool for the compatibility endpoint and maps failures
// onto the seed's codes: bad arguments -32602, a missing conversation -32001,
// anything else the tool reports -32002.
func (g *Gateway) compatCall(r *http.Request, t *catalog.Tool, args json.RawMessage) (*mcp.CallToolResult, *rpcError) {
	extra := extraFrom(r)
	caller, err := g.caller(extra)
	if err != nil {
		return nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
	}
	if !allows(extra, t) {
		return nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: "this access token's scopes do not allow calling " + t.Name}
	}
	if key := keyProfile(extra.TokenInfo); !key.Allows(t.Name, t.Group) {
		return nil, &rpcError{Code: jsonrpc.CodeInvalidRequest, Message: notEnabled(key, t.Name, t.Group, "")}
	}
	env := &invoke.Request{Method: invoke.MethodCallTool, Tool: t.Name, Arguments: args, Caller: caller, RequestID: newID(), TraceID: traceID(r.Header),
		Profile: heldTo(t, keyProfile(extra.TokenInfo))}
	resp, err := g.invoke(r.Context(), t.Function, env)
	if err != nil {
		g.log.ErrorContext(r.Context(), "compat call failed", "tool", t.Name, "request_id", env.RequestID, "error", err)
		return nil, &rpcError{Code: codeToolExecution, Message: functionFailure(t, env, err).Content[0].(*mcp.TextContent).Text}
	}
	if e := resp.Error; e != nil {
		data := map[string]any{"tool": t.Name, "trace_id": env.TraceID}
		if e.Field != "" {
			data["field"] = e.Field
		}
		switch fault.Kind(e.Kind) {
		case fault.KindInvalid:
			return nil, &rpcError{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + e.Message, Data: data}
		case fault.KindNotFound:
			return nil, &rpcError{Code: codeResourceNotFound, Message: e.Message, Data: data}
		}
		return nil, &rpcError{Code: codeToolExecution, Message: e.Message, Data: data}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, &rpcError{Code: jsonrpc.CodeInternalError, Message: "undecodable tool result"}
	}
	return &res, nil
}

func (g *Gateway) compatResources(r *http.Request, method string, params json.RawMessage) (any, *rpcError) {
	var p struct {
		URI    string `json:"uri"`
		Cursor string `json:"cursor"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + jsonProblem("params", err)}
	}
	extra := extraFrom(r)
	if method == invoke.MethodListResources {
		res, err := g.listResources(r.Context(), extra, p.Cursor)
		if err != nil {
			return nil, compatError(err)
		}
		out := map[string]any{"resources": res.Resources} // the seed's shape
		if res.NextCursor != "" {
			out["nextCursor"] = res.NextCursor
		}
		return out, nil
	}
	res, ok := g.resourceFor(p.URI)
	if !ok {
		return nil, &rpcError{Code: codeResourceNotFound, Message: fmt.Sprintf("resource %q not found; memory-server/resources/list lists them", p.URI)}
	}
	raw, err := g.callResource(r.Context(), extra, res, &invoke.Request{Method: invoke.MethodReadResource, URI: p.URI})
	if err != nil {
		return nil, compatError(err)
	}
	var read mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &read); err != nil {
		return nil, &rpcError{Code: jsonrpc.CodeInternalError, Message: "undecodable resource"}
	}
	return map[string]any{"contents": read.Contents}, nil // the seed's shape
}

// compatError maps a resource failure onto the seed's codes.
func compatError(err error) *rpcError {
	var re *resourceError
	if errors.As(err, &re) {
		switch re.kind {
		case fault.KindNotFound:
			return &rpcError{Code: codeResourceNotFound, Message: re.message}
		case fault.KindInvalid:
			return &rpcError{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + re.message}
		}
		return &rpcError{Code: jsonrpc.CodeInternalError, Message: re.message}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &rpcError{Code: int(je.Code), Message: je.Message}
	}
	return &rpcError{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, rerr *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		body["error"] = rerr
	} else {
		body["result"] = result
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
