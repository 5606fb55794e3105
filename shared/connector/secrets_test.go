package connector_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func secret(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func whoami(t *testing.T, e *env, c tenant.Caller) string {
	t.Helper()
	res, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "up__whoami", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		return "error: " + err.Error()
	}
	return text(res)
}

func TestCredentialIsolation(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		up := newUpstream(t, connector.TransportStreamable, "")
		acme, globex := newCaller(t, "alice"), newCaller(t, "alice")
		keyA, keyB, aliceKey, bobKey := secret("acme-"), secret("globex-"), secret("alice-"), secret("bob-")
		for _, tc := range []struct {
			c   tenant.Caller
			key string
		}{{acme, keyA}, {globex, keyB}} {
			mustCreate(t, e, tc.c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable,
				Headers: map[string]string{"X-Api-Key": tc.key}})
			mustSync(t, e, tc.c, "up")
			allow(t, e, tc.c, "up", "whoami")
		}
		if got := whoami(t, e, acme); !strings.Contains(got, keyA) || strings.Contains(got, keyB) {
			t.Fatalf("acme's call ran with %q", got)
		}
		if got := whoami(t, e, globex); !strings.Contains(got, keyB) || strings.Contains(got, keyA) {
			t.Fatalf("globex's call ran with %q", got)
		}

		// A principal's own credentials override the tenant's, for them only.
		g, _ := e.svc.Get(ctx, acme, connector.NameInput{Name: "up"})
		if _, err := e.svc.Update(ctx, acme, connector.UpdateInput{Name: "up", Version: g.Connector.Version, PrincipalScoped: true,
			Headers: map[string]string{"X-Api-Key": aliceKey}}); err != nil {
			t.Fatal(err)
		}
		bob := tenant.Caller{Tenant: acme.Tenant, Principal: "bob"}
		if got := whoami(t, e, acme); !strings.Contains(got, aliceKey) {
			t.Fatalf("alice's call ran with %q", got)
		}
		if got := whoami(t, e, bob); !strings.Contains(got, keyA) || strings.Contains(got, aliceKey) {
			t.Fatalf("bob's call ran with %q", got)
		}

		// Principal-scoped only: a principal with no credentials is refused.
		mustCreate(t, e, acme, connector.CreateInput{Name: "mine", BaseURL: up.url(), Transport: connector.TransportStreamable,
			PrincipalScoped: true, Headers: map[string]string{"X-Api-Key": aliceKey}})
		if _, err := e.svc.Sync(ctx, bob, connector.NameInput{Name: "mine"}); fault.KindOf(err) != fault.KindInvalid {
			t.Fatalf("bob's sync of alice's connector = %v, want refused", err)
		}
		g, _ = e.svc.Get(ctx, bob, connector.NameInput{Name: "mine"})
		if _, err := e.svc.Update(ctx, bob, connector.UpdateInput{Name: "mine", Version: g.Connector.Version, PrincipalScoped: true,
			Headers: map[string]string{"X-Api-Key": bobKey}}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			c         tenant.Caller
			want, not string
		}{{acme, aliceKey, bobKey}, {bob, bobKey, aliceKey}} {
			mustSync(t, e, tc.c, "mine")
			allow(t, e, tc.c, "mine", "whoami")
			res, err := e.svc.Call(ctx, tc.c, connector.CallInput{Name: "mine__whoami"})
			if err != nil || !strings.Contains(text(res), tc.want) || strings.Contains(text(res), tc.not) {
				t.Fatalf("%s's call ran with %q, %v", tc.c.Principal, text(res), err)
			}
		}
	})
}

// oauthServer issues client-credentials tokens and guards an upstream that
// accepts only the newest one.
type oauthServer struct {
	srv     *httptest.Server
	fetches atomic.Int64
	current atomic.Pointer[string]
}

func newOAuthServer(t *testing.T, clientID, clientSecret string) *oauthServer {
	o := &oauthServer{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, sec, ok := r.BasicAuth()
		if !ok || id != clientID || sec != clientSecret || r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") != "read write" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		o.fetches.Add(1)
		tok := secret("tok-")
		o.current.Store(&tok)
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, tok)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func TestOAuthClientCredentials(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, storetest.OpenEmbedded(t), nil)
	c := newCaller(t, "alice")
	clientSecret := secret("cs-")
	o := newOAuthServer(t, "switchboard", clientSecret)
	up := newUpstream(t, connector.TransportStreamable, "")
	up.setHook(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if cur := o.current.Load(); cur == nil || r.Header.Get("Authorization") != "Bearer "+*cur {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return true
		}
		return false
	})
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable,
		OAuth: &connector.OAuth{TokenURL: o.srv.URL, ClientID: "switchboard", ClientSecret: clientSecret, Scopes: []string{"read", "write"}}})
	mustSync(t, e, c, "up")
	allow(t, e, c, "up", "echo")
	for range 3 {
		if res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil || res.IsError {
			t.Fatalf("Call = %v, %v", res, err)
		}
	}
	if n := o.fetches.Load(); n != 1 {
		t.Fatalf("%d token fetches for one sync and three calls; the token should be cached", n)
	}
	// The upstream stops accepting the token: one 401, one fetch, one retry.
	revoked := "revoked"
	o.current.Store(&revoked)
	up.setHook(func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if cur := o.current.Load(); *cur == "revoked" || r.Header.Get("Authorization") != "Bearer "+*cur {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return true
		}
		return false
	})
	if res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"y"}`)}); err != nil || text(res) != "echo: y" {
		t.Fatalf("Call after a 401 = %q, %v", text(res), err)
	}
	if n := o.fetches.Load(); n != 2 {
		t.Fatalf("%d token fetches; want one more after the 401", n)
	}
}

// TestSecretsNeverLeak runs a full scenario, failures included, and looks for
// every credential's plaintext in every table item, audit event, output,
// error and log line.
func TestSecretsNeverLeak(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		const trace = "trace-secrets"
		ctx := callcontext.NewContext(context.Background(), callcontext.Call{TraceID: trace})
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		bob := tenant.Caller{Tenant: c.Tenant, Principal: "bob"}
		headerKey, bobKey, clientSecret := secret("hk-"), secret("bk-"), secret("cs-")
		o := newOAuthServer(t, "switchboard", clientSecret)
		up := newUpstream(t, connector.TransportSSE, "")
		var outputs []any
		note := func(v any, err error) {
			outputs = append(outputs, v)
			if err != nil {
				outputs = append(outputs, err.Error())
				_, _, msg := fault.Public(err)
				outputs = append(outputs, msg)
			}
		}
		note(e.svc.Create(ctx, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportSSE,
			Headers: map[string]string{"Authorization": "Bearer " + headerKey}}))
		note(e.svc.Create(ctx, c, connector.CreateInput{Name: "oa", BaseURL: up.url(), Transport: connector.TransportSSE,
			OAuth: &connector.OAuth{TokenURL: o.srv.URL, ClientID: "switchboard", ClientSecret: clientSecret, Scopes: []string{"read", "write"}}}))
		note(e.svc.Create(ctx, c, connector.CreateInput{Name: "down", BaseURL: "http://127.0.0.1:1/", Transport: connector.TransportSSE,
			Headers: map[string]string{"X-Api-Key": headerKey}}))
		note(e.svc.Create(ctx, c, connector.CreateInput{Name: "badoa", BaseURL: up.url(), Transport: connector.TransportSSE,
			OAuth: &connector.OAuth{TokenURL: o.srv.URL, ClientID: "wrong", ClientSecret: clientSecret}}))
		for _, n := range []string{"up", "oa", "down", "badoa"} {
			note(e.svc.Verify(ctx, c, connector.NameInput{Name: n}))
			note(e.svc.Sync(ctx, c, connector.NameInput{Name: n}))
			note(e.svc.Get(ctx, c, connector.NameInput{Name: n}))
		}
		g, _ := e.svc.Get(ctx, bob, connector.NameInput{Name: "up"})
		note(e.svc.Update(ctx, bob, connector.UpdateInput{Name: "up", Version: g.Connector.Version, PrincipalScoped: true,
			Headers: map[string]string{"Authorization": "Bearer " + bobKey}}))
		note(e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`)}))
		note(e.svc.Call(ctx, bob, connector.CallInput{Name: "oa__echo", Arguments: json.RawMessage(`{"text":"x"}`)}))
		allow(t, e, c, "up", "echo")
		note(e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`)}))
		note(e.svc.Call(ctx, bob, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`)}))
		note(e.svc.List(ctx, c, connector.ListInput{}))
		note(e.svc.Health(ctx, c, connector.HealthInput{}))
		note(e.svc.ToolsOpenAI(ctx, c, connector.OpenAIInput{}))
		note(e.svc.Listing(ctx, c))
		note(e.svc.SyncDue(ctx, 0))

		var haystack strings.Builder
		b, _ := json.Marshal(outputs)
		haystack.Write(b)
		haystack.WriteString(e.logs.String())
		dump := func(pk string) {
			for cursor := ""; ; {
				page, err := tbl.Query(context.Background(), pk, store.Query{Cursor: cursor, Limit: store.MaxQueryLimit})
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range page.Items {
					fmt.Fprintf(&haystack, "%s %s %v\n", it.PK, it.SK, it.Attrs)
					for _, v := range it.Attrs {
						if bs, ok := v.([]byte); ok {
							haystack.Write(bs)
						}
					}
				}
				if cursor = page.Next; cursor == "" {
					return
				}
			}
		}
		k := tenant.Key(c.Tenant)
		for _, pk := range []string{k + "conn", k + "conn#up", k + "conn#oa", k + "conn#down", k + "conn#badoa", k + "connapprovals", k + "trace#" + trace, "_conn#sync"} {
			dump(pk)
		}
		all := haystack.String()
		if !strings.Contains(all, "ConnectorCreated") || !strings.Contains(all, "X-Api-Key") {
			t.Fatal("the haystack is missing the audit events or the records: the search would prove nothing")
		}
		tokens := []string{}
		if cur := o.current.Load(); cur != nil {
			tokens = append(tokens, *cur)
		}
		for _, s := range append([]string{headerKey, bobKey, clientSecret}, tokens...) {
			if strings.Contains(all, s) {
				i := strings.Index(all, s)
				t.Fatalf("secret %q found: ...%s...", s, all[max(0, i-200):min(len(all), i+100)])
			}
		}
	})
}

// A warm instance keeps the principals' own credentials it read by the
// connector's version: a principal's change, made through another
// instance, is seen by the next call at once, and one principal's
// credentials never serve another's call.
func TestAPrincipalsCredentialChangeIsSeenAtOnceByEveryInstance(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		other := e.instance(t, nil) // another warm instance of the proxy function
		up := newUpstream(t, connector.TransportStreamable, "")
		alice := newCaller(t, "alice")
		bob := tenant.Caller{Tenant: alice.Tenant, Principal: "bob"}
		tenantKey, aliceKey, aliceKey2 := secret("tenant-"), secret("alice-"), secret("alice2-")
		mustCreate(t, e, alice, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable,
			Headers: map[string]string{"X-Api-Key": tenantKey}})
		mustSync(t, e, alice, "up")
		allow(t, e, alice, "up", "whoami")
		whoamiOn := func(svc *connector.Service, c tenant.Caller) string {
			t.Helper()
			res, err := svc.Call(ctx, c, connector.CallInput{Name: "up__whoami"})
			if err != nil {
				return "error: " + err.Error()
			}
			return text(res)
		}
		update := func(in connector.UpdateInput) {
			t.Helper()
			g, err := e.svc.Get(ctx, alice, connector.NameInput{Name: "up"})
			if err != nil {
				t.Fatal(err)
			}
			in.Name, in.Version, in.PrincipalScoped = "up", g.Connector.Version, true
			if _, err := e.svc.Update(ctx, alice, in); err != nil {
				t.Fatal(err)
			}
		}
		for _, step := range []struct {
			name       string
			change     func()
			alice, bob string
		}{
			{"before alice has her own", func() {}, tenantKey, tenantKey},
			{"alice sets hers", func() { update(connector.UpdateInput{Headers: map[string]string{"X-Api-Key": aliceKey}}) }, aliceKey, tenantKey},
			{"alice changes hers", func() { update(connector.UpdateInput{Headers: map[string]string{"X-Api-Key": aliceKey2}}) }, aliceKey2, tenantKey},
			{"alice clears hers", func() { update(connector.UpdateInput{ClearCredentials: true}) }, tenantKey, tenantKey},
		} {
			step.change()
			for range 2 { // the second call is served from what the first read
				if got := whoamiOn(other, alice); !strings.Contains(got, "key: "+step.alice) {
					t.Fatalf("%s: alice's call on the other instance ran with %q, want %s", step.name, got, step.alice)
				}
				if got := whoamiOn(other, bob); !strings.Contains(got, "key: "+step.bob) {
					t.Fatalf("%s: bob's call on the other instance ran with %q, want %s", step.name, got, step.bob)
				}
			}
		}
	})
}
