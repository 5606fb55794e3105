// Package approvalpage serves the page on which a person approves or denies
// a connector call that waits for approval (package connector's page flow,
// for clients that cannot show an elicitation form): GET /approvals/<id>
// shows the call plainly (connector, tool, a summary of its arguments, who
// asked, when the approval expires) with Approve and Deny buttons, which POST
// to the same page (a relative link, so that it holds under a path prefix a
// front door adds, such as a REST API's stage); the answer is a page saying
// what was decided.
//
//	h, err := approvalpage.New(approvalpage.Options{Approver: svc, Authenticate: gw.Authenticate, Tokens: keyring})
//	mux.Handle("/approvals/", h)
//
// The page takes its caller from the request through the same authenticator
// as MCP requests, and shows and decides only approvals of that caller's
// tenant and principal. A decision carries a CSRF token: sealed by Tokens
// (the gateway's request-state key ring, so any instance accepts it) and
// bound to the caller, the approval id and a random nonce that the page also
// sets in a SameSite=Strict, HttpOnly cookie; a POST whose Origin is neither
// the page's own nor an allowed one is refused. The page has no script; its
// headers forbid framing, referrers, caching and every resource but its own
// style sheet.
package approvalpage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Approval is a pending or decided approval of a connector call, as the
// page shows it (package connector's Approval, whose JSON it reads).
type Approval struct {
	ID        string    `json:"id"`
	Connector string    `json:"connector"`
	Tool      string    `json:"tool"`
	Arguments string    `json:"arguments"` // a summary of the call's arguments
	Principal string    `json:"principal"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Statuses of an approval, package connector's.
const (
	StatusPending  = "PENDING"
	StatusGranted  = "GRANTED"
	StatusDenied   = "DENIED"
	StatusConsumed = "CONSUMED"
	StatusExpired  = "EXPIRED"
)

// Approver reads and decides the approvals of the page flow, for the caller
// only, with package fault's kinds: not found for an id not in the caller's
// tenant, invalid for another principal's approval or (deciding) an expired
// one, conflict for one already decided. [Remote] calls the connectors
// function; approvalpage/local adapts the connector service in process.
// This package does not import package connector, so the gateway links the
// page without it.
type Approver interface {
	Get(ctx context.Context, c tenant.Caller, id string) (Approval, error)
	Approve(ctx context.Context, c tenant.Caller, id string) (Approval, error)
	Deny(ctx context.Context, c tenant.Caller, id string) (Approval, error)
}

// Tokens seals and opens the page's CSRF tokens. [*elicit.Keyring] is one.
type Tokens interface {
	Seal(b elicit.Binding, s elicit.State) (string, error)
	Open(token string, b elicit.Binding, now time.Time) (elicit.State, error)
}

// ErrUnauthenticated is what Authenticate returns (wrapped) for a request
// without valid credentials; any other error means authentication could not
// be checked.
var ErrUnauthenticated = errors.New("not authenticated")

// Options configures [New].
type Options struct {
	Approver Approver
	// Authenticate returns who a request acts for: the gateway's own check of
	// bearer keys (or its anonymous caller), the one MCP requests pass.
	Authenticate func(r *http.Request) (tenant.Caller, error)
	Tokens       Tokens
	// AllowOrigin says whether a browser origin other than the page's own
	// may post decisions (the gateway's allowed origins). If nil, only the
	// page's own origin may.
	AllowOrigin func(origin string) bool
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives refusals worth an operator's attention (a failing
	// store). If nil, they are discarded.
	Logger *slog.Logger
}

// Prefix is the path under which the page is served.
const Prefix = "/approvals/"

// tokenMethod is the method a CSRF token is bound to, which no MCP request
// has: a request state can never pass for a token, nor a token for one.
const tokenMethod = "approvals/decide"

// tokenTTL is how long a page's buttons stay valid.
const tokenTTL = 15 * time.Minute

// maxFormBytes bounds a decision's body: a token and a word.
const maxFormBytes = 16 << 10

type handler struct {
	opts Options
	now  func() time.Time
	log  *slog.Logger
}

// New returns the handler of [Prefix].
func New(opts Options) (http.Handler, error) {
	if opts.Approver == nil || opts.Authenticate == nil || opts.Tokens == nil {
		return nil, errors.New("approvalpage: Approver, Authenticate and Tokens are required")
	}
	h := &handler{opts: opts, now: opts.Now, log: opts.Logger}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	id, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || !tenant.IsKeyID(id) {
		h.render(w, http.StatusNotFound, page{Title: "No such approval", Message: "This address names no approval. Open the link the tool's answer gave."})
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r, id)
	case http.MethodPost:
		h.decide(w, r, id)
	default:
		hdr.Set("Allow", "GET, HEAD, POST")
		h.render(w, http.StatusMethodNotAllowed, page{Title: "Method not allowed", Message: r.Method + " is not allowed here: open the page, then use its buttons."})
	}
}

// caller authenticates r, or answers the refusal and returns false.
func (h *handler) caller(w http.ResponseWriter, r *http.Request) (tenant.Caller, bool) {
	c, err := h.opts.Authenticate(r)
	if errors.Is(err, ErrUnauthenticated) {
		// Basic lets a browser ask for the key (as the password) itself.
		w.Header().Set("WWW-Authenticate", `Bearer, Basic realm="Switchboard approvals", charset="UTF-8"`)
		h.render(w, http.StatusUnauthorized, page{Title: "Sign in needed",
			Message: "This page needs the API key your MCP client uses: send it as a bearer token, or give it as the password when the browser asks."})
		return c, false
	}
	if err != nil {
		h.log.ErrorContext(r.Context(), "approval page: authentication failed", "error", err)
		h.render(w, http.StatusServiceUnavailable, page{Title: "Try again shortly", Message: "Authentication is unavailable; reload the page in a moment."})
		return c, false
	}
	return c, true
}

// pending reads approval id for c, or answers the refusal, or the page of
// an approval no longer pending, and returns false.
func (h *handler) pending(w http.ResponseWriter, r *http.Request, c tenant.Caller, id string) (Approval, bool) {
	a, ok := h.load(w, r, c, id)
	if ok && a.Status != StatusPending {
		h.renderDecided(w, a)
		return a, false
	}
	return a, ok
}

// load reads approval id for c, or answers the refusal and returns false.
func (h *handler) load(w http.ResponseWriter, r *http.Request, c tenant.Caller, id string) (Approval, bool) {
	a, err := h.opts.Approver.Get(r.Context(), c, id)
	switch kindOf(err) {
	case "":
		return a, true
	case fault.KindNotFound:
		h.render(w, http.StatusNotFound, page{Title: "No such approval",
			Message: "There is no such approval for your tenant: it never existed, or it expired a while ago. Call the tool again to be asked again."})
	case fault.KindInvalid:
		h.render(w, http.StatusForbidden, page{Title: "Not yours to decide",
			Message: "This approval was asked by another principal; only they may see or decide it."})
	default:
		h.log.ErrorContext(r.Context(), "approval page: reading the approval failed", "approval_id", id, "error", err)
		h.render(w, http.StatusServiceUnavailable, page{Title: "Try again shortly", Message: "The approval could not be read; reload the page in a moment."})
	}
	return Approval{}, false
}

func (h *handler) show(w http.ResponseWriter, r *http.Request, id string) {
	c, ok := h.caller(w, r)
	if !ok {
		return
	}
	a, ok := h.pending(w, r, c, id)
	if !ok {
		return
	}
	nonce := h.nonce(r)
	token, err := h.opts.Tokens.Seal(binding(c, id, nonce), elicit.State{Expires: h.now().Add(tokenTTL)})
	if err != nil {
		h.log.ErrorContext(r.Context(), "approval page: sealing a CSRF token failed", "error", err)
		h.render(w, http.StatusInternalServerError, page{Title: "Something went wrong", Message: "The page could not be prepared; reload it."})
		return
	}
	http.SetCookie(w, nonceCookie(r, nonce))
	h.render(w, http.StatusOK, page{Title: "Approve this call?", Approval: &a, Token: token, Action: id,
		Message: "A call is waiting for your approval. It runs only if you approve it and your MCP client then calls again with the approval id."})
}

// renderDecided shows an approval that is no longer pending: 410 for one
// expired, 409 for one decided or used.
func (h *handler) renderDecided(w http.ResponseWriter, a Approval) {
	if a.Status == StatusExpired {
		h.render(w, http.StatusGone, page{Title: "This approval expired", Approval: &a,
			Message: "Nothing was called. Call the tool again to be asked again."})
		return
	}
	h.render(w, http.StatusConflict, page{Title: "Already decided", Approval: &a, Message: decidedMessage(a.Status)})
}

func decidedMessage(status string) string {
	switch status {
	case StatusGranted:
		return "This call was already approved: your MCP client may now call again with the approval id."
	case StatusDenied:
		return "This call was already denied: it will not run."
	case StatusConsumed:
		return "This call was approved and has run; an approval is used once."
	}
	return "This approval can no longer be decided."
}

func (h *handler) decide(w http.ResponseWriter, r *http.Request, id string) {
	if !h.sameOrigin(r) {
		h.render(w, http.StatusForbidden, page{Title: "Refused", Message: "Decisions are accepted only from this server's own page."})
		return
	}
	c, ok := h.caller(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		h.render(w, http.StatusBadRequest, page{Title: "Bad request", Message: "The form could not be read; reload the page and use its buttons."})
		return
	}
	decision := r.PostForm.Get("decision")
	if decision != "approve" && decision != "deny" {
		h.render(w, http.StatusBadRequest, page{Title: "Bad request", Message: "The form must say approve or deny; reload the page and use its buttons."})
		return
	}
	cookie, err := r.Cookie(cookieName(r))
	if err != nil || !validNonce(cookie.Value) {
		h.render(w, http.StatusForbidden, page{Title: "Reload the page", Message: "The form's cookie is missing: reload the page, then decide again."})
		return
	}
	if _, err := h.opts.Tokens.Open(r.PostForm.Get("csrf"), binding(c, id, cookie.Value), h.now()); err != nil {
		h.render(w, http.StatusForbidden, page{Title: "Reload the page",
			Message: "The form was not issued to you for this approval, or it is too old: reload the page, then decide again."})
		return
	}
	if _, ok := h.pending(w, r, c, id); !ok {
		return
	}
	decideFn, title := h.opts.Approver.Approve, "Approved"
	if decision == "deny" {
		decideFn, title = h.opts.Approver.Deny, "Denied"
	}
	a, err := decideFn(r.Context(), c, id)
	switch kindOf(err) {
	case "":
		msg := "The call will run once, when your MCP client calls again with the approval id. You may close this page."
		if decision == "deny" {
			msg = "The call will not run. You may close this page."
		}
		h.render(w, http.StatusOK, page{Title: title, Approval: &a, Message: msg})
	case fault.KindConflict:
		h.render(w, http.StatusConflict, page{Title: "Already decided", Message: "This approval was decided meanwhile; reload the page to see how."})
	case fault.KindInvalid:
		h.render(w, http.StatusGone, page{Title: "This approval expired", Message: "Nothing was called. Call the tool again to be asked again."})
	default:
		h.log.ErrorContext(r.Context(), "approval page: recording a decision failed", "approval_id", id, "error", err)
		h.render(w, http.StatusServiceUnavailable, page{Title: "Try again shortly", Message: "The decision could not be recorded; reload the page and decide again."})
	}
}

// kindOf returns the kind of err, "" for nil.
func kindOf(err error) fault.Kind {
	if err == nil {
		return ""
	}
	return fault.KindOf(err)
}

// sameOrigin reports whether r may come from the page: no Origin (not a
// browser), the page's own or an allowed one. The page's no-referrer policy
// makes browsers send "Origin: null" with its own forms, so "null" passes
// when Sec-Fetch-Site, which no page can set, says the form was same-origin.
func (h *handler) sameOrigin(r *http.Request) bool {
	switch origin := r.Header.Get("Origin"); {
	case origin == "" || origin == ownOrigin(r):
		return true
	case origin == "null":
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	default:
		return h.opts.AllowOrigin != nil && h.opts.AllowOrigin(origin)
	}
}

// binding is what a CSRF token is bound to: the caller, the approval and the
// nonce of the caller's cookie.
func binding(c tenant.Caller, id, nonce string) elicit.Binding {
	args, _ := json.Marshal(nonce)
	return elicit.Binding{Caller: c, Method: tokenMethod, Name: id, Arguments: args}
}

// nonce returns the nonce of r's cookie, or a new one: a page open in
// another tab keeps working.
func (h *handler) nonce(r *http.Request) string {
	if ck, err := r.Cookie(cookieName(r)); err == nil && validNonce(ck.Value) {
		return ck.Value
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validNonce(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// secure reports whether the client reached the server over HTTPS (behind
// API Gateway, as X-Forwarded-Proto says).
func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}

// ownOrigin returns the origin the client used to reach this server.
func ownOrigin(r *http.Request) string {
	if secure(r) {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// cookieName is __Host- prefixed over HTTPS, where the browser then holds it
// to this host, path / and Secure. Over HTTP the cookie names no path, so
// the browser holds it to the page's folder: /approvals, or /<stage>/approvals
// behind a stand-in of a REST API (see nonceCookie).
func cookieName(r *http.Request) string {
	if secure(r) {
		return "__Host-switchboard-approval"
	}
	return "switchboard-approval"
}

// nonceCookie is the cookie holding nonce. Its path is the page's folder
// as the browser sees it (RFC 6265's default path, the cookie naming none),
// which a fixed /approvals/ would miss behind a front door that adds a
// prefix; over HTTPS, / (see cookieName).
func nonceCookie(r *http.Request, nonce string) *http.Cookie {
	ck := &http.Cookie{Name: cookieName(r), Value: nonce, MaxAge: int(tokenTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)}
	if ck.Secure {
		ck.Path = "/"
	}
	return ck
}

// page is what the template shows.
type page struct {
	Title, Message string
	Approval       *Approval
	Token, Action  string
}

// render answers the page p. Every value it shows is escaped with
// html.EscapeString and stands in a text node or a double-quoted attribute;
// html/template would do the same, but linking it keeps every exported
// method of the gateway's binary alive (text/template calls methods by
// name), which made the deployed gateway 4 MB larger.
func (h *handler) render(w http.ResponseWriter, status int, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer"><title>` + e(p.Title) + ` · Switchboard</title>
<style>` + style + `</style></head>
<body><h1>` + e(p.Title) + `</h1>
<p id="message">` + e(p.Message) + `</p>
`)
	if a := p.Approval; a != nil {
		b.WriteString(`<dl>
<dt>Connector</dt><dd id="connector">` + e(a.Connector) + `</dd>
<dt>Tool</dt><dd id="tool">` + e(a.Tool) + `</dd>
<dt>Arguments</dt><dd><pre id="arguments">` + e(readable(a.Arguments)) + `</pre></dd>
<dt>Asked by</dt><dd id="principal">` + e(a.Principal) + `</dd>
<dt>Status</dt><dd id="status">` + e(a.Status) + `</dd>
<dt>Expires</dt><dd id="expires">` + a.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC") + `</dd>
<dt>Approval id</dt><dd><code id="approval-id">` + e(a.ID) + `</code></dd>
</dl>
`)
	}
	if p.Token != "" {
		for _, d := range []struct{ value, label string }{{"approve", "Approve"}, {"deny", "Deny"}} {
			b.WriteString(`<form method="post" action="` + e(p.Action) + `"><input type="hidden" name="csrf" value="` + e(p.Token) +
				`"><button id="` + d.value + `" name="decision" value="` + d.value + `">` + d.label + `</button></form>
`)
		}
	}
	b.WriteString("</body></html>\n")
	io.WriteString(w, b.String())
}

// readable returns an approval's summary of arguments indented, one field a
// line, with <, > and & as themselves (render escapes them for HTML);
// a summary cut short, no longer JSON, as it is.
func readable(summary string) string {
	var v any
	if json.Unmarshal([]byte(summary), &v) != nil {
		return summary
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return summary
	}
	return strings.TrimSuffix(b.String(), "\n")
}

const style = `body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#111}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem;margin:0}
form{display:inline}button{font-size:1rem;padding:.4rem 1.2rem;margin:1rem .5rem 0 0}`

// csp allows nothing but the page's own style element and forms posting to
// this server.
var csp = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	sum := sha256.Sum256([]byte(style))
	return base64.StdEncoding.EncodeToString(sum[:])
}
