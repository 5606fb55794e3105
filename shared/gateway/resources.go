package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// resourceError is a classified failure of a resource function.
type resourceError struct {
	kind    fault.Kind
	message string
	uri     string
}

func (e *resourceError) Error() string { return e.message }

// callResource sends a resources/read or resources/list to r's function.
// Failures the function classified come back as a *resourceError.
func (g *Gateway) callResource(ctx context.Context, extra *mcp.RequestExtra, r *catalog.Resource, env *invoke.Request) (json.RawMessage, error) {
	caller, err := g.caller(extra)
	if err != nil {
		return nil, err
	}
	env.Caller, env.RequestID, env.TraceID = caller, newID(), traceID(headerOf(extra))
	resp, err := g.invoke(ctx, r.Function, env)
	if err != nil {
		g.log.ErrorContext(ctx, env.Method+" failed", "function", r.Function, "request_id", env.RequestID, "error", err)
		return nil, &resourceError{kind: fault.KindInternal, uri: env.URI,
			message: fmt.Sprintf("%s could not be served (request %s); retry", env.Method, env.RequestID)}
	}
	if e := resp.Error; e != nil {
		return nil, &resourceError{kind: fault.Kind(e.Kind), message: e.Message, uri: env.URI}
	}
	return resp.Result, nil
}

// invokeResource is callResource with failures as the JSON-RPC errors MCP
// clients expect.
func (g *Gateway) invokeResource(ctx context.Context, extra *mcp.RequestExtra, r *catalog.Resource, env *invoke.Request) (json.RawMessage, error) {
	raw, err := g.callResource(ctx, extra, r, env)
	var re *resourceError
	if errors.As(err, &re) {
		switch re.kind {
		case fault.KindNotFound:
			return nil, mcp.ResourceNotFoundError(re.uri)
		case fault.KindInvalid:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: re.message}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: re.message}
	}
	return raw, err
}

// resourceFor returns the catalog resource serving uri.
func (g *Gateway) resourceFor(uri string) (*catalog.Resource, bool) {
	for _, r := range g.opts.Catalog.Resources() {
		if r.URI == uri || (r.URITemplate != "" && g.patterns[r.URITemplate].MatchString(uri)) {
			return r, true
		}
	}
	return nil, false
}

func (g *Gateway) readResource(r *catalog.Resource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		raw, err := g.invokeResource(ctx, req.Extra, r, &invoke.Request{Method: invoke.MethodReadResource, URI: req.Params.URI})
		if err != nil {
			return nil, err
		}
		var res mcp.ReadResourceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("undecodable resource: %w", err)
		}
		return &res, nil
	}
}

// listCursor continues resources/list across the functions that enumerate
// resources: I is the lister, C the cursor within it.
type listCursor struct {
	I int    `json:"i"`
	C string `json:"c,omitempty"`
}

// listResourcesMiddleware answers resources/list with the catalog's fixed
// resources followed by the concrete resources each lister function returns
// for the caller. The go-sdk alone would list only the fixed ones.
func (g *Gateway) listResourcesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		lr, ok := req.(*mcp.ListResourcesRequest)
		if method != "resources/list" || !ok {
			return next(ctx, method, req)
		}
		var params mcp.ListResourcesParams
		if lr.Params != nil {
			params = *lr.Params
		}
		res, err := g.listResources(ctx, lr.Extra, params.Cursor)
		var re *resourceError
		if errors.As(err, &re) {
			code := int64(jsonrpc.CodeInternalError)
			if re.kind == fault.KindInvalid {
				code = jsonrpc.CodeInvalidParams
			}
			return nil, &jsonrpc.Error{Code: code, Message: re.message}
		}
		return res, err
	}
}

func (g *Gateway) listResources(ctx context.Context, extra *mcp.RequestExtra, cursor string) (*mcp.ListResourcesResult, error) {
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: catalogCacheable}
	var cur listCursor
	if cursor == "" {
		for _, r := range g.opts.Catalog.Resources() {
			if r.URI != "" {
				res.Resources = append(res.Resources, &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
			}
		}
	} else if b, err := base64.RawURLEncoding.DecodeString(cursor); err != nil || json.Unmarshal(b, &cur) != nil || cur.I < 0 || cur.I >= len(g.listers) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cursor is not one this server returned"}
	}
	for ; cur.I < len(g.listers); cur = (listCursor{I: cur.I + 1}) {
		raw, err := g.callResource(ctx, extra, g.listers[cur.I], &invoke.Request{Method: invoke.MethodListResources, Cursor: cur.C})
		if err != nil {
			return nil, err
		}
		var page mcp.ListResourcesResult
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("undecodable resource list: %w", err)
		}
		res.Resources = append(res.Resources, page.Resources...)
		res.Cacheable = narrower(res.Cacheable, functionCacheable(page.Cacheable))
		if page.NextCursor != "" {
			b, _ := json.Marshal(listCursor{I: cur.I, C: page.NextCursor})
			res.NextCursor = base64.RawURLEncoding.EncodeToString(b)
			break
		}
	}
	return res, nil
}

// templateRE turns a level-1 URI template into a regexp capturing each variable.
func templateRE(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteByte('^')
	for {
		i := strings.IndexByte(tmpl, '{')
		j := strings.IndexByte(tmpl, '}')
		if i < 0 || j < i {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:i]))
		fmt.Fprintf(&b, "(?P<%s>[^/]+)", tmpl[i+1:j])
		tmpl = tmpl[j+1:]
	}
	b.WriteByte('$')
	return regexp.MustCompile(b.String())
}

// subscribe accepts a subscription to a known resource. Switchboard is
// stateless, so it keeps no subscription and pushes no update notifications:
// clients re-read a resource to refresh it.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if _, ok := g.resourceFor(req.Params.URI); !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

// maxCompletions bounds the values one completion returns, as MCP does.
const maxCompletions = 100

// complete suggests prompt arguments, from the catalog, and resource template
// variables, from the concrete resources the caller can list (conversation
// ids for memory://conversation/{id}).
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var values []string
	switch p.Ref.Type {
	case "ref/prompt":
		if pr, ok := g.opts.Catalog.Prompt(p.Ref.Name); ok && pr.Complete != nil {
			values = pr.Complete(p.Argument.Name, p.Argument.Value)
		}
	case "ref/resource":
		for _, r := range g.listers {
			if r.URITemplate != p.Ref.URI {
				continue
			}
			re := g.patterns[r.URITemplate]
			idx := re.SubexpIndex(p.Argument.Name)
			if idx < 0 {
				break
			}
			for cursor := ""; len(values) <= maxCompletions; {
				page, err := g.listResources(ctx, req.Extra, cursor)
				if err != nil {
					return nil, err
				}
				for _, res := range page.Resources {
					if m := re.FindStringSubmatch(res.URI); m != nil && strings.HasPrefix(m[idx], p.Argument.Value) {
						values = append(values, m[idx])
					}
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
		}
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if len(values) > maxCompletions {
		values, res.Completion.HasMore = values[:maxCompletions], true
	}
	res.Completion.Values = append(res.Completion.Values, values...)
	res.Completion.Total = len(values)
	return res, nil
}
