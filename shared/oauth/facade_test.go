package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// hostRedirect is where the test host wants its authorization responses;
// nothing listens there: the headless browser stops when sent to it.
const hostRedirect = "http://127.0.0.1:1/callback"

// world is a whole deployment in one test: an OpenID provider (zitadel's
// op with its example storage), Switchboard's facade and MCP endpoint
// behind the validator, and a host's client ID metadata document on HTTPS.
type world struct {
	provider  string // the provider's issuer
	app       string // Switchboard's origin, the facade's issuer
	resource  string // the MCP endpoint
	docURL    string // the host's client ID metadata document
	facade    *Facade
	validator *Validator
	table     store.Table
}

func newWorld(t testing.TB, table store.Table) *world {
	t.Helper()
	w := &world{table: table}

	// The provider, with one user and Switchboard's client registered.
	pmux := http.NewServeMux()
	psrv := httptest.NewServer(pmux)
	t.Cleanup(psrv.Close)
	w.provider = psrv.URL
	amux := http.NewServeMux()
	asrv := httptest.NewServer(amux)
	t.Cleanup(asrv.Close)
	w.app, w.resource = asrv.URL, asrv.URL+"/mcp"
	clients := map[string]*storage.Client{"switchboard": storage.WebClient("switchboard", "provider-secret", w.app+PathCallback)}
	st := storage.NewStorageWithClients(storage.NewUserStore(w.provider), clients)
	pmux.Handle("/", exampleop.SetupServer(w.provider, st, slog.New(slog.DiscardHandler), false))

	// The host's client ID metadata document.
	dmux := http.NewServeMux()
	dsrv := httptest.NewTLSServer(dmux)
	t.Cleanup(dsrv.Close)
	w.docURL = dsrv.URL + "/host/client.json"
	dmux.HandleFunc("/host/client.json", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Cache-Control", "max-age=300")
		json.NewEncoder(rw).Encode(map[string]any{
			"client_id": w.docURL, "client_name": "Test host", "redirect_uris": []string{hostRedirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	})
	docHost := strings.TrimPrefix(dsrv.URL, "https://")

	keyring, err := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	_, signing, _ := testKeys()
	w.facade, err = NewFacade(FacadeOptions{
		Issuer: w.app, Resource: w.resource, Table: table, Keyring: keyring,
		SigningKeys:    []SigningKey{{ID: "fk1", Key: signing}},
		Provider:       ProviderOptions{Issuer: w.provider, ClientID: "switchboard", ClientSecret: "provider-secret", DefaultTenant: "acme"},
		Scopes:         DefaultScopes("memory"),
		DocumentClient: dsrv.Client(),
		// Stands in for netguard: only the test's document server may be fetched.
		CheckURL: func(_ context.Context, raw string) (*url.URL, error) {
			u, err := url.Parse(raw)
			if err != nil || u.Host != docHost {
				return nil, fmt.Errorf("%q is not an allowed address", raw)
			}
			return u, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.validator, err = w.facade.Validator(); err != nil {
		t.Fatal(err)
	}

	// Switchboard: the facade, the resource metadata, and /mcp behind the
	// validator, as the gateway mounts them.
	amux.Handle(PathMetadata, w.facade.Handler())
	amux.Handle("/oauth/", w.facade.Handler())
	meta := ResourceMetadata{Resource: w.resource, AuthorizationServers: []string{w.app}, ScopesSupported: w.facade.scopes.Supported()}
	for _, p := range MetadataPaths(w.resource) {
		amux.Handle(p, meta.Handler())
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "switchboard-test"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		g := req.Extra.TokenInfo.Extra["grant"].(Grant)
		text := g.Caller.Tenant + "/" + g.Caller.Principal + " " + g.Access.String()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	amux.Handle("/mcp", requireToken(w.validator, w.resource,
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})))
	return w
}

// requireToken is how the gateway puts the validator in front of MCP: a
// missing or refused token gets 401 with the challenge.
func requireToken(v *Validator, resource string, next http.Handler) http.Handler {
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		g, err := v.Validate(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", auth.ErrInvalidToken, err)
		}
		return &auth.TokenInfo{UserID: g.Caller.Tenant + "/" + g.Caller.Principal, Scopes: g.Caller.Scopes,
			Expiration: g.Expires, Extra: map[string]any{"grant": g}}, nil
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			rw.Header().Set("WWW-Authenticate", Challenge{ResourceMetadata: MetadataURL(resource)}.String())
			http.Error(rw, "sign in", http.StatusUnauthorized)
			return
		}
		if _, err := v.Validate(r.Context(), tok); err != nil {
			ch, status := ChallengeFor(resource, err)
			rw.Header().Set("WWW-Authenticate", ch.String())
			http.Error(rw, err.Error(), status)
			return
		}
		auth.RequireBearerToken(verify, nil)(next).ServeHTTP(rw, r)
	})
}

// browse plays the user's browser, headless: it loads the authorization URL,
// allows on the consent page, signs in at the provider, and returns the
// query the host's redirect URI receives.
func browse(ctx context.Context, w *world, authURL string) (url.Values, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), hostRedirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	get := func(resp *http.Response, err error) (string, *http.Response, error) {
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp, nil
	}
	page, resp, err := get(hc.Get(authURL))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusSeeOther {
		return landed(resp)
	}
	consent := regexp.MustCompile(`name="consent" value="([^"]+)"`).FindStringSubmatch(page)
	if consent == nil {
		return nil, fmt.Errorf("no consent form (status %d): %s", resp.StatusCode, page)
	}
	page, resp, err = get(hc.PostForm(w.app+PathAuthorize, url.Values{"consent": {consent[1]}, "decision": {"allow"}}))
	if err != nil {
		return nil, err
	}
	id := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(page)
	if id == nil {
		return nil, fmt.Errorf("no provider login form (status %d): %s", resp.StatusCode, page)
	}
	_, resp, err = get(hc.PostForm(w.provider+"/login/username", url.Values{
		"id": {id[1]}, "username": {"test-user@127.0.0.1"}, "password": {"verysecure"}}))
	if err != nil {
		return nil, err
	}
	return landed(resp)
}

// landed reads the query of a redirect to the host.
func landed(resp *http.Response) (url.Values, error) {
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), hostRedirect) {
		return nil, fmt.Errorf("ended at status %d, Location %q, not the host", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query(), nil
}

// hostClient is the HTTP client of a host on this machine: the go-sdk's
// discovery refuses loopback addresses unless the caller dials itself.
func hostClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
}

// connect runs the go-sdk's OAuth client through the whole flow, with a
// client ID metadata document, and returns the MCP session it opens.
func connect(ctx context.Context, w *world) (*mcp.ClientSession, error) {
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: w.docURL},
		RedirectURL:                    hostRedirect,
		RequestRefreshToken:            true,
		Client:                         hostClient(),
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q, err := browse(ctx, w, args.URL)
			if err != nil {
				return nil, err
			}
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s: %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: w.resource, OAuthHandler: handler, HTTPClient: hostClient()}, nil)
}

// TestFlowWithGoSDKClient: a host with a client ID metadata document goes
// from a 401 to a tool call, through discovery, the facade, the provider's
// login, and the token endpoint.
func TestFlowWithGoSDKClient(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, table store.Table) {
		w := newWorld(t, table)
		ctx := context.Background()
		session, err := connect(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Content[0].(*mcp.TextContent).Text
		if want := "acme/id1 read: all; write: all"; got != want {
			t.Errorf("whoami = %q, want %q", got, want)
		}
	})
}

// authorizeURL returns the facade's authorization URL for client with the
// PKCE verifier's challenge, and params overriding the defaults.
func authorizeURL(w *world, clientID, verifier string, params map[string]string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {hostRedirect},
		"code_challenge": {s256(verifier)}, "code_challenge_method": {"S256"}, "state": {"host-state"},
		"resource": {w.resource}, "scope": {"switchboard:read switchboard:memory"}}
	for k, v := range params {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return w.app + PathAuthorize + "?" + q.Encode()
}

// token posts a token request and returns the status and decoded body.
func token(t *testing.T, w *world, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(w.app+PathToken, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// register registers a public client and returns its id.
func register(t *testing.T, w *world, meta map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(meta)
	resp, err := http.Post(w.app+PathRegister, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestFlowRefusals walks a registered client through the flow by hand and
// checks what the facade refuses on the way.
func TestFlowRefusals(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, table store.Table) {
		w := newWorld(t, table)
		ctx := context.Background()
		status, reg := register(t, w, map[string]any{"redirect_uris": []string{hostRedirect}, "client_name": "Manual host",
			"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
		if status != http.StatusCreated {
			t.Fatalf("registration: %d %v", status, reg)
		}
		clientID := reg["client_id"].(string)
		verifier := randomToken() + randomToken()

		q, err := browse(ctx, w, authorizeURL(w, clientID, verifier, nil))
		if err != nil {
			t.Fatal(err)
		}
		if q.Get("state") != "host-state" || q.Get("iss") != w.app || q.Get("code") == "" {
			t.Fatalf("authorization response %v", q)
		}
		redeem := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {clientID},
			"redirect_uri": {hostRedirect}, "code_verifier": {verifier}, "resource": {w.resource}}

		wrong := url.Values{}
		for k, v := range redeem {
			wrong[k] = v
		}
		wrong.Set("code_verifier", randomToken()+randomToken())
		if status, body := token(t, w, wrong); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("a wrong code_verifier: %d %v", status, body)
		}
		status, tok := token(t, w, redeem)
		if status != 200 {
			t.Fatalf("redeeming the code: %d %v", status, tok)
		}
		if status, body := token(t, w, redeem); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("a replayed code: %d %v", status, body)
		}
		g, err := w.validator.Validate(ctx, tok["access_token"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if g.ClientID != clientID || g.Caller.Tenant != "acme" || !g.Access.Allows("memory", true) || g.Access.Allows("vector", true) {
			t.Errorf("grant %+v (%s)", g, g.Access)
		}

		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}}
		status, renewed := token(t, w, refresh)
		if status != 200 || renewed["refresh_token"] == nil {
			t.Fatalf("refreshing: %d %v", status, renewed)
		}
		if _, err := w.validator.Validate(ctx, renewed["access_token"].(string)); err != nil {
			t.Errorf("the refreshed access token: %v", err)
		}
		if status, body := token(t, w, refresh); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("a replayed refresh token: %d %v", status, body)
		}
		other := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {renewed["refresh_token"].(string)}, "client_id": {w.docURL}}
		if status, body := token(t, w, other); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("a refresh token presented by another client: %d %v", status, body)
		}
	})
}

// TestAuthorizeRefusals checks the authorization requests the facade turns
// away: on its own page when the client or redirect URI is not known good,
// back to the client otherwise.
func TestAuthorizeRefusals(t *testing.T) {
	w := newWorld(t, storetest.OpenEmbedded(t))
	verifier := randomToken() + randomToken()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name      string
		clientID  string
		params    map[string]string
		wantPage  bool   // refused on the facade's page (400)
		wantError string // or redirected to the client with this error
	}{
		{"an unregistered redirect_uri", w.docURL, map[string]string{"redirect_uri": "http://127.0.0.1:1/elsewhere"}, true, ""},
		{"an unknown client", "sbc_nobody", nil, true, ""},
		{"a client ID URL off the allowed addresses", "https://169.254.169.254/latest/meta-data", nil, true, ""},
		{"no PKCE", w.docURL, map[string]string{"code_challenge": "", "code_challenge_method": ""}, false, "invalid_request"},
		{"PKCE plain", w.docURL, map[string]string{"code_challenge_method": "plain"}, false, "invalid_request"},
		{"a token for another resource", w.docURL, map[string]string{"resource": "https://other.example/mcp"}, false, "invalid_target"},
		{"an implicit grant", w.docURL, map[string]string{"response_type": "token"}, false, "unsupported_response_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := noRedirect.Get(authorizeURL(w, tc.clientID, verifier, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if tc.wantPage {
				if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
					t.Errorf("status %d, Location %q; want the error page", resp.StatusCode, resp.Header.Get("Location"))
				}
				return
			}
			q, err := landed(resp)
			if err != nil {
				t.Fatal(err)
			}
			if q.Get("error") != tc.wantError || q.Get("state") != "host-state" || q.Get("iss") != w.app {
				t.Errorf("redirected with %v, want error %s", q, tc.wantError)
			}
		})
	}
}

func TestRegistrationRefusals(t *testing.T) {
	w := newWorld(t, storetest.OpenEmbedded(t))
	tests := []struct {
		name string
		meta map[string]any
		want string
	}{
		{"no redirect URI", map[string]any{}, "invalid_redirect_uri"},
		{"a javascript redirect URI", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"plain http off loopback", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}}, "invalid_redirect_uri"},
		{"a redirect URI with a fragment", map[string]any{"redirect_uris": []string{"https://host.example/cb#x"}}, "invalid_redirect_uri"},
		{"the implicit grant", map[string]any{"redirect_uris": []string{hostRedirect}, "grant_types": []string{"implicit"}}, "invalid_client_metadata"},
		{"private_key_jwt", map[string]any{"redirect_uris": []string{hostRedirect}, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
		{"an unprintable name", map[string]any{"redirect_uris": []string{hostRedirect}, "client_name": "a\u202eb"}, "invalid_client_metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := register(t, w, tc.meta)
			if status != 400 || body["error"] != tc.want {
				t.Errorf("%d %v, want 400 %s", status, body, tc.want)
			}
		})
	}
}

func TestClientDocumentRefusals(t *testing.T) {
	tests := []struct {
		name string
		body string
		hdr  string
		want string
	}{
		{"a document naming another client_id", `{"client_id":"https://evil.example/c.json","redirect_uris":["` + hostRedirect + `"]}`, "", "names the client_id"},
		{"a document with a secret", `{"client_id":"SELF","client_secret":"x","redirect_uris":["` + hostRedirect + `"]}`, "", "client_secret"},
		{"a document with a javascript redirect", `{"client_id":"SELF","redirect_uris":["javascript:alert(1)"]}`, "", "redirect_uris"},
		{"a document over 5 KiB", `{"client_id":"SELF","client_name":"` + strings.Repeat("a", 6000) + `","redirect_uris":["` + hostRedirect + `"]}`, "", "larger than"},
		{"a document that is not JSON", `<html>`, "", "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				rw.Write([]byte(strings.ReplaceAll(tc.body, "SELF", "https://"+r.Host+r.URL.Path)))
			}))
			defer srv.Close()
			d := &documents{client: srv.Client(), now: func() time.Time { return epoch }, cache: map[string]cachedClient{},
				checkURL: func(_ context.Context, raw string) (*url.URL, error) { return url.Parse(raw) }}
			_, err := d.get(context.Background(), srv.URL+"/c.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestClientDocumentCaching(t *testing.T) {
	var fetches int
	cc := "max-age=60"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fetches++
		rw.Header().Set("Cache-Control", cc)
		fmt.Fprintf(rw, `{"client_id":"https://%s%s","redirect_uris":["%s"]}`, r.Host, r.URL.Path, hostRedirect)
	}))
	defer srv.Close()
	clock := &fakeClock{t: epoch}
	d := &documents{client: srv.Client(), now: clock.Now, cache: map[string]cachedClient{},
		checkURL: func(_ context.Context, raw string) (*url.URL, error) { return url.Parse(raw) }}
	get := func() {
		if _, err := d.get(context.Background(), srv.URL+"/c.json"); err != nil {
			t.Fatal(err)
		}
	}
	get()
	get()
	clock.Add(61 * time.Second)
	get()
	cc = "no-store"
	clock.Add(61 * time.Second)
	get()
	get()
	if fetches != 4 {
		t.Errorf("%d fetches, want 4 (cached for max-age, never under no-store)", fetches)
	}
	for _, bad := range []string{"http://x.example/c.json", "https://x.example", "https://x.example/c.json?q=1", "https://x.example/../c.json", "https://u:p@x.example/c.json"} {
		if _, err := d.get(context.Background(), bad); err == nil {
			t.Errorf("client_id %q accepted", bad)
		}
	}
}

func TestRegistrationRateLimit(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, table store.Table) {
		w := newWorld(t, table)
		w.facade.opts.MaxRegistrationsPerMinute = 3
		// A minute of its own (the DynamoDB test table is shared by the tests),
		// in the future: the table expires counters by its own clock.
		now := time.Now().Add(365*24*time.Hour + time.Duration(mrand.IntN(1<<20))*time.Minute)
		w.facade.now = func() time.Time { return now }
		meta := map[string]any{"redirect_uris": []string{hostRedirect}}
		codes := []int{}
		for range 5 {
			status, _ := register(t, w, meta)
			codes = append(codes, status)
		}
		if diff := cmp.Diff([]int{201, 201, 201, 429, 429}, codes); diff != "" {
			t.Errorf("statuses mismatch (-want +got):\n%s", diff)
		}
	})
}

// BenchmarkFlow measures the OAuth flow end to end: the go-sdk's client from
// its first 401 through discovery, the client ID metadata document, consent,
// the provider's login, the callback and the token endpoint, to an
// authorized tools/call, all on this machine.
func BenchmarkFlow(b *testing.B) {
	table, err := embedded.Open(filepath.Join(b.TempDir(), "switchboard.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer table.Close()
	w := newWorld(b, table)
	ctx := context.Background()
	for b.Loop() {
		session, err := connect(ctx, w)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"}); err != nil {
			b.Fatal(err)
		}
		session.Close()
	}
}

func TestDeriveSigningKey(t *testing.T) {
	seed := []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01")
	a, err := DeriveSigningKey("fk1", seed)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := DeriveSigningKey("fk1", seed)
	other, _ := DeriveSigningKey("fk2", seed)
	otherSeed, _ := DeriveSigningKey("fk1", append([]byte("x"), seed[1:]...))
	for _, tc := range []struct {
		name string
		same bool
		k    SigningKey
	}{
		{"the same seed and id give the same key on every instance", true, again},
		{"another id gives another key", false, other},
		{"another seed gives another key", false, otherSeed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.Key.Equal(tc.k.Key); got != tc.same {
				t.Errorf("keys equal = %v, want %v", got, tc.same)
			}
		})
	}
	if _, err := DeriveSigningKey("fk1", seed[:MinSeedBytes-1]); err == nil {
		t.Errorf("a seed of %d bytes was accepted", MinSeedBytes-1)
	}
	if tok, err := signES256(a.Key, a.ID, "at+jwt", map[string]any{"iss": "x"}); err != nil || tok == "" {
		t.Fatalf("a derived key cannot sign: %v", err)
	}
}
