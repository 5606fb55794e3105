package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Paths of the facade's endpoints, below its issuer's origin.
const (
	PathMetadata  = "/.well-known/oauth-authorization-server"
	PathAuthorize = "/oauth/authorize"
	PathCallback  = "/oauth/callback"
	PathToken     = "/oauth/token"
	PathRegister  = "/oauth/register"
	PathJWKS      = "/oauth/jwks.json"
)

// Lifetimes of what the facade issues, when [FacadeOptions] leaves them zero.
const (
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	DefaultClientTTL       = 365 * 24 * time.Hour
	// codeTTL is how long an authorization code may be redeemed.
	codeTTL = time.Minute
	// loginTTL is how long a user has to consent and sign in.
	loginTTL = 10 * time.Minute
	// DefaultMaxRegistrationsPerMinute bounds registrations across instances.
	DefaultMaxRegistrationsPerMinute = 60
)

// ProviderOptions names the OpenID Connect provider users sign in with
// (Cognito on AWS, any OIDC provider) and how its ID tokens map to callers.
type ProviderOptions struct {
	// Issuer is the provider's issuer URL; its discovery document gives the
	// endpoints and keys. Required.
	Issuer string
	// ClientID and ClientSecret are the facade's client at the provider,
	// whose redirect URI is the facade's [PathCallback]. ClientSecret may be
	// empty for a public client.
	ClientID, ClientSecret string
	// Scopes are asked of the provider. If empty, openid and email.
	Scopes []string
	// TenantClaim names the ID token claim holding the tenant id (Cognito:
	// custom:tenant). If empty, "tenant".
	TenantClaim string
	// PrincipalClaim names the ID token claim naming the user. If empty,
	// "sub".
	PrincipalClaim string
	// DefaultTenant, if set, is the tenant of users whose ID token has no
	// tenant claim; otherwise they are refused.
	DefaultTenant string
}

// SigningKey is a key the facade signs access tokens with (ES256).
type SigningKey struct {
	ID  string
	Key *ecdsa.PrivateKey
}

// FacadeOptions configures [NewFacade].
type FacadeOptions struct {
	// Issuer is the facade's issuer identifier, the origin it is served at
	// (https://api.example.com); its endpoints are the Path constants below it.
	Issuer string
	// Resource is the MCP endpoint's URL: the one resource the facade issues
	// tokens for, their audience.
	Resource string
	// Provider is the identity provider users sign in with.
	Provider ProviderOptions
	// Table stores registered clients and spent codes and refresh tokens.
	Table store.Table
	// Keyring seals what the facade hands out and takes back: the login in
	// flight, authorization codes, refresh tokens (the gateway's request-state
	// keyring serves; sealed tokens of each kind open only as that kind).
	Keyring *elicit.Keyring
	// SigningKeys sign access tokens; the first signs, all are published, so
	// a new key can be added first and made the signer later.
	SigningKeys []SigningKey
	// Scopes are the scopes clients may ask for. If nil, [DefaultScopes].
	Scopes ScopeRules
	// DefaultScopes are granted when a client asks for none. If empty,
	// [ScopeWrite].
	DefaultScopes []string
	// HTTPClient talks to the provider. If nil, http.DefaultClient.
	HTTPClient *http.Client
	// DocumentClient fetches client ID metadata documents, and CheckURL vets
	// their URLs first (the SSRF guards); both are needed for such clients
	// to be accepted.
	DocumentClient *http.Client
	CheckURL       func(ctx context.Context, raw string) (*url.URL, error)
	// AccessTokenTTL, RefreshTokenTTL and ClientTTL (how long a registered
	// client lives) default to the Default constants.
	AccessTokenTTL, RefreshTokenTTL, ClientTTL time.Duration
	// MaxRegistrationsPerMinute bounds registrations; if zero,
	// [DefaultMaxRegistrationsPerMinute].
	MaxRegistrationsPerMinute int
	// Logger, if nil, discards.
	Logger *slog.Logger
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
}

// Facade is an OAuth 2.1 authorization server in front of an OpenID Connect
// provider, for MCP hosts that need what the provider lacks: client ID
// metadata documents, dynamic client registration, resource-bound tokens. A
// user signs in at the provider; the facade then issues its own
// authorization code and its own access token (an ES256 JWT for
// [FacadeOptions.Resource]), which [Facade.Validator] checks. It is safe for
// concurrent use.
type Facade struct {
	opts      FacadeOptions
	table     store.Table
	keyring   *elicit.Keyring
	log       *slog.Logger
	now       func() time.Time
	http      *http.Client
	documents *documents
	jwks      JWKS
	signer    SigningKey
	scopes    ScopeRules

	mu       sync.Mutex
	provider *providerMetadata // discovered on first use
	idTokens checker
}

// NewFacade returns a facade configured by opts. It does no I/O: the
// provider's metadata is read on first use.
func NewFacade(opts FacadeOptions) (*Facade, error) {
	u, err := url.Parse(opts.Issuer)
	if err != nil || checkSecureURL(opts.Issuer) != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("oauth: facade issuer %q must be an https origin (http only on a loopback address), without path", opts.Issuer)
	}
	opts.Issuer = strings.TrimSuffix(opts.Issuer, "/")
	if err := checkSecureURL(opts.Resource); err != nil {
		return nil, fmt.Errorf("oauth: resource: %w", err)
	}
	if opts.Provider.Issuer == "" || opts.Provider.ClientID == "" {
		return nil, errors.New("oauth: the facade needs the provider's issuer and its client id there")
	}
	if err := checkSecureURL(opts.Provider.Issuer); err != nil {
		return nil, fmt.Errorf("oauth: provider issuer: %w", err)
	}
	if opts.Provider.DefaultTenant != "" {
		if err := tenant.Validate(opts.Provider.DefaultTenant); err != nil {
			return nil, fmt.Errorf("oauth: provider default tenant: %w", err)
		}
	}
	if opts.Table == nil || opts.Keyring == nil || len(opts.SigningKeys) == 0 {
		return nil, errors.New("oauth: the facade needs a table, a keyring and a signing key")
	}
	f := &Facade{opts: opts, table: opts.Table, keyring: opts.Keyring, log: opts.Logger, now: opts.Now,
		http: opts.HTTPClient, signer: opts.SigningKeys[0], scopes: opts.Scopes}
	for _, k := range opts.SigningKeys {
		if k.Key == nil || k.ID == "" {
			return nil, errors.New("oauth: a signing key needs an id and a key")
		}
		jwk, err := ecJWK(k.ID, &k.Key.PublicKey)
		if err != nil {
			return nil, err
		}
		f.jwks.Keys = append(f.jwks.Keys, jwk)
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.http == nil {
		f.http = http.DefaultClient
	}
	if f.scopes == nil {
		f.scopes = DefaultScopes()
	}
	if len(f.opts.DefaultScopes) == 0 {
		f.opts.DefaultScopes = []string{ScopeWrite}
	}
	if f.opts.Provider.Scopes == nil {
		f.opts.Provider.Scopes = []string{"openid", "email"}
	}
	if f.opts.AccessTokenTTL <= 0 {
		f.opts.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if f.opts.RefreshTokenTTL <= 0 {
		f.opts.RefreshTokenTTL = DefaultRefreshTokenTTL
	}
	if f.opts.ClientTTL == 0 {
		f.opts.ClientTTL = DefaultClientTTL
	}
	if f.opts.MaxRegistrationsPerMinute <= 0 {
		f.opts.MaxRegistrationsPerMinute = DefaultMaxRegistrationsPerMinute
	}
	f.documents = &documents{client: opts.DocumentClient, checkURL: opts.CheckURL, now: f.now, cache: map[string]cachedClient{}}
	f.idTokens, err = newChecker(opts.Provider.Issuer, opts.Provider.ClientID, SupportedAlgorithms, 0, f.now)
	if err != nil {
		return nil, err
	}
	f.idTokens.keys = newRemoteKeys(opts.Provider.Issuer, "", f.http, 0, 0, f.now)
	return f, nil
}

// ParseSigningKey reads an ECDSA P-256 private key from PEM (PKCS #8 or
// SEC 1), as configuration holds it.
func ParseSigningKey(id string, pemData []byte) (SigningKey, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return SigningKey{}, errors.New("oauth: the signing key is not PEM")
	}
	var key any
	var err error
	if block.Type == "EC PRIVATE KEY" {
		key, err = x509.ParseECPrivateKey(block.Bytes)
	} else {
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if err != nil || !ok {
		return SigningKey{}, errors.New("oauth: the signing key is not an ECDSA private key in PKCS #8 or SEC 1 form")
	}
	if _, err := ecJWK(id, &ec.PublicKey); err != nil {
		return SigningKey{}, err
	}
	return SigningKey{ID: id, Key: ec}, nil
}

// MinSeedBytes is the least length of a seed [DeriveSigningKey] accepts:
// 32 random bytes, or 64 of the letters and digits Secrets Manager
// generates (about 380 bits), more than a P-256 key's 128-bit strength.
const MinSeedBytes = 32

// DeriveSigningKey derives a P-256 key from seed, a random secret string:
// HKDF-SHA-256 of the seed, with the key id as info, gives a candidate
// scalar, tried again with a counter in the rare case it is not below the
// group order. It lets the key live in a secret Secrets Manager generates
// (which cannot generate an EC key), so no one has to create one and the
// gateway needs no right to write it.
func DeriveSigningKey(id string, seed []byte) (SigningKey, error) {
	if len(seed) < MinSeedBytes {
		return SigningKey{}, fmt.Errorf("oauth: a signing key seed needs at least %d bytes", MinSeedBytes)
	}
	for i := range 16 {
		d, err := hkdf.Key(sha256.New, seed, nil, fmt.Sprintf("switchboard oauth ES256 %s %d", id, i), 32)
		if err != nil {
			return SigningKey{}, fmt.Errorf("oauth: deriving signing key %q: %w", id, err)
		}
		if k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d); err == nil {
			return SigningKey{ID: id, Key: k}, nil
		}
	}
	return SigningKey{}, fmt.Errorf("oauth: deriving signing key %q: no scalar in range", id) // odds about 2^-512
}

// JWKS returns the public keys of the facade's access tokens.
func (f *Facade) JWKS() JWKS { return f.jwks }

// Validator returns the validator of the facade's access tokens, with the
// facade's keys known in advance (no fetch).
func (f *Facade) Validator() (*Validator, error) {
	jwks := f.JWKS()
	return NewValidator(ValidatorOptions{Issuer: f.opts.Issuer, Resource: f.opts.Resource, Keys: &jwks,
		Algorithms: []string{"ES256"}, Scopes: f.scopes, Now: f.now})
}

// Handler serves the facade's endpoints: the metadata at [PathMetadata] and
// everything under /oauth/.
func (f *Facade) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(PathMetadata, metadataHandler(f.metadata()))
	jwks, _ := json.Marshal(f.jwks)
	mux.Handle(PathJWKS, metadataHandler(jwks))
	mux.HandleFunc("POST "+PathRegister, f.serveRegister)
	mux.HandleFunc("GET "+PathAuthorize, f.serveAuthorize)
	mux.HandleFunc("POST "+PathAuthorize, f.serveConsent)
	mux.HandleFunc("GET "+PathCallback, f.serveCallback)
	mux.HandleFunc("POST "+PathToken, f.serveToken)
	return mux
}

// metadata is the facade's RFC 8414 authorization server metadata.
func (f *Facade) metadata() []byte {
	iss := f.opts.Issuer
	b, _ := json.Marshal(map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + PathAuthorize,
		"token_endpoint":                                 iss + PathToken,
		"registration_endpoint":                          iss + PathRegister,
		"jwks_uri":                                       iss + PathJWKS,
		"scopes_supported":                               f.scopes.Supported(),
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{grantCode, grantRenew},
		"token_endpoint_auth_methods_supported":          []string{authNone, authBasic, authPost},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          f.documents.client != nil && f.documents.checkURL != nil,
		"authorization_response_iss_parameter_supported": true,
	})
	return b
}

// providerMeta returns the provider's metadata, discovered once.
func (f *Facade) providerMeta(ctx context.Context) (providerMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.provider != nil {
		return *f.provider, nil
	}
	meta, err := discover(ctx, f.http, f.opts.Provider.Issuer)
	if err != nil {
		return providerMetadata{}, err
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return providerMetadata{}, fmt.Errorf("%w: the provider's metadata lacks an authorization or token endpoint", ErrUnavailable)
	}
	f.provider = &meta
	return meta, nil
}

// What the facade seals, each kind opening only as itself.
const (
	sealConsent  = "consent"
	sealLogin    = "login"
	sealCode     = "code"
	sealRefresh  = "refresh"
	sealProtocol = "oauth"
)

// seal returns v sealed as kind, valid until expires; id, if set, becomes
// the sealed state's id (to spend it once).
func (f *Facade) seal(kind string, v any, expires time.Time) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return f.keyring.Seal(elicit.Binding{Method: sealProtocol, Name: kind}, elicit.State{Expires: expires, Data: data})
}

// open opens token sealed as kind into v and returns its id.
func (f *Facade) open(kind, token string, v any) (elicit.State, error) {
	s, err := f.keyring.Open(token, elicit.Binding{Method: sealProtocol, Name: kind}, f.now())
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(s.Data, v)
}

// SpentPartition holds the codes and refresh tokens already redeemed.
const SpentPartition = "_oauthspent"

// spend records that the sealed token s was used, once: a put-if-absent
// whose record outlives the token, so exactly one of any number of
// concurrent redemptions succeeds.
//
//	_oauthspent  <kind>#<id>  spent_at (TTL: an hour after the token expires)
func (f *Facade) spend(ctx context.Context, kind string, s elicit.State) error {
	err := f.table.Put(ctx, store.Item{PK: SpentPartition, SK: kind + "#" + s.ID,
		Attrs: store.Attrs{"spent_at": f.now().UTC().Format(time.RFC3339Nano)}, ExpiresAt: s.Expires.Add(time.Hour)}, store.IfAbsent())
	if errors.Is(err, store.ErrConditionFailed) {
		return errReplayed
	}
	return err
}

var errReplayed = errors.New("this grant was already used")

// s256 returns the PKCE S256 challenge of verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// postForm posts form to the provider's token endpoint, authenticating as
// the facade's client there, and decodes the answer into v.
func (f *Facade) postForm(ctx context.Context, endpoint string, form url.Values, v any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	form.Set("client_id", f.opts.Provider.ClientID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if f.opts.Provider.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(f.opts.Provider.ClientID), url.QueryEscape(f.opts.Provider.ClientSecret))
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: the provider's token endpoint: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil || len(body) > maxDocumentBytes {
		return fmt.Errorf("%w: the provider's token endpoint answered unreadably", ErrUnavailable)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		json.Unmarshal(body, &e)
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized {
			return &providerError{code: e.Error, description: e.Description}
		}
		return fmt.Errorf("%w: the provider's token endpoint answered status %d", ErrUnavailable, resp.StatusCode)
	}
	return json.Unmarshal(body, v)
}

// providerError is the provider refusing a grant.
type providerError struct{ code, description string }

func (e *providerError) Error() string {
	return fmt.Sprintf("the identity provider refused: %s %s", e.code, e.description)
}
