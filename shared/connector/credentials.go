package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// creds are the credentials one call runs with: the caller's own if they
// have any, else the tenant's.
type creds struct {
	// owner is the principal whose credentials these are, "" for the tenant's.
	owner string
	// ver is the version of what holds them (the principal's credential item
	// or the connector's record), so that a pooled session or a cached token
	// never outlives a change of credentials.
	ver int64
	sec *secrets
}

// credsFor returns the credentials c's calls to r run with. A principal's
// own credentials override the tenant's; a connector whose credentials are
// kept per principal refuses a caller with neither, rather than call without.
func (s *Service) credsFor(ctx context.Context, c tenant.Caller, r *record) (creds, error) {
	own, err := s.ownCredOf(ctx, c, r)
	if err != nil {
		return creds{}, err
	}
	if own.has {
		sec, err := s.openOnce(ctx, own.sealed, c.Tenant, r.Name, c.Principal)
		return creds{owner: c.Principal, ver: own.ver, sec: sec}, err
	}
	if len(r.Sealed) > 0 {
		sec, err := s.openOnce(ctx, r.Sealed, c.Tenant, r.Name, "")
		return creds{ver: r.connVer(), sec: sec}, err
	}
	if r.PrincipalScoped {
		return creds{}, fault.Invalid("name", "connector %q keeps credentials per principal and holds none for you (nor for the tenant): "+
			"set yours with connector_update and principal_scoped", r.Name)
	}
	return creds{ver: r.connVer()}, nil
}

// ownCreds is what a principal's own credential item held when read: none
// (has false), or its sealed bytes and version.
type ownCreds struct {
	has    bool
	sealed []byte
	ver    int64
}

// ownCredOf returns c's own credentials of r as [Service.ownCred] reads
// them, read once per version of r and principal in a warm instance: every
// change of a principal's credentials bumps the connector's version in the
// same transaction (connector_update), and so does connector_delete before
// it deletes them, so the version the call read names the item it may use.
// The key names the principal: one principal's credentials never serve
// another's call.
func (s *Service) ownCredOf(ctx context.Context, c tenant.Caller, r *record) (ownCreds, error) {
	key := r.versionKey(c.Tenant) + "\x00" + c.Principal
	if o, ok := s.credsRead.get(key); ok {
		return o, nil
	}
	it, has, err := s.ownCred(ctx, c, r.Name)
	if err != nil {
		return ownCreds{}, err
	}
	o := ownCreds{has: has}
	if has {
		o.sealed, o.ver = it.Bytes("sealed"), it.Int("ver")
	}
	s.credsRead.put(key, o)
	return o, nil
}

// sessionKey identifies a pooled session: one per tenant, calling principal,
// connector (by its creation time too: one deleted and made again under its
// name, by another instance, starts again at version 1) and version of the
// connector (but for its policy changes: [record.connVer]) and of the
// credentials, so that one principal's session never carries another's
// token.
func (cr creds) sessionKey(t, principal string, r *record) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%d\x00%s\x00%d", t, r.Name, r.CreatedAt.UnixNano(), principal, r.connVer(), cr.owner, cr.ver)
}

// tokenKey identifies the OAuth token of cr: the tenant's credentials share
// one token, a principal's own have theirs.
func (cr creds) tokenKey(t string, r *record) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%d", t, r.Name, r.CreatedAt.UnixNano(), cr.owner, cr.ver)
}

// authTransport adds a connector's credentials to every upstream request, and
// for OAuth fetches the token again once when the upstream answers 401. It
// serves one session.
type authTransport struct {
	base    http.RoundTripper
	headers map[string]string
	oauth   *tokenSource
	cut     *cutResponses
	// posted counts the session's POST responses whose bodies are open,
	// over HTTP/1 (over HTTP/2 an open stream leaves its connection free).
	posted openBodies
}

// reuseWait bounds how long a session's request waits for the bodies of
// the session's earlier POST responses to close, so that it reuses their
// connection rather than dial another. The go-sdk hands a request its
// answer as soon as the event carrying it is read, and reads the end of the
// stream apart: the initialized notification, sent right after initialize's
// result, found the connection still busy in a third to half of the
// connector functions' cold starts, and dialed a second one, whose TLS
// handshake (CPU on both sides) went on beside the session's exchange and
// whose connection was then not needed. An end of stream comes right after
// the last event; a stream that stays open (a long call's progress) delays
// a request made beside it by this much at most.
const reuseWait = 2 * time.Millisecond

// RoundTrip implements [http.RoundTripper].
func (a *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a.posted.wait(reuseWait)
	if len(a.headers) == 0 && a.oauth == nil {
		resp, err := a.base.RoundTrip(req) // nothing to add: no copy of the request to make
		return a.watch(req, resp), err
	}
	first := req.Clone(req.Context())
	token, err := a.apply(first, "")
	if err != nil {
		return nil, err
	}
	resp, err := a.base.RoundTrip(first)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || a.oauth == nil || (req.Body != nil && req.GetBody == nil) {
		return a.watch(req, resp), err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	if _, err := a.apply(again, token); err != nil {
		return nil, err
	}
	resp, err = a.base.RoundTrip(again)
	return a.watch(req, resp), err
}

// watch records in a.cut whether resp's body is cut, and counts it among
// the open bodies of the call req belongs to and, for a POST over HTTP/1,
// of the session.
func (a *authTransport) watch(req *http.Request, resp *http.Response) *http.Response {
	if resp != nil && a.cut != nil {
		var posted *openBodies
		if req.Method == http.MethodPost && resp.ProtoMajor < 2 {
			posted = &a.posted
		}
		resp.Body = a.cut.watch(resp.Body, bodiesOf(req.Context()), posted)
	}
	return resp
}

// apply sets the credentials on req; stale is a token the upstream refused.
func (a *authTransport) apply(req *http.Request, stale string) (string, error) {
	for k, v := range a.headers {
		req.Header.Set(k, v)
	}
	if a.oauth == nil {
		return "", nil
	}
	token, err := a.oauth.token(req.Context(), stale)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return token, nil
}

// httpClient returns the client a session with cr uses: the configured one,
// its transport wrapped to add cr's credentials and record in cut the
// responses it cuts.
func (s *Service) httpClient(cr creds, tokenKey string, cut *cutResponses) *http.Client {
	hc := *s.opts.HTTPClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	at := &authTransport{base: base, cut: cut}
	if cr.sec != nil {
		at.headers = cr.sec.Headers
		if cr.sec.OAuth != nil {
			at.oauth = &tokenSource{svc: s, key: tokenKey, oauth: *cr.sec.OAuth}
		}
	}
	hc.Transport = at
	return &hc
}

// token is a cached OAuth access token.
type token struct {
	value   string
	expires time.Time
}

// tokenCache holds OAuth access tokens in memory only, by tenant, owner of
// the credentials, connector and their version, until they expire.
type tokenCache struct {
	mu     sync.Mutex
	tokens map[string]token
	flight singleflight.Group
}

func newTokenCache() *tokenCache { return &tokenCache{tokens: map[string]token{}} }

// drop forgets the tokens of connector name of tenant t.
func (tc *tokenCache) drop(t, name string) {
	prefix := t + "\x00" + name + "\x00"
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for k := range tc.tokens {
		if strings.HasPrefix(k, prefix) {
			delete(tc.tokens, k)
		}
	}
}

// current returns the cached token of key, if any, for redaction.
func (tc *tokenCache) current(key string) string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.tokens[key].value
}

// tokenSource fetches the token of one set of client credentials.
type tokenSource struct {
	svc   *Service
	key   string
	oauth OAuth
}

// expirySkew renews a token this long before the expiry its issuer gave.
const expirySkew = 30 * time.Second

// token returns a valid access token: the cached one unless it expires or
// is stale (the upstream refused it), else a fresh one; concurrent callers
// share one fetch.
func (ts *tokenSource) token(ctx context.Context, stale string) (string, error) {
	tc := ts.svc.tokens
	tc.mu.Lock()
	t, ok := tc.tokens[ts.key]
	tc.mu.Unlock()
	if ok && t.value != stale && ts.svc.now().Before(t.expires) {
		return t.value, nil
	}
	v, err, _ := tc.flight.Do(ts.key, func() (any, error) {
		tc.mu.Lock()
		t, ok := tc.tokens[ts.key]
		tc.mu.Unlock()
		if ok && t.value != stale && ts.svc.now().Before(t.expires) {
			return t.value, nil
		}
		fresh, err := ts.fetch(ctx)
		if err != nil {
			return "", err
		}
		tc.mu.Lock()
		tc.tokens[ts.key] = fresh
		tc.mu.Unlock()
		return fresh.value, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// maxTokenResponse bounds what a token endpoint may answer.
const maxTokenResponse = 64 << 10

// fetch asks the token endpoint for a token (client credentials grant, the
// client authenticated with HTTP Basic as RFC 6749 2.3.1 requires servers
// to support). Its errors name the status and the OAuth error code only,
// never what was sent.
func (ts *tokenSource) fetch(ctx context.Context) (token, error) {
	if _, err := ts.svc.opts.CheckURL(ctx, ts.oauth.TokenURL); err != nil {
		return token{}, fmt.Errorf("token endpoint refused: %w", err)
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(ts.oauth.Scopes) > 0 {
		form.Set("scope", strings.Join(ts.oauth.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.oauth.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(ts.oauth.ClientID), url.QueryEscape(ts.oauth.ClientSecret))
	resp, err := ts.svc.opts.HTTPClient.Do(req)
	if err != nil {
		return token{}, fmt.Errorf("token endpoint unreachable: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return token{}, fmt.Errorf("reading the token response: %w", err)
	}
	if len(body) > maxTokenResponse {
		return token{}, fmt.Errorf("the token response is larger than %d bytes", maxTokenResponse)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		code := ""
		if jsonErr == nil && validHeaderName(tr.Error) {
			code = " (" + tr.Error + ")"
		}
		return token{}, fmt.Errorf("the token endpoint answered %d%s", resp.StatusCode, code)
	}
	if jsonErr != nil || tr.AccessToken == "" || len(tr.AccessToken) > MaxHeaderValueLen || strings.ContainsAny(tr.AccessToken, "\r\n\x00") {
		return token{}, fmt.Errorf("the token endpoint answered no usable access_token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return token{}, fmt.Errorf("the token endpoint answered a %q token; only bearer tokens are supported", tr.TokenType)
	}
	life := time.Duration(tr.ExpiresIn) * time.Second
	if tr.ExpiresIn <= 0 || life > 24*time.Hour {
		life = time.Hour
	}
	if life > 2*expirySkew {
		life -= expirySkew
	}
	return token{value: tr.AccessToken, expires: ts.svc.now().Add(life)}, nil
}

// redact replaces each secret found in msg, so that an upstream or a library
// echoing a credential cannot carry it into an error, a log or an audit event.
func redact(msg string, secretValues ...string) string {
	for _, v := range secretValues {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
	}
	return msg
}
