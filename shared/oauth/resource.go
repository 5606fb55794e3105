package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ResourceMetadata is this server's OAuth 2.0 protected resource metadata
// (RFC 9728), which MCP clients read to find where to get a token.
type ResourceMetadata struct {
	// Resource is the MCP endpoint's URL, the audience of its tokens.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens it accepts: the
	// facade's, or the configured provider's when it issues audience-bound
	// tokens itself.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported are the scopes the resource understands.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is always ["header"].
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// ResourceName is shown to users by some clients.
	ResourceName string `json:"resource_name,omitempty"`
}

// MetadataPaths returns the paths the metadata of resource is served at:
// /.well-known/oauth-protected-resource followed by the resource's path (RFC
// 9728 section 3.1), and the bare form that clients of earlier drafts try.
func MetadataPaths(resource string) []string {
	const wk = "/.well-known/oauth-protected-resource"
	u, err := url.Parse(resource)
	if err != nil || u.Path == "" || u.Path == "/" {
		return []string{wk}
	}
	return []string{wk + u.Path, wk}
}

// MetadataURL returns the URL of resource's metadata, which the
// WWW-Authenticate challenges of its 401 and 403 answers name.
func MetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + MetadataPaths(resource)[0]
}

// Handler serves m as JSON to GET, with CORS open to any origin (the
// document is public and browsers' clients read it).
func (m ResourceMetadata) Handler() http.Handler {
	if m.BearerMethodsSupported == nil {
		m.BearerMethodsSupported = []string{"header"}
	}
	body, _ := json.Marshal(m)
	return metadataHandler(body)
}

// metadataHandler serves a fixed JSON document.
func metadataHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		switch r.Method {
		case http.MethodOptions:
			w.WriteHeader(http.StatusNoContent)
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=3600")
			w.Write(body)
		default:
			h.Set("Allow", "GET, OPTIONS")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
		}
	})
}

// Challenge is the WWW-Authenticate challenge of a refused request (RFC 6750
// section 3, with RFC 9728's resource_metadata).
type Challenge struct {
	// ResourceMetadata is [MetadataURL] of the resource.
	ResourceMetadata string
	// Error is "", "invalid_request", "invalid_token" or "insufficient_scope".
	Error string
	// Description says what was wrong, for the developer.
	Description string
	// Scope is the scope that would be enough ("insufficient_scope").
	Scope string
}

// String returns c as a header value: Bearer resource_metadata="...", ...
func (c Challenge) String() string {
	var b strings.Builder
	b.WriteString("Bearer ")
	params := [][2]string{{"resource_metadata", c.ResourceMetadata}, {"error", c.Error},
		{"error_description", c.Description}, {"scope", c.Scope}}
	first := true
	for _, p := range params {
		if p[1] == "" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s=%s", p[0], quote(p[1]))
	}
	return b.String()
}

// quote writes s as an RFC 9110 quoted-string, dropping what a header cannot
// carry (control characters, non-ASCII).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s) && i < 512; i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ChallengeFor returns the challenge and HTTP status that answer err, an
// error of [Validator.Validate]: 401 invalid_token for a token that does not
// pass, 503 without a challenge when its issuer cannot be reached.
func ChallengeFor(resource string, err error) (Challenge, int) {
	c := Challenge{ResourceMetadata: MetadataURL(resource)}
	switch {
	case errors.Is(err, ErrInvalidToken):
		c.Error, c.Description = "invalid_token", err.Error()
		return c, http.StatusUnauthorized
	case errors.Is(err, ErrUnavailable):
		return Challenge{}, http.StatusServiceUnavailable
	}
	return c, http.StatusUnauthorized
}

// InsufficientScope returns the challenge of a 403 answer to a caller whose
// token lacks scope.
func InsufficientScope(resource, scope string) Challenge {
	return Challenge{ResourceMetadata: MetadataURL(resource), Error: "insufficient_scope",
		Description: "this call needs the scope " + scope, Scope: scope}
}
