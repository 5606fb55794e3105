package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/profile"
)

// OAuth makes the gateway an OAuth protected resource beside its API keys
// (package oauth): bearer tokens that are not API keys are JWT access
// tokens, checked by Validator, whose scopes limit the tools they may call.
type OAuth struct {
	// Validator checks access tokens. Required.
	Validator *oauth.Validator
	// Metadata is the RFC 9728 document served at
	// oauth.MetadataPaths(Metadata.Resource); Resource, the MCP endpoint's
	// URL, is also what 401 and 403 challenges name. Required.
	Metadata oauth.ResourceMetadata
	// Facade, if set, is the authorization-server facade's handler
	// (oauth.Facade.Handler), served at its metadata path and under /oauth/.
	Facade http.Handler
}

// accessKey is where the access of a JWT, or of an API key with scopes,
// travels in a TokenInfo's Extra; a request without one (an API key without
// scopes, the anonymous caller) may call anything.
const accessKey = "switchboard.access"

// isAPIKey reports whether a bearer token is one of the API keys (the rest
// are access tokens, when OAuth is on).
func isAPIKey(token string) bool { return strings.HasPrefix(token, apikey.Prefix) }

// bearerToken returns the token of an Authorization: Bearer header.
func bearerToken(r *http.Request) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return "", false
	}
	return fields[1], true
}

// authenticateToken admits a request whose access token the validator
// accepts, with its caller and access, or answers the challenge of
// oauth.ChallengeFor: 401 invalid_token, or 503 when the issuer cannot be
// reached.
func (g *Gateway) authenticateToken(w http.ResponseWriter, r *http.Request, token string, h http.Handler) {
	o := g.opts.OAuth
	grant, err := o.Validator.Validate(r.Context(), token)
	if err != nil {
		ch, status := oauth.ChallengeFor(o.Metadata.Resource, err)
		if ch != (oauth.Challenge{}) {
			w.Header().Set("WWW-Authenticate", ch.String())
		}
		msg := err.Error()
		if status != http.StatusUnauthorized {
			g.log.ErrorContext(r.Context(), "validating an access token failed", "error", err)
			msg = "authentication is unavailable; retry shortly"
		}
		writeJSONRPCError(w, status, -32600, msg)
		return
	}
	c := grant.Caller
	info := &auth.TokenInfo{UserID: c.Tenant + "/" + c.Principal, Scopes: c.Scopes, Expiration: grant.Expires,
		Extra: map[string]any{callerKey: c, accessKey: grant.Access}}
	if p := withScopes(profile.Profile{}, c.Scopes); !p.IsZero() { // profiles.go
		info.Extra[profileKey] = p
	}
	// The go-sdk's middleware puts info where its handlers find it.
	auth.RequireBearerToken(func(_ context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) { return info, nil }, nil)(h).ServeHTTP(w, r)
}

// access returns what the token of a request may call, and whether it is
// limited at all.
func accessOf(info *auth.TokenInfo) (oauth.Access, bool) {
	if info == nil {
		return oauth.Access{}, false
	}
	a, ok := info.Extra[accessKey].(oauth.Access)
	return a, ok
}

// allows reports whether the request extra's token may call t.
func allows(extra *mcp.RequestExtra, t *catalog.Tool) bool {
	if extra == nil {
		return true
	}
	a, limited := accessOf(extra.TokenInfo)
	return !limited || a.Allows(t.Family, t.Mutates)
}

// scopeRules map the scopes of access tokens and API keys to access: the
// OAuth validator's rules when OAuth is on, else the default ones.
func (g *Gateway) scopeRules() oauth.ScopeRules {
	if g.opts.OAuth != nil {
		return g.opts.OAuth.Validator.Scopes()
	}
	return oauth.DefaultScopes()
}

// visibleTools returns the tools of tools the request extra's token may call,
// and whether its token is limited at all (if not, tools is every one).
func (g *Gateway) visibleTools(extra *mcp.RequestExtra, tools []*mcp.Tool) ([]*mcp.Tool, bool) {
	if extra == nil {
		return tools, false
	}
	if _, limited := accessOf(extra.TokenInfo); !limited {
		return tools, false
	}
	visible := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if ct, ok := g.opts.Catalog.Tool(t.Name); ok && allows(extra, ct) || t.Name == ToolSearchName {
			visible = append(visible, t)
		}
	}
	return visible, true
}

// checkScopes refuses, with 403 and the insufficient_scope challenge naming
// the scope needed, a request whose access token may not call a tool it
// calls: tools/call alone or in a batch. It runs before the fast path and
// the go-sdk alike; callTool checks again, for whatever it might not read.
func (g *Gateway) checkScopes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, limited := accessOf(auth.TokenInfoFromContext(r.Context()))
		if !limited || r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		for _, name := range calledTools(body) {
			t, ok := g.opts.Catalog.Tool(name)
			if !ok || t.Visibility != catalog.Public || a.Allows(t.Family, t.Mutates) {
				continue // the go-sdk answers unknown tools
			}
			scope := g.scopeRules().Needed(t.Family, t.Mutates)
			if g.opts.OAuth != nil { // an API key's refusal has no authorization server to name
				w.Header().Set("WWW-Authenticate", oauth.InsufficientScope(g.opts.OAuth.Metadata.Resource, scope).String())
			}
			writeJSONRPCError(w, http.StatusForbidden, -32600, fmt.Sprintf("calling %s needs the scope %s; this token has %s", t.Name, scope, a))
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// calledTools returns the names of the tools a JSON-RPC message, or batch
// of them, calls.
func calledTools(body []byte) []string {
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		json.Unmarshal(b, &msgs)
	} else {
		var m message
		json.Unmarshal(b, &m)
		msgs = append(msgs, m)
	}
	var names []string
	for _, m := range msgs {
		if m.Method == "tools/call" || m.Method == toolServer+"/tools/call" {
			names = append(names, m.Params.Name)
		}
	}
	return names
}
