package gateway_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/approvalpage/local"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// approvalsHarness is a gateway with a connector service proxying a go-sdk
// upstream, and a pending approval of alice's (tenant acme).
type approvalsHarness struct {
	*harness
	svc *connector.Service
	id  string
	key string // alice's API key
}

func newApprovalsHarness(t *testing.T) *approvalsHarness {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "charge"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	sealer, err := localkey.New(keyfile.Keys{"k1": keyfile.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	a := &approvalsHarness{}
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
	a.harness = newHarness(t, func(o *gateway.Options) {
		o.Anonymous = nil
		a.svc = connector.New(storetest.OpenEmbedded(t), sealer, &connector.Options{CheckURL: guard.CheckURL, HTTPClient: guard.Client(10 * time.Second)})
		o.Approvals = local.Approver{Service: a.svc}
	})
	t.Cleanup(func() { a.svc.Close() })
	a.key = newKey(t, a.harness, "acme", "alice")
	alice := tenant.Caller{Tenant: "acme", Principal: "alice"}
	ctx := context.Background()
	if _, err := a.svc.Create(ctx, alice, connector.CreateInput{Name: "pay", BaseURL: up.URL, Transport: connector.TransportStreamable}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Sync(ctx, alice, connector.NameInput{Name: "pay"}); err != nil {
		t.Fatal(err)
	}
	res, err := a.svc.Call(ctx, alice, connector.CallInput{Name: "pay__charge", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	a.id = res.Meta[connector.ApprovalMetaKey].(string)
	return a
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func TestTheApprovalPageIsServedWithTheGatewaysAuthentication(t *testing.T) {
	a := newApprovalsHarness(t)
	bob := newKey(t, a.harness, "acme", "bob")
	page := a.url + "/approvals/" + a.id
	get := func(auth func(*http.Request)) rawResponse {
		req := mustRequest(t, http.MethodGet, page)
		auth(req)
		return do(t, req)
	}
	for _, tc := range []struct {
		name       string
		auth       func(*http.Request)
		wantStatus int
	}{
		{"without a key the browser is asked for one", func(*http.Request) {}, http.StatusUnauthorized},
		{"an unknown key is refused", func(r *http.Request) { r.Header.Set("Authorization", "Bearer sb_notakey") }, http.StatusUnauthorized},
		{"the asker's bearer key opens it", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+a.key) }, http.StatusOK},
		{"the asker's key as a Basic password opens it", func(r *http.Request) { r.SetBasicAuth("alice", a.key) }, http.StatusOK},
		{"another principal's key is refused", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+bob) }, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := get(tc.auth)
			if got.status != tc.wantStatus {
				t.Fatalf("GET = %d, want %d\n%s", got.status, tc.wantStatus, got.body)
			}
			if got.status == http.StatusUnauthorized && !strings.Contains(got.header.Get("WWW-Authenticate"), "Basic") {
				t.Fatalf("401 without a Basic challenge: %q", got.header.Get("WWW-Authenticate"))
			}
		})
	}

	t.Run("a decision posted from the page's own origin is recorded", func(t *testing.T) {
		req := mustRequest(t, http.MethodGet, page)
		req.Header.Set("Authorization", "Bearer "+a.key)
		opened := do(t, req)
		cookies := (&http.Response{Header: opened.header}).Cookies()
		m := csrfRE.FindStringSubmatch(opened.body)
		if m == nil || len(cookies) != 1 {
			t.Fatalf("the page has no form or cookie:\n%s", opened.body)
		}
		form := url.Values{"decision": {"approve"}, "csrf": {html.UnescapeString(m[1])}}
		for _, origin := range []string{"https://evil.example", a.url} {
			post, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
			post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			post.Header.Set("Authorization", "Bearer "+a.key)
			post.Header.Set("Origin", origin)
			post.AddCookie(cookies[0])
			got := do(t, post)
			want := http.StatusOK
			if origin != a.url {
				want = http.StatusForbidden
			}
			if got.status != want {
				t.Fatalf("POST from %s = %d, want %d\n%s", origin, got.status, want, got.body)
			}
		}
		out, err := a.svc.ApprovalGet(context.Background(), tenant.Caller{Tenant: "acme", Principal: "alice"}, connector.ApprovalInput{ID: a.id})
		if err != nil || out.Approval.Status != connector.ApprovalGranted {
			t.Fatalf("the approval is %+v, %v; want granted", out.Approval, err)
		}
	})
}

func TestWithoutApprovalsThereIsNoApprovalPage(t *testing.T) {
	h := newHarness(t, nil)
	if got := do(t, mustRequest(t, http.MethodGet, h.url+"/approvals/0123456789abcdef0123456789abcdef")); got.status != http.StatusNotFound {
		t.Fatalf("GET = %d, want 404", got.status)
	}
}
