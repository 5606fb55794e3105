package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// MaxStateBytes bounds the state a client passes through /authorize.
const MaxStateBytes = 512

// browserCookie ties a sign-in to the browser that consented to it, so a
// link to the provider's login taken from one browser cannot finish the
// sign-in in another (login CSRF, a victim completing an attacker's flow).
const browserCookie = "sb_oauth_browser"

// authRequest is a client's authorization request, checked.
type authRequest struct {
	ClientID    string   `json:"c"`
	ClientName  string   `json:"n,omitempty"`
	RedirectURI string   `json:"r"`
	State       string   `json:"s,omitempty"`
	Challenge   string   `json:"pc"`
	Scopes      []string `json:"sc"`
	Resource    string   `json:"rs"`
	Refresh     bool     `json:"rf,omitempty"` // the client may use refresh tokens
}

// consent is what the consent page's form carries back.
type consent struct {
	Req     authRequest `json:"q"`
	Browser string      `json:"b"` // SHA-256 of the browser cookie
}

// login is the sign-in in flight at the provider: the provider's state.
type login struct {
	consent
	Verifier string `json:"v"` // the facade's PKCE verifier at the provider
	Nonce    string `json:"nn"`
}

// codeGrant is what an authorization code carries.
type codeGrant struct {
	Req             authRequest `json:"q"`
	Tenant          string      `json:"t"`
	Principal       string      `json:"p"`
	ProviderRefresh string      `json:"pr,omitempty"`
}

// serveAuthorize checks an authorization request and shows the consent
// page. Until the client and its redirect URI are known good, errors are
// shown to the user; after, they go back to the client (RFC 6749 section
// 4.1.2.1).
func (f *Facade) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := f.lookupClient(r.Context(), q.Get("client_id"))
	if err != nil {
		f.errorPage(w, r, err)
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !slices.Contains(c.RedirectURIs, redirect) {
		f.errorPage(w, r, fmt.Errorf("redirect_uri %q is not one of the client's registered redirect URIs", redirect))
		return
	}
	req := authRequest{ClientID: c.ID, ClientName: c.Name, RedirectURI: redirect, State: q.Get("state"),
		Refresh: slices.Contains(c.GrantTypes, grantRenew)}
	fail := func(code, description string) {
		f.toClient(w, r, req, url.Values{"error": {code}, "error_description": {description}})
	}
	if len(req.State) > MaxStateBytes {
		req.State = ""
		fail("invalid_request", fmt.Sprintf("state is longer than %d bytes", MaxStateBytes))
		return
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "response_type must be code")
		return
	}
	req.Challenge = q.Get("code_challenge")
	if q.Get("code_challenge_method") != "S256" || len(req.Challenge) != 43 || b64check(req.Challenge) != nil {
		fail("invalid_request", "PKCE is required: send code_challenge (43 base64url characters) with code_challenge_method S256")
		return
	}
	switch res := q["resource"]; {
	case len(res) == 0:
		req.Resource = f.opts.Resource
	case len(res) == 1 && res[0] == f.opts.Resource:
		req.Resource = res[0]
	default:
		fail("invalid_target", "this server issues tokens for "+f.opts.Resource+" only")
		return
	}
	for _, s := range strings.Fields(q.Get("scope")) {
		if slices.Contains(f.scopes.Supported(), s) && !slices.Contains(req.Scopes, s) {
			req.Scopes = append(req.Scopes, s)
		}
	}
	if len(req.Scopes) == 0 {
		req.Scopes = f.opts.DefaultScopes
	}
	browser := f.browser(w, r)
	sealed, err := f.seal(sealConsent, consent{Req: req, Browser: browser}, f.now().Add(loginTTL))
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	name := c.Name
	if name == "" {
		name = c.ID
	}
	redirectURL, _ := url.Parse(redirect)
	page := consentPage{Client: name, ClientID: c.ID, RedirectHost: redirectURL.Scheme + "://" + redirectURL.Host,
		Scopes: req.Scopes, Consent: sealed, Action: PathAuthorize}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	secureHeaders(w)
	consentTemplate().Execute(w, page)
}

// browser returns the hash of the browser cookie, setting one if the
// browser has none.
func (f *Facade) browser(w http.ResponseWriter, r *http.Request) string {
	v := ""
	if ck, err := r.Cookie(browserCookie); err == nil && len(ck.Value) == 22 {
		v = ck.Value
	} else {
		v = randomToken()
		http.SetCookie(w, &http.Cookie{Name: browserCookie, Value: v, Path: "/oauth/", HttpOnly: true,
			Secure: strings.HasPrefix(f.opts.Issuer, "https://"), SameSite: http.SameSiteLaxMode, MaxAge: int(loginTTL.Seconds())})
	}
	return hashHex(v)
}

// sameBrowser reports whether r comes from the browser whose cookie hash is
// want.
func sameBrowser(r *http.Request, want string) bool {
	ck, err := r.Cookie(browserCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(hashHex(ck.Value)), []byte(want)) == 1
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// serveConsent takes the consent page's answer: a refusal goes back to the
// client, an approval on to the provider's login.
func (f *Facade) serveConsent(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 32<<10)
	if err := r.ParseForm(); err != nil {
		f.errorPage(w, r, errors.New("the consent form could not be read"))
		return
	}
	var c consent
	if _, err := f.open(sealConsent, r.PostForm.Get("consent"), &c); err != nil {
		f.errorPage(w, r, fmt.Errorf("this consent page expired or was altered (%w); start again from your application", err))
		return
	}
	if !sameBrowser(r, c.Browser) {
		f.errorPage(w, r, errors.New("this consent was started in another browser; start again from your application"))
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		f.toClient(w, r, c.Req, url.Values{"error": {"access_denied"}, "error_description": {"the user declined"}})
		return
	}
	meta, err := f.providerMeta(r.Context())
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	l := login{consent: c, Verifier: randomToken() + randomToken(), Nonce: randomToken()}
	sealed, err := f.seal(sealLogin, l, f.now().Add(loginTTL))
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	f.redirect(w, r, meta.AuthorizationEndpoint, url.Values{
		"response_type": {"code"}, "client_id": {f.opts.Provider.ClientID}, "redirect_uri": {f.opts.Issuer + PathCallback},
		"scope": {strings.Join(f.opts.Provider.Scopes, " ")}, "state": {sealed}, "nonce": {l.Nonce},
		"code_challenge": {s256(l.Verifier)}, "code_challenge_method": {"S256"},
	})
}

// providerTokens is what this package reads of the provider's token answer.
type providerTokens struct {
	IDToken      string `json:"id_token"`
	RefreshToken string `json:"refresh_token"`
}

// maxProviderRefreshBytes bounds the provider refresh token an authorization
// code or refresh token carries (sealed states hold 4 KiB); a longer one is
// left out, and refreshing then does not ask the provider again.
const maxProviderRefreshBytes = 2048

// serveCallback finishes the sign-in at the provider: it redeems the
// provider's code, reads who signed in from the ID token, and sends the
// client its own authorization code.
func (f *Facade) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var l login
	if _, err := f.open(sealLogin, q.Get("state"), &l); err != nil {
		f.errorPage(w, r, fmt.Errorf("this sign-in expired or was altered (%w); start again from your application", err))
		return
	}
	if !sameBrowser(r, l.Browser) {
		f.errorPage(w, r, errors.New("this sign-in was started in another browser; start again from your application"))
		return
	}
	req := l.Req
	fail := func(code, description string) {
		f.toClient(w, r, req, url.Values{"error": {code}, "error_description": {description}})
	}
	if e := q.Get("error"); e != "" {
		fail("access_denied", "the identity provider refused the sign-in: "+e)
		return
	}
	meta, err := f.providerMeta(r.Context())
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	var tokens providerTokens
	err = f.postForm(r.Context(), meta.TokenEndpoint, url.Values{"grant_type": {grantCode}, "code": {q.Get("code")},
		"redirect_uri": {f.opts.Issuer + PathCallback}, "code_verifier": {l.Verifier}}, &tokens)
	var pe *providerError
	if errors.As(err, &pe) {
		fail("access_denied", pe.Error())
		return
	}
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	who, principal, err := f.signedIn(r.Context(), tokens.IDToken, l.Nonce)
	if errors.Is(err, ErrUnavailable) {
		f.serverError(w, r, err)
		return
	}
	if err != nil {
		f.log.WarnContext(r.Context(), "oauth: a sign-in was refused", "error", err)
		fail("access_denied", err.Error())
		return
	}
	g := codeGrant{Req: req, Tenant: who, Principal: principal, ProviderRefresh: tokens.RefreshToken}
	g.Req.State = "" // it travels beside the code
	if len(g.ProviderRefresh) > maxProviderRefreshBytes {
		g.ProviderRefresh = ""
	}
	code, err := f.seal(sealCode, g, f.now().Add(codeTTL))
	if err != nil {
		f.serverError(w, r, err)
		return
	}
	f.toClient(w, r, req, url.Values{"code": {code}})
}

// signedIn checks the provider's ID token and returns the tenant and
// principal of who signed in.
func (f *Facade) signedIn(ctx context.Context, idToken, nonce string) (string, string, error) {
	if idToken == "" {
		return "", "", errors.New("the identity provider answered without an ID token (is openid among its scopes?)")
	}
	claims, err := f.idTokens.verify(ctx, idToken)
	if err != nil {
		return "", "", fmt.Errorf("the identity provider's ID token: %w", err)
	}
	if n, _ := claims["nonce"].(string); subtle.ConstantTimeCompare([]byte(n), []byte(nonce)) != 1 {
		return "", "", errors.New("the identity provider's ID token is for another sign-in (nonce)")
	}
	p := f.opts.Provider
	tenantClaim, principalClaim := p.TenantClaim, p.PrincipalClaim
	if tenantClaim == "" {
		tenantClaim = "tenant"
	}
	if principalClaim == "" {
		principalClaim = "sub"
	}
	t, present := claims[tenantClaim].(string)
	if !present && p.DefaultTenant != "" {
		t = p.DefaultTenant
	}
	if err := tenant.Validate(t); err != nil {
		return "", "", fmt.Errorf("your account has no usable tenant (claim %s): %w", tenantClaim, err)
	}
	principal, _ := claims[principalClaim].(string)
	if err := tenant.ValidatePrincipal(principal); err != nil {
		return "", "", fmt.Errorf("your account has no usable name (claim %s): %w", principalClaim, err)
	}
	return t, principal, nil
}

// toClient sends the browser back to the client's redirect URI with params,
// the client's state and the facade's issuer as iss (RFC 9207), so a client
// talking to several servers knows which one answered.
func (f *Facade) toClient(w http.ResponseWriter, r *http.Request, req authRequest, params url.Values) {
	params.Set("state", req.State)
	params.Set("iss", f.opts.Issuer)
	f.redirect(w, r, req.RedirectURI, params)
}

// redirect sends the browser to target with params added to its query.
func (f *Facade) redirect(w http.ResponseWriter, r *http.Request, target string, params url.Values) {
	u, err := url.Parse(target)
	if err != nil {
		f.errorPage(w, r, err)
		return
	}
	q := u.Query()
	for k, vs := range params {
		if len(vs) == 1 && vs[0] == "" {
			continue
		}
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// errorPage shows the user an error that cannot go back to the client.
func (f *Facade) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrUnavailable) {
		f.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	secureHeaders(w)
	w.WriteHeader(http.StatusBadRequest)
	errorTemplate().Execute(w, err.Error())
}

// serverError answers a failure of the facade or the provider.
func (f *Facade) serverError(w http.ResponseWriter, r *http.Request, err error) {
	f.log.ErrorContext(r.Context(), "oauth: facade failed", "path", r.URL.Path, "error", err)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	secureHeaders(w)
	w.WriteHeader(http.StatusServiceUnavailable)
	errorTemplate().Execute(w, "Sign-in is unavailable right now; try again shortly.")
}

// secureHeaders keeps the facade's pages out of frames (clickjacking of the
// consent button) and caches.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
}

// b64check reports whether s is unpadded base64url.
func b64check(s string) error {
	_, err := b64(s)
	return err
}

type consentPage struct {
	Client, ClientID, RedirectHost, Consent, Action string
	Scopes                                          []string
}

// The pages are parsed on first use, not at every cold start of the gateway.
var consentTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("consent").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Allow access to Switchboard?</title></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">
<h1>Allow {{.Client}} to use Switchboard?</h1>
<p>The application <b>{{.Client}}</b> (client id <code>{{.ClientID}}</code>) asks to act for you on this Switchboard
server, and will receive its answer at <code>{{.RedirectHost}}</code>.</p>
<p>It asks for: {{range .Scopes}}<code>{{.}}</code> {{end}}</p>
<p>Allow it only if you started this from that application. You will sign in next.</p>
<form method="POST" action="{{.Action}}">
<input type="hidden" name="consent" value="{{.Consent}}">
<button type="submit" name="decision" value="allow">Allow and sign in</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></body></html>
`))
})

var errorTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Sign-in failed</title></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">
<h1>Sign-in failed</h1><p>{{.}}</p></body></html>
`))
})
