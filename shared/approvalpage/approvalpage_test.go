package approvalpage_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var tokenRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// opened is a page as a browser received it.
type opened struct {
	rec    *httptest.ResponseRecorder
	token  string
	cookie *http.Cookie
}

// open GETs approval id's page as c.
func (e *env) open(t *testing.T, c tenant.Caller, id string) opened {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/approvals/"+id, nil)
	req.Header.Set("Authorization", bearer(c))
	rec := httptest.NewRecorder()
	e.page.ServeHTTP(rec, req)
	o := opened{rec: rec}
	if m := tokenRE.FindStringSubmatch(rec.Body.String()); m != nil {
		o.token = html.UnescapeString(m[1])
	}
	if cks := rec.Result().Cookies(); len(cks) == 1 {
		o.cookie = cks[0]
	}
	return o
}

// post is a decision as a browser would send it from the page.
type post struct {
	caller   tenant.Caller
	id       string
	decision string
	token    string
	cookie   *http.Cookie
	origin   string
	site     string // Sec-Fetch-Site
}

func (e *env) post(p post) *httptest.ResponseRecorder {
	form := url.Values{"decision": {p.decision}, "csrf": {p.token}}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/approvals/"+p.id, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", bearer(p.caller))
	if p.origin != "" {
		req.Header.Set("Origin", p.origin)
	}
	if p.site != "" {
		req.Header.Set("Sec-Fetch-Site", p.site)
	}
	if p.cookie != nil {
		req.AddCookie(p.cookie)
	}
	rec := httptest.NewRecorder()
	e.page.ServeHTTP(rec, req)
	return rec
}

const self = "http://127.0.0.1:8080"

func TestPageShowsThePendingCallPlainlyAndEscaped(t *testing.T) {
	e := newEnv(t)
	id := e.ask(t, e.alice, `<script>alert("x")</script> 10 EUR`)
	o := e.open(t, e.alice, id)
	if o.rec.Code != http.StatusOK {
		t.Fatalf("GET = %d\n%s", o.rec.Code, o.rec.Body)
	}
	body := o.rec.Body.String()
	for _, want := range []string{`id="connector">pay<`, `id="tool">charge<`, `id="principal">alice<`, `id="status">PENDING<`,
		`10 EUR`, `&lt;script&gt;alert(`, `id="approve"`, `id="deny"`, `action="` + id + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Errorf("the page holds an unescaped script element:\n%s", body)
	}
	hdr := o.rec.Header()
	for name, want := range map[string]string{
		"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
	} {
		if got := hdr.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
		!strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if o.cookie == nil || !o.cookie.HttpOnly || o.cookie.SameSite != http.SameSiteStrictMode || o.token == "" {
		t.Fatalf("cookie = %+v, token %q; want an HttpOnly SameSite=Strict cookie and a token", o.cookie, o.token)
	}
}

func TestDecisions(t *testing.T) {
	for _, via := range approvers {
		t.Run(via.name, func(t *testing.T) { testDecisions(t, newEnvWith(t, via.build)) })
	}
}

func testDecisions(t *testing.T, e *env) {
	bob := tenant.Caller{Tenant: e.alice.Tenant, Principal: "bob"}
	mallory := newCaller("alice") // another tenant's alice
	tests := []struct {
		name string
		// prepare returns the decision to send for approval id, opened by alice.
		prepare    func(t *testing.T, id string, o opened) post
		wantStatus int
		wantText   string
		wantAfter  string // the approval's status afterwards
	}{
		{"approve grants the approval", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusOK, "Approved", connector.ApprovalGranted},
		{"deny denies it", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "deny", o.token, o.cookie, self, ""}
		}, http.StatusOK, "Denied", connector.ApprovalDenied},
		{"a request without Origin (not a browser) is served on its token", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "", ""}
		}, http.StatusOK, "Approved", connector.ApprovalGranted},
		{"an allowed origin may post", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "https://console.example.com", ""}
		}, http.StatusOK, "Approved", connector.ApprovalGranted},
		{"a missing token is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", "", o.cookie, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"a tampered token is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token[:len(o.token)-2] + "AA", o.cookie, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"a token of another approval is refused", func(t *testing.T, id string, o opened) post {
			other := e.open(t, e.alice, e.ask(t, e.alice, "1 EUR"))
			return post{e.alice, id, "approve", other.token, o.cookie, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"a missing cookie is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, nil, self, ""}
		}, http.StatusForbidden, "cookie is missing", connector.ApprovalPending},
		{"another cookie than the token's is refused", func(t *testing.T, id string, o opened) post {
			ck := *o.cookie
			ck.Value = strings.Repeat("ab", 16)
			return post{e.alice, id, "approve", o.token, &ck, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"a foreign origin is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "https://evil.example", ""}
		}, http.StatusForbidden, "own page", connector.ApprovalPending},
		{"an opaque origin is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "null", ""}
		}, http.StatusForbidden, "own page", connector.ApprovalPending},
		{"an opaque origin from another site is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "null", "cross-site"}
		}, http.StatusForbidden, "own page", connector.ApprovalPending},
		{"the page's own form, whose origin no-referrer makes opaque, is served", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "approve", o.token, o.cookie, "null", "same-origin"}
		}, http.StatusOK, "Approved", connector.ApprovalGranted},
		{"a decision other than approve or deny is refused", func(t *testing.T, id string, o opened) post {
			return post{e.alice, id, "maybe", o.token, o.cookie, self, ""}
		}, http.StatusBadRequest, "approve or deny", connector.ApprovalPending},
		{"alice's token does not serve another principal", func(t *testing.T, id string, o opened) post {
			return post{bob, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"another principal of the tenant cannot decide, even with a token of their own", func(t *testing.T, id string, o opened) post {
			bobs := e.open(t, bob, id)
			if bobs.rec.Code != http.StatusForbidden || bobs.token != "" {
				t.Fatalf("bob's GET = %d with token %q; want 403 without a form", bobs.rec.Code, bobs.token)
			}
			tok := e.open(t, bob, e.ask(t, bob, "5 EUR")).token // a token bob holds, for his own approval
			return post{bob, id, "approve", tok, o.cookie, self, ""}
		}, http.StatusForbidden, "", connector.ApprovalPending},
		{"another tenant sees no such approval", func(t *testing.T, id string, o opened) post {
			if got := e.open(t, mallory, id).rec.Code; got != http.StatusNotFound {
				t.Fatalf("the other tenant's GET = %d, want 404", got)
			}
			return post{mallory, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusForbidden, "not issued to you", connector.ApprovalPending},
		{"an expired approval is refused", func(t *testing.T, id string, o opened) post {
			e.now.Advance(connector.DefaultPageApprovalTTL)
			t.Cleanup(func() { e.now.Advance(-connector.DefaultPageApprovalTTL) })
			return post{e.alice, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusGone, "expired", connector.ApprovalExpired},
		{"a page too old is refused", func(t *testing.T, id string, o opened) post {
			e.now.Advance(16 * time.Minute)
			t.Cleanup(func() { e.now.Advance(-16 * time.Minute) })
			return post{e.alice, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusForbidden, "too old", ""},
		{"a decided approval is refused", func(t *testing.T, id string, o opened) post {
			if rec := e.post(post{e.alice, id, "deny", o.token, o.cookie, self, ""}); rec.Code != http.StatusOK {
				t.Fatalf("first decision = %d\n%s", rec.Code, rec.Body)
			}
			return post{e.alice, id, "approve", o.token, o.cookie, self, ""}
		}, http.StatusConflict, "already denied", connector.ApprovalDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := e.ask(t, e.alice, "10 EUR")
			o := e.open(t, e.alice, id)
			if o.rec.Code != http.StatusOK || o.token == "" || o.cookie == nil {
				t.Fatalf("GET = %d, token %q, cookie %v", o.rec.Code, o.token, o.cookie)
			}
			rec := e.post(tt.prepare(t, id, o))
			if rec.Code != tt.wantStatus || !strings.Contains(rec.Body.String(), tt.wantText) {
				t.Fatalf("POST = %d, want %d with %q:\n%s", rec.Code, tt.wantStatus, tt.wantText, rec.Body)
			}
			if tt.wantAfter != "" {
				if got := e.status(t, id); got != tt.wantAfter {
					t.Fatalf("the approval is %s, want %s", got, tt.wantAfter)
				}
			}
		})
	}
	if n := e.charges.Load(); n != 0 {
		t.Fatalf("the upstream ran %d times; deciding must not run the call", n)
	}
}

func TestAnApprovedCallRunsOnceOnRetry(t *testing.T) {
	e := newEnv(t)
	id := e.ask(t, e.alice, "10 EUR")
	o := e.open(t, e.alice, id)
	if rec := e.post(post{e.alice, id, "approve", o.token, o.cookie, self, ""}); rec.Code != http.StatusOK {
		t.Fatalf("approve = %d\n%s", rec.Code, rec.Body)
	}
	if _, err := e.retry(e.alice, "9999 EUR", id); err == nil {
		t.Fatal("a retry with other arguments ran")
	}
	if res, err := e.retry(e.alice, "10 EUR", id); err != nil || res.IsError {
		t.Fatalf("retry = %+v, %v", res, err)
	}
	if _, err := e.retry(e.alice, "10 EUR", id); err == nil {
		t.Fatal("a second retry ran")
	}
	if n := e.charges.Load(); n != 1 {
		t.Fatalf("the upstream ran %d times, want once", n)
	}
	if got := e.open(t, e.alice, id); got.rec.Code != http.StatusConflict || got.token != "" || !strings.Contains(got.rec.Body.String(), "has run") {
		t.Fatalf("GET of a used approval = %d\n%s", got.rec.Code, got.rec.Body)
	}
}

func TestRefusals(t *testing.T) {
	for _, via := range approvers {
		t.Run(via.name, func(t *testing.T) { testRefusals(t, newEnvWith(t, via.build)) })
	}
}

func testRefusals(t *testing.T, e *env) {
	expired := e.ask(t, e.alice, "20 EUR")
	e.now.Advance(connector.DefaultPageApprovalTTL - time.Second)
	id := e.ask(t, e.alice, "10 EUR") // fresh, while expired's time is up
	e.now.Advance(time.Second)
	tests := []struct {
		name, method, path, auth string
		wantStatus               int
		wantText                 string
	}{
		{"a request without credentials is asked for them", http.MethodGet, "/approvals/" + id, "", http.StatusUnauthorized, "API key"},
		{"PUT is not allowed", http.MethodPut, "/approvals/" + id, bearer(e.alice), http.StatusMethodNotAllowed, "not allowed"},
		{"DELETE is not allowed", http.MethodDelete, "/approvals/" + id, bearer(e.alice), http.StatusMethodNotAllowed, "not allowed"},
		{"an expired approval shows as expired", http.MethodGet, "/approvals/" + expired, bearer(e.alice), http.StatusGone, "expired"},
		{"an unknown id is not found", http.MethodGet, "/approvals/" + strings.Repeat("0", 32), bearer(e.alice), http.StatusNotFound, "no such approval"},
		{"an empty id is not found", http.MethodGet, "/approvals/", bearer(e.alice), http.StatusNotFound, "names no approval"},
		{"a path climbing out is not found", http.MethodGet, "/approvals/..%2f..%2fetc%2fpasswd", bearer(e.alice), http.StatusNotFound, "names no approval"},
		{"markup in the id is not found, nor echoed", http.MethodGet, "/approvals/%3Cscript%3E", bearer(e.alice), http.StatusNotFound, "names no approval"},
		{"a nested path is not found", http.MethodGet, "/approvals/" + id + "/approve", bearer(e.alice), http.StatusNotFound, "names no approval"},
		{"an id past 128 characters is not found", http.MethodGet, "/approvals/" + strings.Repeat("a", 129), bearer(e.alice), http.StatusNotFound, "names no approval"},
		{"a key in another tenant's partition is not reachable", http.MethodGet, "/approvals/" + id, bearer(newCaller("alice")), http.StatusNotFound, "no such approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://127.0.0.1:8080"+tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			e.page.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tt.wantStatus || !strings.Contains(strings.ToLower(body), strings.ToLower(tt.wantText)) {
				t.Fatalf("%s %s = %d, want %d with %q:\n%s", tt.method, tt.path, rec.Code, tt.wantStatus, tt.wantText, body)
			}
			if strings.Contains(body, "<script") || strings.Contains(body, "passwd") {
				t.Fatalf("the page echoes the hostile path:\n%s", body)
			}
			if rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("a refusal lacks the page's headers: %v", rec.Header())
			}
		})
	}
	if got := e.status(t, expired); got != connector.ApprovalExpired {
		t.Fatalf("the expired approval is %s", got)
	}
}
