package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// ClientPartition holds the clients registered through the registration
// endpoint (RFC 7591). Like apikey.Partition it is not under a tenant: a
// client is known before anyone has signed in.
//
//	_oauthclients       <client id>     client (JSON), secret (SHA-256 hex), created_at  (expires_at as TTL)
//	_oauthclients#rate  <UTC minute>    n: registrations in that minute (TTL: two minutes later)
const ClientPartition = "_oauthclients"

// Limits of a client's metadata.
const (
	MaxRedirectURIs       = 10
	MaxRedirectURIBytes   = 1024
	MaxClientIDBytes      = 512
	MaxClientNameRunes    = 100
	maxRegistrationBytes  = 16 << 10
	maxClientDocumentSize = 5 << 10 // what the client ID metadata document draft suggests
	clientCacheSize       = 256
	maxClientCacheTTL     = 24 * time.Hour
	defaultClientCacheTTL = 5 * time.Minute
)

// Token endpoint authentication methods.
const (
	authNone   = "none"
	authBasic  = "client_secret_basic"
	authPost   = "client_secret_post"
	grantCode  = "authorization_code"
	grantRenew = "refresh_token"
)

// client is an OAuth client as the facade knows it: registered in the table
// or described by its client ID metadata document.
type client struct {
	ID           string   `json:"client_id"`
	Name         string   `json:"client_name,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	GrantTypes   []string `json:"grant_types"`
	secretHash   string
}

// clientMetadata is what a registration request or a client ID metadata
// document says of a client; fields the facade does not use are ignored.
type clientMetadata struct {
	ClientID      string   `json:"client_id"`
	ClientName    string   `json:"client_name"`
	RedirectURIs  []string `json:"redirect_uris"`
	AuthMethod    string   `json:"token_endpoint_auth_method"`
	GrantTypes    []string `json:"grant_types"`
	ResponseTypes []string `json:"response_types"`
	ClientSecret  string   `json:"client_secret"`
}

// check validates m and returns the client it describes. defaultAuth is the
// authentication method when m names none.
func (m clientMetadata) check(defaultAuth string, allowed ...string) (client, error) {
	c := client{ID: m.ClientID, Name: m.ClientName, RedirectURIs: m.RedirectURIs, AuthMethod: m.AuthMethod, GrantTypes: m.GrantTypes}
	if len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > MaxRedirectURIs {
		return client{}, fmt.Errorf("redirect_uris must list 1 to %d URIs", MaxRedirectURIs)
	}
	for _, u := range c.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return client{}, fmt.Errorf("redirect_uris: %w", err)
		}
	}
	if n := len([]rune(c.Name)); n > MaxClientNameRunes || (c.Name != "" && tenant.ValidatePrincipal(c.Name) != nil) {
		return client{}, fmt.Errorf("client_name must be at most %d printable characters", MaxClientNameRunes)
	}
	if c.AuthMethod == "" {
		c.AuthMethod = defaultAuth
	}
	if !slices.Contains(allowed, c.AuthMethod) {
		return client{}, fmt.Errorf("token_endpoint_auth_method %q is not supported; use one of %s", c.AuthMethod, strings.Join(allowed, ", "))
	}
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{grantCode}
	}
	for _, g := range c.GrantTypes {
		if g != grantCode && g != grantRenew {
			return client{}, fmt.Errorf("grant_types: %q is not supported; use authorization_code and refresh_token", g)
		}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return client{}, fmt.Errorf("response_types: %q is not supported; use code", r)
		}
	}
	return c, nil
}

// schemePattern is what a URI scheme matches (RFC 3986 section 3.1).
var schemePattern = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// checkRedirectURI accepts an absolute URI without fragment or credentials:
// https, http on a loopback address (native apps, RFC 8252 section 7.3), or a
// private-use scheme (section 7.1), never a scheme that runs code or reads
// files in a browser.
func checkRedirectURI(raw string) error {
	if len(raw) > MaxRedirectURIBytes {
		return fmt.Errorf("a redirect URI is longer than %d bytes", MaxRedirectURIBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || !schemePattern.MatchString(u.Scheme) || u.Fragment != "" || strings.Contains(raw, "#") || u.User != nil {
		return fmt.Errorf("%q is not an absolute URI without fragment or credentials", raw)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("%q has no host", raw)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("%q uses http on a host other than a loopback address; use https", raw)
		}
	case "javascript", "data", "vbscript", "file", "blob", "about", "filesystem", "ws", "wss", "ftp":
		return fmt.Errorf("%q uses the scheme %s, which cannot receive an authorization response", raw, u.Scheme)
	}
	return nil
}

// lookupClient returns the client id names: a client ID metadata document
// when id is an https URL, a registered client otherwise.
func (f *Facade) lookupClient(ctx context.Context, id string) (client, error) {
	if len(id) > MaxClientIDBytes || id == "" {
		return client{}, fmt.Errorf("client_id must be 1 to %d bytes", MaxClientIDBytes)
	}
	if strings.HasPrefix(id, "https://") {
		return f.documents.get(ctx, id)
	}
	it, err := f.table.Get(ctx, ClientPartition, id)
	if errors.Is(err, store.ErrNotFound) {
		return client{}, fmt.Errorf("client %q is not registered (or its registration expired); register again", id)
	}
	if err != nil {
		return client{}, fmt.Errorf("%w: reading client: %w", ErrUnavailable, err)
	}
	var c client
	if err := json.Unmarshal([]byte(it.String("client")), &c); err != nil {
		return client{}, fmt.Errorf("oauth: client %q is stored malformed: %w", id, err)
	}
	c.secretHash = it.String("secret")
	return c, nil
}

// authenticate checks the credentials a token request carries for c.
func (c client) authenticate(r *http.Request) error {
	user, pass, basic := r.BasicAuth()
	post := r.PostForm.Get("client_secret")
	switch c.AuthMethod {
	case authNone:
		if basic || post != "" {
			return errors.New("this client was registered without a secret; send none")
		}
		return nil
	case authBasic:
		if !basic || user != c.ID {
			return errors.New("this client authenticates with HTTP Basic (client_secret_basic)")
		}
		post = pass
	case authPost:
		if basic || post == "" {
			return errors.New("this client authenticates with client_secret in the body (client_secret_post)")
		}
	}
	sum := sha256.Sum256([]byte(post))
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(c.secretHash)) != 1 {
		return errors.New("wrong client secret")
	}
	return nil
}

// serveRegister is the dynamic client registration endpoint (RFC 7591).
func (f *Facade) serveRegister(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistrationBytes+1))
	if err != nil || len(body) > maxRegistrationBytes {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("the registration must be a JSON object of at most %d bytes", maxRegistrationBytes))
		return
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the registration is not a JSON object of client metadata")
		return
	}
	m.ClientID = ""
	c, err := m.check(authBasic, authNone, authBasic, authPost)
	if err != nil {
		code := "invalid_client_metadata"
		if strings.HasPrefix(err.Error(), "redirect_uris") {
			code = "invalid_redirect_uri"
		}
		writeOAuthError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	if err := f.countRegistration(r.Context()); err != nil {
		if errors.Is(err, errTooManyRegistrations) {
			w.Header().Set("Retry-After", "60")
			writeOAuthError(w, http.StatusTooManyRequests, "temporarily_unavailable", err.Error())
			return
		}
		f.log.ErrorContext(r.Context(), "oauth: counting a registration failed", "error", err)
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "registration is unavailable; retry shortly")
		return
	}
	c.ID = "sbc_" + randomToken()
	secret := ""
	if c.AuthMethod != authNone {
		secret = "sbs_" + randomToken()
		sum := sha256.Sum256([]byte(secret))
		c.secretHash = hex.EncodeToString(sum[:])
	}
	enc, _ := json.Marshal(c)
	now := f.now().UTC()
	item := store.Item{PK: ClientPartition, SK: c.ID,
		Attrs: store.Attrs{"client": string(enc), "secret": c.secretHash, "created_at": now.Format(time.RFC3339)}}
	if f.opts.ClientTTL > 0 {
		item.ExpiresAt = now.Add(f.opts.ClientTTL)
	}
	if err := f.table.Put(r.Context(), item, store.IfAbsent()); err != nil {
		f.log.ErrorContext(r.Context(), "oauth: storing a client failed", "error", err)
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "registration is unavailable; retry shortly")
		return
	}
	resp := map[string]any{
		"client_id": c.ID, "client_id_issued_at": now.Unix(), "redirect_uris": c.RedirectURIs,
		"token_endpoint_auth_method": c.AuthMethod, "grant_types": c.GrantTypes, "response_types": []string{"code"},
	}
	if c.Name != "" {
		resp["client_name"] = c.Name
	}
	if secret != "" {
		resp["client_secret"], resp["client_secret_expires_at"] = secret, 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

var errTooManyRegistrations = errors.New("too many clients registered in the last minute; retry in a minute")

// countRegistration counts one registration in the current minute's bucket,
// refusing past [FacadeOptions.MaxRegistrationsPerMinute]: the registration
// endpoint is open to anyone, so its growth is bounded across every instance.
func (f *Facade) countRegistration(ctx context.Context) error {
	now := f.now().UTC()
	bucket := now.Format("200601021504")
	return store.Retry(ctx, func() error {
		it, err := f.table.Get(ctx, ClientPartition+"#rate", bucket)
		cond := store.IfEquals("n", it.Int("n"))
		if errors.Is(err, store.ErrNotFound) {
			cond = store.IfAbsent()
		} else if err != nil {
			return err
		}
		n := it.Int("n")
		if n >= int64(f.opts.MaxRegistrationsPerMinute) {
			return errTooManyRegistrations
		}
		return f.table.Put(ctx, store.Item{PK: ClientPartition + "#rate", SK: bucket, Attrs: store.Attrs{"n": n + 1},
			ExpiresAt: now.Truncate(time.Minute).Add(2 * time.Minute)}, cond)
	})
}

// documents fetches and caches client ID metadata documents.
type documents struct {
	client   *http.Client
	checkURL func(ctx context.Context, raw string) (*url.URL, error)
	now      func() time.Time

	mu    sync.Mutex
	cache map[string]cachedClient
}

type cachedClient struct {
	c     client
	until time.Time
}

// get returns the client the document at id describes, from the cache while
// its HTTP freshness lasts (at most a day).
func (d *documents) get(ctx context.Context, id string) (client, error) {
	now := d.now()
	d.mu.Lock()
	e, ok := d.cache[id]
	d.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.c, nil
	}
	if err := checkClientIDURL(id); err != nil {
		return client{}, err
	}
	if d.checkURL == nil || d.client == nil {
		return client{}, errors.New("client ID metadata documents are not enabled on this server; register the client")
	}
	u, err := d.checkURL(ctx, id)
	if err != nil {
		return client{}, fmt.Errorf("client_id %q may not be fetched: %w", id, err)
	}
	c, ttl, err := d.fetch(ctx, u.String())
	if err != nil {
		return client{}, err
	}
	if c.ID != id {
		return client{}, fmt.Errorf("the metadata document at %s names the client_id %q, not its own URL", id, c.ID)
	}
	if ttl > 0 {
		d.mu.Lock()
		if len(d.cache) >= clientCacheSize {
			clear(d.cache)
		}
		d.cache[id] = cachedClient{c: c, until: now.Add(ttl)}
		d.mu.Unlock()
	}
	return c, nil
}

// fetch reads and validates one document, and says how long it may be cached.
func (d *documents) fetch(ctx context.Context, u string) (client, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return client{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	hc := *d.client
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return client{}, 0, fmt.Errorf("fetching the client's metadata document %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return client{}, 0, fmt.Errorf("the client's metadata document %s answered status %d (redirects are not followed)", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClientDocumentSize+1))
	if err != nil {
		return client{}, 0, fmt.Errorf("reading the client's metadata document %s: %w", u, err)
	}
	if len(body) > maxClientDocumentSize {
		return client{}, 0, fmt.Errorf("the client's metadata document %s is larger than %d bytes", u, maxClientDocumentSize)
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return client{}, 0, fmt.Errorf("the client's metadata document %s is not a JSON object of client metadata", u)
	}
	if m.ClientSecret != "" {
		return client{}, 0, fmt.Errorf("the client's metadata document %s holds a client_secret, which a public document must not", u)
	}
	c, err := m.check(authNone, authNone)
	if err != nil {
		return client{}, 0, fmt.Errorf("the client's metadata document %s: %w", u, err)
	}
	return c, cacheTTL(resp.Header.Get("Cache-Control")), nil
}

// checkClientIDURL checks the form a client ID metadata document's URL must
// have: https, a path, no fragment, credentials, query or dot segments.
func checkClientIDURL(id string) error {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(id, "#") || u.RawQuery != "" || strings.Contains(id, "?") {
		return fmt.Errorf("client_id %q is not an https URL without credentials, query or fragment", id)
	}
	if u.Path == "" || u.Path == "/" {
		return fmt.Errorf("client_id %q has no path", id)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("client_id %q has a dot segment", id)
		}
	}
	return nil
}

// cacheTTL reads how long a response may be cached from its Cache-Control
// header: not at all under no-store or no-cache, max-age bounded to a day,
// five minutes when it says nothing.
func cacheTTL(cc string) time.Duration {
	ttl := defaultClientCacheTTL
	for _, d := range strings.Split(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age="))
			if err != nil || n < 0 {
				return 0
			}
			ttl = time.Duration(n) * time.Second
		}
	}
	return min(ttl, maxClientCacheTTL)
}

// randomToken returns 128 random bits, base64url-encoded.
func randomToken() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// writeJSON answers v as JSON, never cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeOAuthError answers an OAuth error response (RFC 6749 section 5.2).
func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}
