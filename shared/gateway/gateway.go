// Package gateway is Switchboard's front door: it builds the MCP server from
// the catalog on the official go-sdk and serves it over stateless Streamable
// HTTP (with SSE responses, so progress and log notifications reach the
// client) and over stdio, alongside the memory server seed's compatibility
// endpoints (/health, /servers, POST /jsonrpc). tools/list, prompts and
// resource templates are answered from the catalog; tools/call and resource
// reads go through the [invoke.Invoker] to the function that serves them;
// a tenant's connectors' tools, resources and prompts are listed and served
// through the connectors' proxy function (connectors.go). On
// protocol 2026-07-28 a tool or prompt may ask the client for input (package
// elicit): the gateway seals and opens the request states (input.go).
//
//	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: inv, Keys: keys})
//	http.ListenAndServe("127.0.0.1:8080", gw.Handler()) // MCP at /mcp
package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/toolsearch"
)

// DefaultMaxBodyBytes is the request body limit when [Options.MaxBodyBytes] is zero.
const DefaultMaxBodyBytes = catalog.DefaultRequestBytes

// Version is reported as the server version to MCP clients.
const Version = "0.1.0"

// implementation is how the server introduces itself to MCP clients.
var implementation = mcp.Implementation{Name: "switchboard", Title: "Switchboard", Version: Version}

// Authenticator maps a bearer key to the caller it stands for.
// [github.com/switchboard-dev/switchboard/shared/apikey.Keys] implements it.
type Authenticator interface {
	// Verify returns the key (its caller and expiry), or an error wrapping
	// apikey.ErrInvalidKey for a key that is not valid.
	Verify(ctx context.Context, key string) (apikey.Key, error)
}

// Options configures [New].
type Options struct {
	Catalog *catalog.Catalog
	Invoker invoke.Invoker
	// Keys checks bearer keys. If nil, only Anonymous callers are served.
	Keys Authenticator
	// KeyCacheTTL is how long a verified key is trusted before Keys checks it
	// again, so how long a revoked key may still work; a key stops working at
	// its expiry regardless. If zero, defaults to [DefaultKeyCacheTTL]; if
	// negative, every request is checked (the local server, whose table is
	// in process: a revocation takes effect at once).
	KeyCacheTTL time.Duration
	// Anonymous is the caller of requests without a bearer key. If nil, such
	// requests are refused with 401.
	Anonymous *tenant.Caller
	// AllowedOrigins lists the browser origins (scheme://host[:port]) allowed
	// to call; a request with any other Origin header is refused with 403.
	// Requests without an Origin header (not from a browser) are not affected.
	AllowedOrigins []string
	// AllowLocalOrigins also allows any http://localhost, 127.0.0.1 or [::1] origin.
	AllowLocalOrigins bool
	// MaxBodyBytes limits request bodies, except calls of tools with a
	// larger limit of their own ([catalog.Tool.MaxRequestBytes]). If zero,
	// defaults to [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// Logger receives one line per request. If nil, logs are discarded.
	Logger *slog.Logger
	// RequestStates seals and opens the request states of calls that ask
	// the client for input (package elicit). If nil, a key made at start-up
	// is used: its states then outlive neither the process nor reach another
	// instance, which suits tests and a single local process only.
	RequestStates *elicit.Keyring
	// Approvals reads and decides the approvals of connector calls. If set,
	// the gateway serves their page at /approvals/<id> (package approvalpage).
	Approvals approvalpage.Approver
	// Limiter holds each caller to its tenant's and principal's limits
	// before a tool's function is invoked (admit.go). If nil, calls are not
	// limited.
	Limiter *ratelimit.Limiter
	// Metrics receives a record of each call the Limiter refuses (a throttle
	// of its tool's family: the function does not run to record it). If
	// nil, none is written.
	Metrics *metrics.Emitter
	// Threads reads the tool groups a thread enables, for requests that
	// name one (profiles.go). If nil, the catalog's settings_get tool is
	// invoked, when the catalog has it; without it threads narrow nothing.
	Threads ThreadTools
	// ToolEmbedder, if set, embeds tools and queries for tool_search, whose
	// ranking then fuses embeddings with BM25 (search.go). If nil, it ranks
	// by BM25 alone.
	ToolEmbedder provider.Embedder
	// ToolEmbedFunction, if ToolEmbedder is nil, has tool_search embed
	// through the catalog's vector_embed_texts function, for the caller's
	// tenant (embed.go): the deployed gateway, which links no provider's
	// client, when the stack configures a hosted embedder.
	ToolEmbedFunction bool
	// OAuth, if set, also admits JWT access tokens, serves the protected
	// resource metadata for them, and the authorization-server facade if
	// it has one (oauth.go). If nil, API keys are the only bearer tokens.
	OAuth *OAuth
}

// Gateway serves the catalog's tools, resources and prompts. It is safe for
// concurrent use.
type Gateway struct {
	opts     Options
	log      *slog.Logger
	server   *mcp.Server
	keys     Authenticator
	states   *elicit.Keyring
	listers  []*catalog.Resource       // resources whose function enumerates concrete ones
	patterns map[string]*regexp.Regexp // URI template -> its matcher
	// listed returns the public tools as tools/list shows them, with their
	// schemas, by name; see listToolsMiddleware.
	listed func() map[string]*mcp.Tool
	// maxBody is the largest body of any request; budget bounds the large
	// bodies held at once (see limits.go).
	maxBody int64
	budget  *semaphore.Weighted
	// threads reads threads' tool groups (profiles.go); nil if none can be.
	threads ThreadTools
	// searcher ranks tools for tool_search (search.go).
	searcher *toolsearch.Searcher
	// lexical ranks by BM25 alone, when the searcher's embedder fails.
	lexical *toolsearch.Searcher
}

// New builds the gateway's MCP server from opts.Catalog.
func New(opts Options) (*Gateway, error) {
	if opts.Catalog == nil || opts.Invoker == nil {
		return nil, errors.New("gateway: Catalog and Invoker are required")
	}
	if opts.Keys == nil && opts.Anonymous == nil && opts.OAuth == nil {
		return nil, errors.New("gateway: with no Keys nor OAuth, an Anonymous caller is required")
	}
	if opts.Anonymous != nil {
		if err := tenant.Validate(opts.Anonymous.Tenant); err != nil {
			return nil, fmt.Errorf("gateway: anonymous caller: %w", err)
		}
	}
	if o := opts.OAuth; o != nil && (o.Validator == nil || o.Metadata.Resource == "") {
		return nil, errors.New("gateway: OAuth needs a Validator and the resource's metadata")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	for _, o := range opts.AllowedOrigins {
		if !strings.Contains(o, "://") || strings.HasSuffix(o, "/") {
			return nil, fmt.Errorf("gateway: allowed origin %q must look like https://example.com", o)
		}
	}
	g := &Gateway{opts: opts, log: opts.Logger, states: opts.RequestStates, patterns: map[string]*regexp.Regexp{}}
	g.maxBody = max(opts.MaxBodyBytes, opts.Catalog.MaxRequestBytes())
	g.budget = semaphore.NewWeighted(max(bodyBudget, g.maxBody))
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.states == nil {
		var err error
		if g.states, err = elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()}); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	if opts.Keys != nil {
		g.keys = opts.Keys
		if opts.KeyCacheTTL >= 0 {
			g.keys = newKeyCache(opts.Keys, cmp.Or(opts.KeyCacheTTL, DefaultKeyCacheTTL))
		}
	}
	g.listed = sync.OnceValue(g.listedTools)
	g.threads, g.searcher = g.threadTools(), toolsearch.New(g.toolEmbedder())
	g.lexical = toolsearch.New(nil)
	g.server = g.buildServer()
	return g, nil
}

// Server returns the MCP server, for transports other than HTTP and stdio.
func (g *Gateway) Server() *mcp.Server { return g.server }

// ServeStdio serves MCP over stdin and stdout until the client disconnects or
// ctx is done. Every request acts for the Anonymous caller.
func (g *Gateway) ServeStdio(ctx context.Context) error {
	if g.opts.Anonymous == nil {
		return errors.New("gateway: stdio needs an Anonymous caller")
	}
	return g.server.Run(ctx, &mcp.StdioTransport{})
}

func (g *Gateway) buildServer() *mcp.Server {
	cat := g.opts.Catalog
	caps := &mcp.ServerCapabilities{
		//lint:ignore SA1019 logging (deprecated by SEP-2577) is still what clients of protocols before 2026-07-28 use
		Logging:   &mcp.LoggingCapabilities{},
		Tools:     &mcp.ToolCapabilities{}, // stateless: the list never changes under a session
		Resources: &mcp.ResourceCapabilities{Subscribe: true},
	}
	if _, proxies := g.proxy(catalog.ConnectorPromptTool); len(cat.Prompts()) > 0 || proxies {
		caps.Prompts = &mcp.PromptCapabilities{}
	}
	s := mcp.NewServer(&implementation, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             g.log,
		Capabilities:       caps,
		CompletionHandler:  g.complete,
		SetCacheable:       setCacheable,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	// AddTool checks a schema given as JSON by decoding it whole, twice for
	// an input schema and once for an output schema, and one given as a
	// *jsonschema.Schema by encoding it, which is slower still: ~10 ms of a
	// cold start for the catalog's tools. So the tools are added with the
	// smallest input schema AddTool accepts, and listToolsMiddleware lists
	// them with their own (the catalog tests check that each is an object).
	// The go-sdk uses a raw tool's input schema only to find x-mcp-header
	// annotations, which the catalog's schemas have none of; validating the
	// arguments is each tool function's job (lambdafn.Tool).
	//
	// Even so, adding them takes most of a millisecond (each check decodes
	// into fresh 32 KiB buffers), and only tools/list and tools/call read
	// them: addToolsMiddleware adds them when the first of those arrives,
	// so that an instance whose first request is initialize, or a call the
	// fast path answers, does not wait for it (issue 11). The capabilities
	// above announce the tools either way.
	anyObject := &jsonschema.Schema{Type: "object"}
	addTools := sync.OnceFunc(func() {
		for _, t := range cat.Tools() {
			if t.Visibility != catalog.Public {
				continue
			}
			s.AddTool(&mcp.Tool{
				Name: t.Name, Title: t.Title, Description: t.Description,
				InputSchema: anyObject, Annotations: t.Annotations,
			}, g.callTool(t))
		}
		g.addToolSearch(s)
	})
	s.AddReceivingMiddleware(addToolsMiddleware(addTools))
	for _, r := range cat.Resources() {
		if r.URITemplate != "" {
			g.patterns[r.URITemplate] = templateRE(r.URITemplate)
			s.AddResourceTemplate(&mcp.ResourceTemplate{
				URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType,
			}, g.readResource(r))
		} else {
			s.AddResource(&mcp.Resource{
				URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType,
			}, g.readResource(r))
		}
		if r.Lists {
			g.listers = append(g.listers, r)
		}
	}
	for _, p := range cat.Prompts() {
		s.AddPrompt(&mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments}, g.getPrompt(p))
	}
	s.AddReceivingMiddleware(g.listResourcesMiddleware, g.listToolsMiddleware)
	s.AddReceivingMiddleware(g.connectorsMiddleware) // connectors.go
	s.AddReceivingMiddleware(g.profilesMiddleware)   // outermost: profiles.go
	return s
}

// addToolsMiddleware calls addTools before the go-sdk serves the first
// request that reads the server's tools (tools/list, tools/call).
func addToolsMiddleware(addTools func()) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" || method == "tools/call" {
				addTools()
			}
			return next(ctx, method, req)
		}
	}
}

// listedTools returns the public tools as hosts see them, by name: with the
// JSON of their schemas, which for the catalog's tools comes from its
// snapshot rather than from building and encoding them.
func (g *Gateway) listedTools() map[string]*mcp.Tool {
	tools := map[string]*mcp.Tool{}
	for _, t := range g.opts.Catalog.Tools() {
		if t.Visibility == catalog.Public {
			tools[t.Name] = &mcp.Tool{
				Name: t.Name, Title: t.Title, Description: t.Description,
				InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations,
			}
		}
	}
	return tools
}

// listToolsMiddleware puts each tool's schemas in the go-sdk's answer to
// tools/list, which lists the tools as buildServer added them, without.
// The go-sdk keeps paging and everything else the answer holds.
func (g *Gateway) listToolsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lt, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok {
			return res, err
		}
		listed := g.listed()
		for i, t := range lt.Tools { // a new slice each call, of the added tools, which stay as they are
			if full, ok := listed[t.Name]; ok {
				lt.Tools[i] = full
			}
		}
		// A caller whose token is limited to some scopes sees only the tools
		// it may call; that answer is its own (oauth.go).
		if visible, limited := g.visibleTools(req.GetExtra(), lt.Tools); limited {
			lt.Tools = visible
			lt.Cacheable.CacheScope = scopePrivate
		}
		return lt, nil
	}
}

// caller returns who an MCP request acts for: the principal its bearer key
// stands for, or the anonymous caller.
func (g *Gateway) caller(extra *mcp.RequestExtra) (tenant.Caller, error) {
	if extra != nil && extra.TokenInfo != nil {
		if c, ok := extra.TokenInfo.Extra[callerKey].(tenant.Caller); ok {
			return c, nil
		}
	}
	if g.opts.Anonymous != nil {
		return *g.opts.Anonymous, nil
	}
	return tenant.Caller{}, errors.New("request is not authenticated")
}

// traceID returns the trace a request belongs to: the trace-id of its W3C
// traceparent header, or a new one.
func traceID(h http.Header) string {
	if tp := h.Get("Traceparent"); tp != "" {
		// traceparent: version-traceid-parentid-flags
		parts := strings.Split(tp, "-")
		if len(parts) == 4 && len(parts[1]) == 32 && strings.Trim(parts[1], "0123456789abcdef") == "" && strings.Trim(parts[1], "0") != "" {
			return parts[1]
		}
	}
	return newID()
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func headerOf(extra *mcp.RequestExtra) http.Header {
	if extra == nil {
		return nil
	}
	return extra.Header
}
