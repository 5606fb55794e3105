package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// ErrInvalidToken reports a token that is malformed, forged, expired, for
// another resource or from another issuer. The wrapping error says which;
// a resource server answers 401 with error="invalid_token".
var ErrInvalidToken = errors.New("invalid access token")

// DefaultSkew is the clock difference tolerated on exp, nbf and iat when
// [ValidatorOptions.Skew] is zero.
const DefaultSkew = 60 * time.Second

// ValidatorOptions configures [NewValidator].
type ValidatorOptions struct {
	// Issuer is the authorization server whose tokens are accepted; a token's
	// iss must equal it exactly. Required.
	Issuer string
	// Resource is this resource server's identifier, the MCP endpoint's URL
	// (RFC 8707); a token's aud must name it. Required.
	Resource string
	// JWKSURL is where the issuer publishes its keys. If empty, it is read
	// from the issuer's OpenID Connect discovery document (or RFC 8414
	// metadata). Ignored when Keys is set.
	JWKSURL string
	// Keys, if set, are the issuer's keys, known in advance and never
	// fetched: the facade's own ([Facade.JWKS]).
	Keys *JWKS
	// HTTPClient fetches the issuer's metadata and keys. If nil,
	// http.DefaultClient.
	HTTPClient *http.Client
	// Algorithms is the allow-list of JWS algorithms, a subset of
	// [SupportedAlgorithms]. If empty, [DefaultAlgorithms].
	Algorithms []string
	// Skew is the clock difference tolerated on exp, nbf and iat. If zero,
	// [DefaultSkew].
	Skew time.Duration
	// TenantClaim names the claim holding the tenant id. If empty, "tenant".
	TenantClaim string
	// PrincipalClaim names the claim holding the principal. If empty, "sub".
	PrincipalClaim string
	// DefaultTenant, if set, is the tenant of tokens without a tenant claim
	// (a single-tenant deployment); otherwise such tokens are refused.
	DefaultTenant string
	// Scopes maps the token's scopes to what its holder may do. If nil,
	// [DefaultScopes] with no family scopes.
	Scopes ScopeRules
	// RefetchInterval and KeysMaxAge tune the key cache; if zero,
	// [DefaultRefetchInterval] and [DefaultKeysMaxAge].
	RefetchInterval, KeysMaxAge time.Duration
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Grant is what a valid access token gives its holder: the same caller an
// API key gives, the access its scopes allow, who the token was issued to
// and until when.
type Grant struct {
	Caller   tenant.Caller
	Access   Access
	ClientID string
	Expires  time.Time
}

// Validator checks JWT access tokens (RFC 9068) for this resource server.
// It is safe for concurrent use.
type Validator struct {
	check     checker
	tenant    string
	principal string
	defTenant string
	scopes    ScopeRules
}

// NewValidator returns a validator configured by opts; it does no I/O (keys
// are fetched on first use).
func NewValidator(opts ValidatorOptions) (*Validator, error) {
	if opts.Issuer == "" {
		return nil, errors.New("oauth: the validator needs the issuer whose tokens it accepts")
	}
	if err := checkSecureURL(opts.Resource); err != nil {
		return nil, fmt.Errorf("oauth: resource: %w", err)
	}
	if opts.DefaultTenant != "" {
		if err := tenant.Validate(opts.DefaultTenant); err != nil {
			return nil, fmt.Errorf("oauth: default tenant: %w", err)
		}
	}
	c, err := newChecker(opts.Issuer, opts.Resource, opts.Algorithms, opts.Skew, opts.Now)
	if err != nil {
		return nil, err
	}
	if opts.Keys != nil {
		c.keys = staticKeys(parseJWKS(*opts.Keys))
	} else {
		if opts.JWKSURL != "" {
			if err := checkSecureURL(opts.JWKSURL); err != nil {
				return nil, fmt.Errorf("oauth: jwks url: %w", err)
			}
		} else if err := checkSecureURL(opts.Issuer); err != nil {
			return nil, fmt.Errorf("oauth: issuer: %w", err)
		}
		c.keys = newRemoteKeys(opts.Issuer, opts.JWKSURL, opts.HTTPClient, opts.RefetchInterval, opts.KeysMaxAge, c.now)
	}
	v := &Validator{check: c, tenant: "tenant", principal: "sub", defTenant: opts.DefaultTenant, scopes: opts.Scopes}
	if opts.TenantClaim != "" {
		v.tenant = opts.TenantClaim
	}
	if opts.PrincipalClaim != "" {
		v.principal = opts.PrincipalClaim
	}
	if v.scopes == nil {
		v.scopes = DefaultScopes()
	}
	return v, nil
}

func newRemoteKeys(issuer, jwksURL string, client *http.Client, interval, maxAge time.Duration, now func() time.Time) *remoteKeys {
	if client == nil {
		client = http.DefaultClient
	}
	if interval <= 0 {
		interval = DefaultRefetchInterval
	}
	if maxAge <= 0 {
		maxAge = DefaultKeysMaxAge
	}
	return &remoteKeys{issuer: issuer, jwksURL: jwksURL, client: client, interval: interval, maxAge: maxAge, now: now}
}

// Validate checks token and returns what it grants. A token that does not
// pass returns an error wrapping [ErrInvalidToken]; one that cannot be
// checked because the issuer cannot be reached, [ErrUnavailable].
func (v *Validator) Validate(ctx context.Context, token string) (Grant, error) {
	claims, err := v.check.verify(ctx, token)
	if err != nil {
		return Grant{}, err
	}
	t, _ := claims[v.tenant].(string)
	if _, present := claims[v.tenant]; !present && v.defTenant != "" {
		t = v.defTenant
	}
	if err := tenant.Validate(t); err != nil {
		return Grant{}, fmt.Errorf("%w: claim %s: %w", ErrInvalidToken, v.tenant, err)
	}
	p, _ := claims[v.principal].(string)
	if err := tenant.ValidatePrincipal(p); err != nil {
		return Grant{}, fmt.Errorf("%w: claim %s: %w", ErrInvalidToken, v.principal, err)
	}
	scopes := tokenScopes(claims)
	exp, _ := numericDate(claims["exp"])
	clientID, _ := claims["client_id"].(string)
	return Grant{
		Caller:   tenant.Caller{Tenant: t, Principal: p, Scopes: scopes},
		Access:   v.scopes.Access(scopes),
		ClientID: clientID,
		Expires:  exp,
	}, nil
}

// Scopes returns the validator's scope rules.
func (v *Validator) Scopes() ScopeRules { return v.scopes }

// tokenScopes reads the scope claim (RFC 9068: one space-separated string)
// or, as Entra ID and Okta write it, an scp array.
func tokenScopes(claims map[string]any) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	var out []string
	switch scp := claims["scp"].(type) {
	case string:
		out = strings.Fields(scp)
	case []any:
		for _, s := range scp {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// checker verifies a JWT's signature, issuer, audience and times; it serves
// both access tokens ([Validator]) and the provider's ID tokens ([Facade]).
type checker struct {
	issuer   string
	audience string
	algs     []string
	skew     time.Duration
	now      func() time.Time
	keys     keySource
}

func newChecker(issuer, audience string, algs []string, skew time.Duration, now func() time.Time) (checker, error) {
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	for _, a := range algs {
		if !slices.Contains(SupportedAlgorithms, a) {
			return checker{}, fmt.Errorf("oauth: algorithm %q is not supported; use some of %s", a, strings.Join(SupportedAlgorithms, ", "))
		}
	}
	if skew == 0 {
		skew = DefaultSkew
	}
	if now == nil {
		now = time.Now
	}
	return checker{issuer: issuer, audience: audience, algs: algs, skew: skew, now: now}, nil
}

// verify checks token and returns its claims.
func (c checker) verify(ctx context.Context, token string) (map[string]any, error) {
	t, err := parseJWS(token)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if !slices.Contains(c.algs, t.header.Alg) {
		return nil, fmt.Errorf("%w: algorithm %q is not accepted (accepted: %s)", ErrInvalidToken, t.header.Alg, strings.Join(c.algs, ", "))
	}
	if t.header.Kid == "" {
		return nil, fmt.Errorf("%w: token names no key (kid)", ErrInvalidToken)
	}
	key, err := c.keys.key(ctx, t.header.Kid)
	if errors.Is(err, ErrUnavailable) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if err := t.verify(key); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	claims, err := decodeClaims(t.payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if err := c.checkClaims(claims); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	return claims, nil
}

// checkClaims checks iss, aud, exp, nbf and iat.
func (c checker) checkClaims(claims map[string]any) error {
	if iss, _ := claims["iss"].(string); iss != c.issuer {
		return fmt.Errorf("token was issued by %q, not %q", iss, c.issuer)
	}
	if !audienceHas(claims["aud"], c.audience) {
		return fmt.Errorf("token is not for %s (its audience is %v)", c.audience, claims["aud"])
	}
	now := c.now()
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return errors.New("token has no expiry (exp)")
	}
	if !now.Before(exp.Add(c.skew)) {
		return fmt.Errorf("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := numericDate(claims["nbf"]); ok && now.Add(c.skew).Before(nbf) {
		return fmt.Errorf("token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	if iat, ok := numericDate(claims["iat"]); ok && now.Add(c.skew).Before(iat) {
		return fmt.Errorf("token was issued in the future, at %s", iat.UTC().Format(time.RFC3339))
	}
	return nil
}

// audienceHas reports whether aud, a string or an array of strings, names
// want.
func audienceHas(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok && s == want {
				return true
			}
		}
	}
	return false
}

// numericDate reads a JWT NumericDate (seconds since the epoch).
func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}
