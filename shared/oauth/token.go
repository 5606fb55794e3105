package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
)

// refreshGrant is what a refresh token carries. Until is fixed at sign-in:
// refreshing never extends a session past it.
type refreshGrant struct {
	ClientID        string    `json:"c"`
	Tenant          string    `json:"t"`
	Principal       string    `json:"p"`
	Scopes          []string  `json:"sc"`
	Resource        string    `json:"rs"`
	ProviderRefresh string    `json:"pr,omitempty"`
	Until           time.Time `json:"u"`
}

// accessClaims are the claims of the facade's access tokens (RFC 9068).
type accessClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	Jti      string `json:"jti"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope,omitempty"`
	Tenant   string `json:"tenant"`
}

// serveToken is the token endpoint: authorization codes (with their PKCE
// verifier) and refresh tokens, each usable once.
func (f *Facade) serveToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the token request must be a form of at most 64 KiB")
		return
	}
	form := r.PostForm
	clientID := form.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(user); err == nil {
			user = u
		}
		clientID = user
	}
	c, err := f.lookupClient(r.Context(), clientID)
	if errors.Is(err, ErrUnavailable) {
		f.log.ErrorContext(r.Context(), "oauth: looking up a client failed", "error", err)
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "retry shortly")
		return
	}
	if err == nil {
		err = c.authenticate(r)
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	switch form.Get("grant_type") {
	case grantCode:
		f.redeemCode(w, r, c)
	case grantRenew:
		f.refresh(w, r, c)
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
}

// redeemCode answers an authorization_code grant.
func (f *Facade) redeemCode(w http.ResponseWriter, r *http.Request, c client) {
	form := r.PostForm
	var g codeGrant
	s, err := f.open(sealCode, form.Get("code"), &g)
	switch {
	case err != nil:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code is not valid: "+err.Error())
		return
	case g.Req.ClientID != c.ID:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code was issued to another client")
		return
	case form.Get("redirect_uri") != g.Req.RedirectURI:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		return
	case s256(form.Get("code_verifier")) != g.Req.Challenge:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	case form.Has("resource") && form.Get("resource") != g.Req.Resource:
		writeOAuthError(w, http.StatusBadRequest, "invalid_target", "the authorization code is for "+g.Req.Resource)
		return
	}
	if !f.spendOrRefuse(w, r, sealCode, s) {
		return
	}
	grant := refreshGrant{ClientID: c.ID, Tenant: g.Tenant, Principal: g.Principal, Scopes: g.Req.Scopes,
		Resource: g.Req.Resource, ProviderRefresh: g.ProviderRefresh, Until: f.now().Add(f.opts.RefreshTokenTTL)}
	f.issue(w, r, grant, g.Req.Refresh)
}

// refresh answers a refresh_token grant: the token is spent and a new one
// issued (rotation), after the provider confirms the sign-in still stands
// when it gave a refresh token of its own.
func (f *Facade) refresh(w http.ResponseWriter, r *http.Request, c client) {
	form := r.PostForm
	var g refreshGrant
	s, err := f.open(sealRefresh, form.Get("refresh_token"), &g)
	switch {
	case err != nil:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is not valid: "+err.Error())
		return
	case g.ClientID != c.ID:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	case form.Has("resource") && form.Get("resource") != g.Resource:
		writeOAuthError(w, http.StatusBadRequest, "invalid_target", "the refresh token is for "+g.Resource)
		return
	}
	if asked := strings.Fields(form.Get("scope")); len(asked) > 0 {
		for _, a := range asked {
			if !slices.Contains(g.Scopes, a) {
				writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "scope "+a+" was not granted; sign in again to ask for it")
				return
			}
		}
		g.Scopes = asked
	}
	if !f.spendOrRefuse(w, r, sealRefresh, s) {
		return
	}
	if g.ProviderRefresh != "" {
		meta, err := f.providerMeta(r.Context())
		var tokens providerTokens
		if err == nil {
			err = f.postForm(r.Context(), meta.TokenEndpoint, url.Values{"grant_type": {grantRenew}, "refresh_token": {g.ProviderRefresh}}, &tokens)
		}
		var pe *providerError
		if errors.As(err, &pe) {
			writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the identity provider no longer accepts this sign-in; sign in again")
			return
		}
		if err != nil {
			f.log.ErrorContext(r.Context(), "oauth: refreshing at the provider failed", "error", err)
			writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "retry shortly")
			return
		}
		if tokens.RefreshToken != "" && len(tokens.RefreshToken) <= maxProviderRefreshBytes {
			g.ProviderRefresh = tokens.RefreshToken
		}
	}
	f.issue(w, r, g, true)
}

// spendOrRefuse spends a code or refresh token, answering the request itself
// when it cannot be spent.
func (f *Facade) spendOrRefuse(w http.ResponseWriter, r *http.Request, kind string, s elicit.State) bool {
	err := f.spend(r.Context(), kind, s)
	if errors.Is(err, errReplayed) {
		f.log.WarnContext(r.Context(), "oauth: a "+kind+" was presented again", "id", s.ID)
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the "+kind+" was already used")
		return false
	}
	if err != nil {
		f.log.ErrorContext(r.Context(), "oauth: spending a "+kind+" failed", "error", err)
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "retry shortly")
		return false
	}
	return true
}

// issue answers a token response: an access token for g's resource and,
// when the client may refresh, a refresh token valid until g.Until.
func (f *Facade) issue(w http.ResponseWriter, r *http.Request, g refreshGrant, withRefresh bool) {
	now := f.now()
	exp := now.Add(f.opts.AccessTokenTTL)
	at, err := signES256(f.signer.Key, f.signer.ID, "at+jwt", accessClaims{
		Iss: f.opts.Issuer, Sub: g.Principal, Aud: g.Resource, Exp: exp.Unix(), Iat: now.Unix(), Jti: randomToken(),
		ClientID: g.ClientID, Scope: strings.Join(g.Scopes, " "), Tenant: g.Tenant,
	})
	if err != nil {
		f.log.ErrorContext(r.Context(), "oauth: signing an access token failed", "error", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "the token could not be issued")
		return
	}
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int64(f.opts.AccessTokenTTL.Seconds()),
		"scope": strings.Join(g.Scopes, " ")}
	if withRefresh && now.Before(g.Until) {
		rt, err := f.seal(sealRefresh, g, g.Until)
		if err != nil {
			g.ProviderRefresh = "" // too long to carry: refresh without asking the provider
			rt, err = f.seal(sealRefresh, g, g.Until)
		}
		if err != nil {
			f.log.ErrorContext(r.Context(), "oauth: sealing a refresh token failed", "error", err)
		} else {
			resp["refresh_token"] = rt
		}
	}
	writeJSON(w, http.StatusOK, resp)
}
