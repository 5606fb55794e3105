package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// callerKey is where the authenticated caller travels in a TokenInfo's Extra.
const callerKey = "switchboard.caller"

// Handler returns the gateway's HTTP handler: MCP at /mcp, the compatibility
// endpoints, and the RFC 9728 protected-resource metadata.
func (g *Gateway) Handler() http.Handler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: g.maxBody,
		Logger:              g.log,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.guard(g.postOnly(keepRequest(g.fastCalls(g.checkJSON(streamable))))))
	mux.Handle("/jsonrpc", g.guard(g.postOnly(http.HandlerFunc(g.serveJSONRPC))))
	if _, ok := g.opts.Catalog.Tool(catalog.ChatTool); ok {
		mux.Handle(ChatCompletionsPath, g.guard(g.postOnly(keepRequest(http.HandlerFunc(g.serveChatCompletions)))))
	}
	mux.HandleFunc("GET /{$}", g.serveHome)
	mux.HandleFunc("GET /health", g.serveHealth)
	// The servers' listings describe every public tool: callers of /mcp
	// only, as tools/list is; /health stays open to health checks.
	mux.Handle("GET /servers", g.checkOrigin(g.authenticate(http.HandlerFunc(g.serveServers))))
	mux.Handle("GET /servers/{name}/capabilities", g.checkOrigin(g.authenticate(http.HandlerFunc(g.serveCapabilities))))
	if g.opts.Approvals != nil {
		page, err := approvalpage.New(approvalpage.Options{Approver: g.opts.Approvals, Authenticate: g.Authenticate,
			Tokens: g.states, AllowOrigin: g.originAllowed, Logger: g.log})
		if err != nil {
			panic("gateway: " + err.Error()) // every option is set
		}
		mux.Handle(approvalpage.Prefix, page)
	}
	if o := g.opts.OAuth; o != nil {
		for _, path := range oauth.MetadataPaths(o.Metadata.Resource) {
			mux.Handle(path, o.Metadata.Handler())
		}
		if o.Facade != nil {
			mux.Handle(oauth.PathMetadata, o.Facade)
			mux.Handle("/oauth/", o.Facade)
		}
	} else {
		mux.HandleFunc("/.well-known/oauth-protected-resource", g.serveResourceMetadata)
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", g.serveResourceMetadata)
	}
	return g.logRequests(mux)
}

// guard applies, in order, the Origin check (403), CORS, the body limit (413),
// authentication (401), the body limit of the tool called (413; see
// limits.go) and an access token's scopes (403; see oauth.go).
func (g *Gateway) guard(h http.Handler) http.Handler {
	return g.checkOrigin(g.limitBody(g.authenticate(g.limitTool(g.checkScopes(h)))))
}

// requestKey is where keepRequest puts what the calls need of their HTTP
// request's context.
type requestKey struct{}

// requestScope is the deadline, the end and the public base URL of an HTTP
// request.
type requestScope struct {
	deadline    time.Time
	hasDeadline bool
	done        <-chan struct{} // closed when the client goes away or the request ends
	req         *http.Request   // for its baseURL, made only when a call needs it
}

// keepRequest carries the request's deadline (in Lambda, the gateway's own),
// its end and its public base URL to the tool handlers as a context value:
// the go-sdk serves calls under a context that keeps the request's values
// but neither its deadline nor its cancellation (a client that closed its
// connection left its call running for nobody, issue 10), nor the request.
func keepRequest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs := requestScope{done: r.Context().Done(), req: r}
		rs.deadline, rs.hasDeadline = r.Context().Deadline()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, rs)))
	})
}

// deadline returns the deadline of the request ctx serves.
func deadline(ctx context.Context) (time.Time, bool) {
	if rs, ok := ctx.Value(requestKey{}).(requestScope); ok {
		return rs.deadline, rs.hasDeadline
	}
	return ctx.Deadline()
}

// publicBase returns the base URL of the request ctx serves (see
// [baseURL]), or "" if ctx serves none.
func publicBase(ctx context.Context) string {
	rs, ok := ctx.Value(requestKey{}).(requestScope)
	if !ok {
		return ""
	}
	return baseURL(rs.req)
}

// withRequestEnd returns ctx, cancelled also when the HTTP request it serves
// ends, and the function that releases it.
func withRequestEnd(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	rs, ok := ctx.Value(requestKey{}).(requestScope)
	if !ok || rs.done == nil {
		return ctx, cancel
	}
	go func() {
		select {
		case <-rs.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// postOnly answers anything but POST with 405: Switchboard is stateless, so
// there is no server-initiated stream to GET and no session to DELETE.
func (g *Gateway) postOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST, OPTIONS")
			writeJSONRPCError(w, http.StatusMethodNotAllowed, -32600,
				r.Method+" is not supported: this server is stateless, so there is no stream to open or session to end; send JSON-RPC messages with POST")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func isLocalOrigin(u *url.URL) bool {
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return u.Scheme == "http" || u.Scheme == "https"
	}
	return false
}

// originAllowed reports whether browser requests from origin may call.
func (g *Gateway) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && (slices.Contains(g.opts.AllowedOrigins, origin) || (g.opts.AllowLocalOrigins && isLocalOrigin(u)))
}

// checkOrigin refuses browser requests from origins not allowed, against DNS
// rebinding and cross-site calls, and answers CORS for the allowed ones.
func (g *Gateway) checkOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" {
			if !g.originAllowed(origin) {
				writeJSONRPCError(w, http.StatusForbidden, -32600, fmt.Sprintf("Origin %q is not allowed to call this server", origin))
				return
			}
			hdr := w.Header()
			hdr.Set("Access-Control-Allow-Origin", origin)
			hdr.Add("Vary", "Origin")
			hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
			if r.Method == http.MethodOptions {
				hdr.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
				hdr.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, Traceparent")
				hdr.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// authenticate admits requests with a valid bearer key or, with OAuth on,
// a valid access token, and requests with none when an anonymous caller is
// configured.
func (g *Gateway) authenticate(h http.Handler) http.Handler {
	metadataURL := func(r *http.Request) string { return baseURL(r) + "/.well-known/oauth-protected-resource" }
	if g.opts.OAuth != nil {
		url := oauth.MetadataURL(g.opts.OAuth.Metadata.Resource)
		metadataURL = func(*http.Request) string { return url }
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" && g.opts.Anonymous != nil {
			h.ServeHTTP(w, r)
			return
		}
		if token, ok := bearerToken(r); ok && g.opts.OAuth != nil && !isAPIKey(token) {
			g.authenticateToken(w, r, token, h)
			return
		}
		if g.keys == nil && g.opts.OAuth != nil {
			w.Header().Set("WWW-Authenticate", oauth.Challenge{ResourceMetadata: metadataURL(r)}.String())
			writeJSONRPCError(w, http.StatusUnauthorized, -32600, "a bearer access token is required")
			return
		}
		if g.keys == nil {
			writeJSONRPCError(w, http.StatusUnauthorized, -32600,
				"this server has no API keys configured; remove the Authorization header, or create a key with: go run ./scripts/apikey create")
			return
		}
		auth.RequireBearerToken(g.verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL:    metadataURL(r),
			AllowMissingExpiration: true, // keys live until revoked; expired ones are gone from the store
		})(h).ServeHTTP(w, r)
	})
}

// Authenticate returns who a plain HTTP request acts for, by the rules of
// authenticate: the principal of its API key (a bearer token, or the
// password of Basic credentials, which a browser asks for itself), or the
// anonymous caller when it has none. The approval page uses it.
func (g *Gateway) Authenticate(r *http.Request) (tenant.Caller, error) {
	h := r.Header.Get("Authorization")
	if h == "" && g.opts.Anonymous != nil {
		return *g.opts.Anonymous, nil
	}
	scheme, token, _ := strings.Cut(h, " ")
	ok := strings.EqualFold(scheme, "Bearer")
	if _, password, basic := r.BasicAuth(); basic {
		token, ok = password, true
	}
	if !ok || token == "" || g.keys == nil {
		return tenant.Caller{}, fmt.Errorf("%w: no API key", approvalpage.ErrUnauthenticated)
	}
	info, err := g.verify(r.Context(), token, r)
	if errors.Is(err, auth.ErrInvalidToken) {
		return tenant.Caller{}, fmt.Errorf("%w: %w", approvalpage.ErrUnauthenticated, err)
	}
	if err != nil {
		return tenant.Caller{}, err
	}
	return info.Extra[callerKey].(tenant.Caller), nil
}

func (g *Gateway) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	key, err := g.keys.Verify(ctx, token)
	if errors.Is(err, apikey.ErrInvalidKey) {
		return nil, fmt.Errorf("%w: unknown, revoked or expired API key", auth.ErrInvalidToken)
	}
	if err != nil {
		g.log.ErrorContext(ctx, "verifying an API key failed", "error", err)
		return nil, errors.New("authentication is unavailable; retry shortly")
	}
	c := key.Caller()
	extra := map[string]any{callerKey: c}
	if len(c.Scopes) > 0 { // a key with scopes is limited to them, as a token is
		extra[accessKey] = g.scopeRules().Access(c.Scopes)
	}
	if p := withScopes(key.Profile, c.Scopes); !p.IsZero() { // profiles.go
		extra[profileKey] = p
	}
	return &auth.TokenInfo{UserID: c.Tenant + "/" + c.Principal, Scopes: c.Scopes, Extra: extra}, nil
}

// extraFrom gives a plain HTTP request (not an MCP one) the request extras an
// MCP request would carry: its authenticated token and its headers.
func extraFrom(r *http.Request) *mcp.RequestExtra {
	return &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}
}

// baseURL returns the URL the client reached this server at, which the
// server's paths follow: its scheme (API Gateway's X-Forwarded-Proto), host,
// and the path prefix the front door took off (a REST API's stage, see
// [apigw.Prefix]), e.g. https://abc.execute-api.eu-west-1.amazonaws.com/v1.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host + apigw.Prefix(r.Context())
}

func (g *Gateway) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               baseURL(r) + "/mcp",
		ResourceName:           "Switchboard",
		BearerMethodsSupported: []string{"header"},
	}).ServeHTTP(w, r)
}

// writeJSONRPCError answers an HTTP-level refusal with a JSON-RPC error body,
// which MCP clients show to their users.
func writeJSONRPCError(w http.ResponseWriter, status int, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message},
	})
}

// DefaultKeyCacheTTL is how long the gateway trusts a verified key when
// [Options.KeyCacheTTL] is zero.
const DefaultKeyCacheTTL = time.Minute

// keyCache remembers verified keys for its ttl, so a warm gateway checks a
// key against the table once a minute rather than on every request. Revoking
// a key therefore takes up to ttl to bite; an entry never outlives its key's
// expiry.
type keyCache struct {
	next Authenticator
	ttl  time.Duration
	mu   sync.Mutex
	m    map[string]cachedKey
	now  func() time.Time
}

type cachedKey struct {
	key   apikey.Key
	until time.Time // the earlier of the entry's end and the key's expiry
}

const keyCacheSize = 1024

func newKeyCache(next Authenticator, ttl time.Duration) *keyCache {
	return &keyCache{next: next, ttl: ttl, m: map[string]cachedKey{}, now: time.Now}
}

func (k *keyCache) Verify(ctx context.Context, secret string) (apikey.Key, error) {
	h := apikey.Hash(secret)
	now := k.now()
	k.mu.Lock()
	e, ok := k.m[h]
	k.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.key, nil
	}
	key, err := k.next.Verify(ctx, secret)
	if err != nil {
		return key, err
	}
	until := now.Add(k.ttl)
	if !key.ExpiresAt.IsZero() && key.ExpiresAt.Before(until) {
		until = key.ExpiresAt
	}
	k.mu.Lock()
	if len(k.m) >= keyCacheSize {
		clear(k.m)
	}
	k.m[h] = cachedKey{key: key, until: until}
	k.mu.Unlock()
	return key, nil
}

// statusWriter records the status of a response; it passes flushes through
// so SSE responses stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (g *Gateway) logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.log.Enabled(r.Context(), slog.LevelInfo) {
			h.ServeHTTP(w, r) // no record to build
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		remote, _, _ := net.SplitHostPort(r.RemoteAddr)
		g.log.InfoContext(r.Context(), "http", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration_ms", time.Since(start).Milliseconds(), "remote", remote,
			"protocol_version", r.Header.Get("Mcp-Protocol-Version"), "mcp_method", r.Header.Get("Mcp-Method"),
			"origin", strings.TrimSpace(r.Header.Get("Origin")))
	})
}
