package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Tool profiles (package profile): a host sees in tools/list, finds with
// tool_search and may call only the tools its profile enables. The profile
// is its API key's (apikey.Key.Profile; the zero profile allows every tool),
// narrowed, when a request names a thread in
// _meta["switchboard.dev/thread_id"], to the groups that thread's settings
// enable (tools_enabled, read through the settings_get tool). A tool's group
// is a catalog fact (catalog.Tool.Group; a proxied tool's is connector_call's).
// Internal tools are never listed nor callable, whatever the profile.
// profilesMiddleware holds the go-sdk's lists and calls to it; the fast path
// hands a call the key's profile refuses to the go-sdk (a call naming a
// thread never takes the fast path: it does not read that _meta key), and
// the compatibility endpoint checks the key's profile itself.

// profileKey is where an API key's profile travels in a TokenInfo's Extra,
// when it limits anything.
const profileKey = "switchboard.profile"

// ThreadMetaKey is the _meta key of a request that names the thread it acts
// in, whose settings narrow its tools.
const ThreadMetaKey = "switchboard.dev/thread_id"

// The settings family's tools (issue 14): the gateway reads a thread's
// tools_enabled with the first and forgets what it cached of a tenant's
// threads when the second is called through it.
const (
	settingsGetTool    = "settings_get"
	settingsUpdateTool = "settings_update"
)

// ThreadTools reads the tool groups a thread enables.
type ThreadTools interface {
	// ThreadTools returns the groups thread enables for caller, its
	// settings' tools_enabled. An error whose kind is invalid_argument is
	// the caller's (a malformed thread id).
	ThreadTools(ctx context.Context, caller tenant.Caller, thread string) ([]string, error)
}

// withScopes returns p narrowed to the groups scopes enable
// (profile.GroupScopePrefix), if they name any: an access token's profile,
// or an API key's with scopes.
func withScopes(p profile.Profile, scopes []string) profile.Profile {
	if s, limited := profile.FromScopes(scopes); limited {
		return p.Narrowed(s.Groups)
	}
	return p
}

// keyProfile returns the profile of the key or token a request came with.
func keyProfile(info *auth.TokenInfo) profile.Profile {
	if info == nil {
		return profile.Profile{}
	}
	p, _ := info.Extra[profileKey].(profile.Profile)
	return p
}

// requestProfile returns the profile a request is held to: its key's,
// narrowed to the groups of the thread meta names, if any, and that
// thread's id.
func (g *Gateway) requestProfile(ctx context.Context, extra *mcp.RequestExtra, meta mcp.Meta) (profile.Profile, string, error) {
	p := keyProfile(tokenInfo(extra))
	thread, err := metaThread(meta)
	if err != nil || thread == "" || g.threads == nil {
		return p, "", err
	}
	caller, err := g.caller(extra)
	if err != nil {
		return p, "", err
	}
	groups, err := g.threads.ThreadTools(ctx, caller, thread)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams {
			return p, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("_meta[%q]: %s", ThreadMetaKey, rpc.Message)}
		}
		g.log.ErrorContext(ctx, "reading a thread's settings failed", "thread", thread, "error", err)
		return p, "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the settings of thread %q, which decide its tools, could not be read; retry", thread)}
	}
	return p.Narrowed(groups), thread, nil
}

// metaThread returns the thread meta names, "" for none: the thread whose
// settings narrow a request's tools, and which a call's function receives
// (invoke.Request.Thread). A thread id that is not one is refused, naming
// the key, as tenant.ValidateThread words it.
func metaThread(meta mcp.Meta) (string, error) {
	v, named := meta[ThreadMetaKey]
	if !named {
		return "", nil
	}
	thread, ok := v.(string)
	if !ok {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("_meta[%q] must be a thread id, a string", ThreadMetaKey)}
	}
	if err := tenant.ValidateThread(fmt.Sprintf("_meta[%q]", ThreadMetaKey), thread); err != nil {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return thread, nil
}

// groupOf returns the group of the tool a host lists or calls by name, and
// whether the gateway serves such a tool: a public catalog tool, tool_search,
// or a connector's proxied tool.
func (g *Gateway) groupOf(name string) (string, bool) {
	if t, ok := g.opts.Catalog.Tool(name); ok {
		return t.Group, t.Visibility == catalog.Public
	}
	if name == ToolSearchName {
		return "", true
	}
	if t, ok := g.proxiedTool(name); ok {
		return t.Group, true
	}
	return "", false
}

// heldTo returns the profile an envelope for tool t carries: p, when t's
// function calls tools on the caller's behalf (catalog.Tool.Invokes: the
// chat), which then offers and calls only those p allows; nil when it calls
// none, or p allows every tool.
func heldTo(t *catalog.Tool, p profile.Profile) *profile.Profile {
	if len(t.Invokes) == 0 || p.IsZero() {
		return nil
	}
	return &p
}

// permitted returns the tools of tools p allows, in order.
func (g *Gateway) permitted(p profile.Profile, tools []*mcp.Tool) []*mcp.Tool {
	if p.IsZero() {
		return tools
	}
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if group, served := g.groupOf(t.Name); served && p.Allows(t.Name, group) {
			out = append(out, t)
		}
	}
	return out
}

// notEnabled says why a call is refused that the key's profile, or the
// thread's settings, do not allow.
func notEnabled(key profile.Profile, name, group, thread string) string {
	return entryNotEnabled(key, "tool "+name, "tools/list shows the tools it may call", name, group, thread)
}

// entryNotEnabled says why a request for entry (a tool, resource or prompt,
// held as name in group) is refused that the key's profile, or the thread's
// settings, do not allow; lists says where the allowed ones are listed.
func entryNotEnabled(key profile.Profile, entry, lists, name, group, thread string) string {
	msg := fmt.Sprintf("%s is not enabled for this API key (its profile); %s", entry, lists)
	if key.Allows(name, group) {
		msg = fmt.Sprintf("%s is in the group %q, which thread %q does not enable; settings_update's tools_enabled enables it", entry, group, thread)
	}
	return msg
}

// Resources and prompts are held to the request's profile as tools are
// (issue 14): a connector's proxied prompt <connector>__<prompt> by that
// name in connector_call's group (Connectors); a connector's proxied
// resource connector://<connector>/<uri> by its connector's prefix
// <connector>__ in that group, so that a pattern naming a whole connector
// (github__*) enables or denies its tools, prompts and resources alike;
// the catalog's prompts by their names in their groups
// (catalog.Prompt.Group: seed 000's vector search prompts are in Vector
// Search). The catalog's resources (the memory family's conversations) are
// in no group and named by no pattern: every profile enables them, so
// resources/templates/list, which lists only them, is the same for every
// caller. A refused read or get is decided by the name alone, before
// anything is looked up, so its error reads the same whether or not the
// entry exists (it reveals nothing a list hides) and says what enables it.

// promptGroup returns the group of the prompt named name, and whether the
// gateway serves such a prompt: a catalog prompt, or a connector's.
func (g *Gateway) promptGroup(name string) (string, bool) {
	if p, ok := g.opts.Catalog.Prompt(name); ok {
		return p.Group, true
	}
	if call, ok := g.proxy(catalog.ConnectorCallTool); ok && strings.Contains(name, proxySeparator) {
		return call.Group, true
	}
	return "", false
}

// heldResource returns the name and group a profile holds the resource at
// uri to, and whether it holds it at all (only a connector's).
func (g *Gateway) heldResource(uri string) (name, group string, held bool) {
	rest, proxied := strings.CutPrefix(uri, proxiedResourceScheme)
	call, proxies := g.proxy(catalog.ConnectorCallTool)
	if !proxied || !proxies {
		return "", "", false
	}
	connector, _, _ := strings.Cut(rest, "/")
	return connector + proxySeparator, call.Group, true
}

// allowsResource reports whether p enables the resource at uri.
func (g *Gateway) allowsResource(p profile.Profile, uri string) bool {
	name, group, held := g.heldResource(uri)
	return !held || p.Allows(name, group)
}

// allowsPrompt reports whether p enables the prompt named name.
func (g *Gateway) allowsPrompt(p profile.Profile, name string) bool {
	group, served := g.promptGroup(name)
	return !served || p.Allows(name, group)
}

// refuseEntry returns the error refusing a request for entry, held as name
// in group, if the request's profile does not enable it.
func (g *Gateway) refuseEntry(ctx context.Context, extra *mcp.RequestExtra, meta mcp.Meta, entry, lists, name, group string) error {
	p, thread, err := g.requestProfile(ctx, extra, meta)
	if err != nil || p.Allows(name, group) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: entryNotEnabled(keyProfile(tokenInfo(extra)), entry, lists, name, group, thread)}
}

// paramsMeta returns the _meta of a request's params, nil without params.
func paramsMeta(req mcp.Request) mcp.Meta {
	switch r := req.(type) {
	case *mcp.ListToolsRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.ListResourcesRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.ListPromptsRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	}
	return nil
}

// filtered holds a list's result to p: it keeps the tools, resources and
// prompts p enables, and makes the answer the caller's own.
func (g *Gateway) filtered(p profile.Profile, res mcp.Result) {
	private := functionCacheable(mcp.Cacheable{})
	switch l := res.(type) {
	case *mcp.ListToolsResult:
		l.Tools = g.permitted(p, l.Tools)
		l.Cacheable = narrower(l.Cacheable, private)
	case *mcp.ListResourcesResult:
		l.Resources = slices.DeleteFunc(l.Resources, func(r *mcp.Resource) bool { return !g.allowsResource(p, r.URI) })
		l.Cacheable = narrower(l.Cacheable, private)
	case *mcp.ListPromptsResult:
		l.Prompts = slices.DeleteFunc(l.Prompts, func(pr *mcp.Prompt) bool { return !g.allowsPrompt(p, pr.Name) })
		l.Cacheable = narrower(l.Cacheable, private)
	}
}

// profilesMiddleware holds tools, resources and prompts to the request's
// profile: a list shows only those it enables (an answer that is then the
// caller's own), a call, read or get of another is refused before it runs.
// It is the outermost middleware, so that it sees the connectors' entries
// too.
func (g *Gateway) profilesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			group, served := g.groupOf(r.Params.Name)
			if !served {
				break // the go-sdk answers unknown tools
			}
			p, thread, err := g.requestProfile(ctx, r.Extra, r.Params.Meta)
			if err != nil {
				return nil, err
			}
			if !p.Allows(r.Params.Name, group) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: notEnabled(keyProfile(tokenInfo(r.Extra)), r.Params.Name, group, thread)}
			}
			if r.Params.Name == settingsUpdateTool {
				defer g.forgetThreads(r.Extra)
			}
		case *mcp.ReadResourceRequest:
			if name, group, held := g.heldResource(r.Params.URI); held {
				if err := g.refuseEntry(ctx, r.Extra, r.Params.Meta, "resource "+r.Params.URI, "resources/list shows the resources it may read", name, group); err != nil {
					return nil, err
				}
			}
		case *mcp.GetPromptRequest:
			if group, served := g.promptGroup(r.Params.Name); served {
				if err := g.refuseEntry(ctx, r.Extra, r.Params.Meta, "prompt "+r.Params.Name, "prompts/list shows the prompts it may get", r.Params.Name, group); err != nil {
					return nil, err
				}
			}
		case *mcp.ListToolsRequest, *mcp.ListResourcesRequest, *mcp.ListPromptsRequest:
			p, _, err := g.requestProfile(ctx, req.GetExtra(), paramsMeta(req))
			if err != nil {
				return nil, err
			}
			res, err := next(ctx, method, req)
			if err == nil && !p.IsZero() {
				g.filtered(p, res)
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// listsProxied reports whether a list request's profile enables the
// connectors' entries, so that one that does not costs no listing
// (profilesMiddleware has read its thread's settings, and refused the
// request if they could not be read).
func (g *Gateway) listsProxied(ctx context.Context, req mcp.Request) bool {
	call, proxies := g.proxy(catalog.ConnectorCallTool)
	if !proxies {
		return true
	}
	p, _, err := g.requestProfile(ctx, req.GetExtra(), paramsMeta(req))
	return err != nil || p.EnablesGroup(call.Group)
}

// forgetThreads drops what the gateway cached of the settings of the
// caller's tenant's threads, after a settings_update through it.
func (g *Gateway) forgetThreads(extra *mcp.RequestExtra) {
	if s, ok := g.threads.(*settingsThreads); ok {
		if caller, err := g.caller(extra); err == nil {
			s.forget(caller.Tenant)
		}
	}
}

// threadTTL is how long a thread's tools_enabled is reused. A chat turn
// lists the tools and then calls some, each naming the thread: without it
// each would invoke settings_get (a Lambda invocation and a table read on
// AWS). A change made through another instance is seen within it; one made
// through this instance at once (forgetThreads).
const threadTTL = 5 * time.Second

// maxThreads bounds the threads cached at once.
const maxThreads = 1024

// settingsThreads is the [ThreadTools] of a catalog that has settings_get:
// it invokes that tool as the caller, as the connectors' listing is read,
// and keeps each answer for [threadTTL].
type settingsThreads struct {
	g    *Gateway
	tool *catalog.Tool
	now  func() time.Time
	mu   sync.Mutex
	m    map[threadKey]cachedThread
}

type threadKey struct{ tenant, principal, thread string }

type cachedThread struct {
	groups []string
	until  time.Time
}

// ThreadTools implements [ThreadTools].
func (s *settingsThreads) ThreadTools(ctx context.Context, caller tenant.Caller, thread string) ([]string, error) {
	key := threadKey{caller.Tenant, caller.Principal, thread}
	now := s.now()
	s.mu.Lock()
	e, ok := s.m[key]
	s.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.groups, nil
	}
	args, _ := json.Marshal(map[string]string{"thread_id": thread}) // a string always encodes
	raw, err := s.g.callFunction(ctx, caller, newID(), s.tool, args, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		ToolsEnabled *[]string `json:"tools_enabled"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.ToolsEnabled == nil {
		return nil, fmt.Errorf("%s answered no tools_enabled (%v)", s.tool.Name, err)
	}
	s.mu.Lock()
	if len(s.m) >= maxThreads {
		clear(s.m)
	}
	s.m[key] = cachedThread{groups: *out.ToolsEnabled, until: now.Add(threadTTL)}
	s.mu.Unlock()
	return *out.ToolsEnabled, nil
}

// forget drops the cached threads of tenant t.
func (s *settingsThreads) forget(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if k.tenant == t {
			delete(s.m, k)
		}
	}
}

// threadTools returns the [ThreadTools] of opts: its own, or one over the
// catalog's settings_get, or nil (threads narrow nothing) without either.
func (g *Gateway) threadTools() ThreadTools {
	if g.opts.Threads != nil {
		return g.opts.Threads
	}
	t, ok := g.opts.Catalog.Tool(settingsGetTool)
	if !ok {
		return nil
	}
	return &settingsThreads{g: g, tool: t, now: time.Now, m: map[threadKey]cachedThread{}}
}
