package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/oauth"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// issuer is an authorization server's signing side, as a test needs it: an
// ES256 key, its JWK set served over HTTP, and tokens minted with it.
type issuer struct {
	url  string
	key  *ecdsa.PrivateKey
	jwks string // the URL of its key set
}

const testIssuer = "https://issuer.example.com"

func newIssuer(t *testing.T) *issuer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pad := func(b []byte) string {
		return base64.RawURLEncoding.EncodeToString(append(make([]byte, 32-len(b)), b...))
	}
	set := oauth.JWKS{Keys: []oauth.JWK{{Kty: "EC", Kid: "k1", Use: "sig", Alg: "ES256", Crv: "P-256", X: pad(key.X.Bytes()), Y: pad(key.Y.Bytes())}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return &issuer{url: testIssuer, key: key, jwks: srv.URL}
}

// mint returns a compact JWS of claims under header alg (ES256 signs with
// the issuer's key; "none" leaves the signature empty).
func (is *issuer) mint(t *testing.T, alg string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": alg, "typ": "at+jwt", "kid": "k1"})
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	if alg == "none" {
		return input + "."
	}
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, is.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// claims are an access token's for resource, valid for an hour, with scope.
func (is *issuer) claims(resource, scope string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.url, "aud": resource, "sub": "alice", "tenant": "acme", "scope": scope,
		"client_id": "host", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// oauthGateway serves the catalog with API keys and access tokens of is,
// and returns its URL (the resource is URL/mcp) and its API keys.
func oauthGateway(t *testing.T, is *issuer) (string, *apikey.Keys) {
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	tbl := storetest.OpenEmbedded(t)
	scopes := oauth.DefaultScopes("memory")
	v, err := oauth.NewValidator(oauth.ValidatorOptions{Issuer: is.url, JWKSURL: is.jwks, Resource: url + "/mcp", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	keys := apikey.New(tbl, nil)
	gw, err := gateway.New(gateway.Options{
		Catalog: catalog.Default(),
		Invoker: stack(t, lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}),
		Keys:    keys,
		OAuth: &gateway.OAuth{Validator: v, Metadata: oauth.ResourceMetadata{
			Resource: url + "/mcp", AuthorizationServers: []string{is.url}, ScopesSupported: scopes.Supported(),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = gw.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return url, keys
}

func TestAccessTokensAreCheckedBesideAPIKeys(t *testing.T) {
	is := newIssuer(t)
	url, keys := oauthGateway(t, is)
	resource := url + "/mcp"
	apiKey, _, err := keys.Create(context.Background(), "acme", "bob", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(map[string]any)) string {
		c := is.claims(resource, oauth.ScopeWrite)
		edit(c)
		return is.mint(t, "ES256", c)
	}
	write := with(func(map[string]any) {})
	read := with(func(c map[string]any) { c["scope"] = oauth.ScopeRead })
	create := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"c1"}}}`
	createViaSDK := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"c1"},"_meta":{"switchboard.test/path":"go-sdk"}}}`
	getContext := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"c1"}}}`
	getContextViaSDK := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"c1"},"_meta":{"switchboard.test/path":"go-sdk"}}}`
	const invalid = `error="invalid_token"`
	for _, tc := range []struct {
		name, token, body string
		wantStatus        int
		wantChallenge     string // in WWW-Authenticate
	}{
		{"AValidTokenCallsATool", write, create, 200, ""},
		{"AnAPIKeyStillWorks", apiKey, getContext, 200, ""},
		{"AReadScopeCallsAReadOnlyToolOnTheFastPath", read, getContext, 200, ""},
		{"AReadScopeCallsAReadOnlyToolThroughTheGoSDK", read, getContextViaSDK, 200, ""},
		{"AReadScopeCannotCallAMutatingToolOnTheFastPath", read, create, 403, `error="insufficient_scope", error_description="this call needs the scope switchboard:memory", scope="switchboard:memory"`},
		{"AReadScopeCannotCallAMutatingToolThroughTheGoSDK", read, createViaSDK, 403, `scope="switchboard:memory"`},
		{"AnExpiredTokenIsRefused", with(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }), getContext, 401, invalid},
		{"ATokenForAnotherResourceIsRefused", with(func(c map[string]any) { c["aud"] = "https://other.example.com/mcp" }), getContext, 401, invalid},
		// An ID token of the same issuer: its audience is a client, not this resource.
		{"ATokenForAClientRatherThanAResourceIsRefused", with(func(c map[string]any) { c["aud"] = "switchboard-client" }), getContext, 401, invalid},
		{"ATokenWithoutAnAudienceIsRefused", with(func(c map[string]any) { delete(c, "aud") }), getContext, 401, invalid},
		{"ATokenOfAnotherIssuerIsRefused", with(func(c map[string]any) { c["iss"] = "https://evil.example.com" }), getContext, 401, invalid},
		{"AnUnsignedTokenIsRefused", is.mint(t, "none", is.claims(resource, oauth.ScopeWrite)), getContext, 401, invalid},
		{"AnUnknownAPIKeyIsRefused", "sb_notakey", getContext, 401, `resource_metadata="` + url + `/.well-known/oauth-protected-resource/mcp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, resource, map[string]string{"Authorization": "Bearer " + tc.token, "Mcp-Protocol-Version": "2025-11-25"}, tc.body)
			if resp.status != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.status, resp.body, tc.wantStatus)
			}
			if tc.wantStatus == 200 && isToolError(resp.body) {
				t.Errorf("a tool error: %s", resp.body)
			}
			if ch := resp.header.Get("WWW-Authenticate"); !strings.Contains(ch, tc.wantChallenge) ||
				(tc.wantStatus != 200 && !strings.Contains(ch, `resource_metadata="`+url+`/.well-known/oauth-protected-resource/mcp"`)) {
				t.Errorf("WWW-Authenticate %q, want it to hold %q and the metadata's URL", ch, tc.wantChallenge)
			}
		})
	}
	meta := do(t, mustRequest(t, http.MethodGet, url+"/.well-known/oauth-protected-resource/mcp"))
	var doc oauth.ResourceMetadata
	if err := json.Unmarshal([]byte(meta.body), &doc); err != nil || doc.Resource != resource || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != is.url {
		t.Errorf("protected resource metadata: %d %s", meta.status, meta.body)
	}
}

// An issuer whose keys cannot be fetched makes a token unverifiable, not
// invalid: 503 without a challenge, so the host retries rather than signing
// in again.
func TestAnUnreachableIssuerIsUnavailableNotUnauthorized(t *testing.T) {
	is := newIssuer(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	gone := *is
	gone.jwks = down.URL
	url, _ := oauthGateway(t, &gone)
	token := is.mint(t, "ES256", is.claims(url+"/mcp", oauth.ScopeWrite))
	resp := post(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2025-11-25"}, initialize("2025-11-25"))
	if resp.status != http.StatusServiceUnavailable || resp.header.Get("WWW-Authenticate") != "" || !strings.Contains(resp.body, "retry shortly") {
		t.Errorf("got %d with WWW-Authenticate %q (%s), want 503 without a challenge", resp.status, resp.header.Get("WWW-Authenticate"), resp.body)
	}
}

// TestToolsListShowsOnlyWhatTheCallerMayCall: a caller whose access token,
// or API key, is limited to some scopes is listed only the tools it may
// call, on MCP and on the compatibility endpoint, in an answer cached as its
// own; an API key without scopes still sees every tool, and a key's scopes
// bind its calls as a token's do.
func TestToolsListShowsOnlyWhatTheCallerMayCall(t *testing.T) {
	is := newIssuer(t)
	url, keys := oauthGateway(t, is)
	resource := url + "/mcp"
	key := func(scopes ...string) string {
		k, _, err := keys.Create(context.Background(), "acme", "bob", scopes, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	token := func(scope string) string { return is.mint(t, "ES256", is.claims(resource, scope)) }
	rules := oauth.DefaultScopes("memory")
	// want lists the public tools scopes allow (nil: every public tool).
	want := func(scopes []string) []string {
		var out []string
		for _, tool := range catalog.Default().Tools() {
			if tool.Visibility == catalog.Public && (scopes == nil || rules.Access(scopes).Allows(tool.Family, tool.Mutates)) {
				out = append(out, tool.Name)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		name, bearer string
		scopes       []string // nil: not limited
	}{
		{"AWriteTokenSeesEveryTool", token(oauth.ScopeWrite), []string{oauth.ScopeWrite}},
		{"AReadTokenSeesOnlyTheToolsThatChangeNothing", token(oauth.ScopeRead), []string{oauth.ScopeRead}},
		{"AFamilyTokenSeesOnlyThatFamily", token("switchboard:memory"), []string{"switchboard:memory"}},
		{"AnAPIKeyWithoutScopesSeesEveryTool", key(), nil},
		{"AnAPIKeyWithAReadScopeSeesOnlyTheToolsThatChangeNothing", key(oauth.ScopeRead), []string{oauth.ScopeRead}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": "Bearer " + tc.bearer, "Mcp-Protocol-Version": "2025-11-25"}
			for _, path := range []struct{ url, body string }{
				{resource, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
				{url + "/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"tool-server/tools/list"}`},
			} {
				resp := post(t, path.url, h, path.body)
				var got struct {
					Result struct {
						Tools      []struct{ Name string }
						CacheScope string `json:"cacheScope"`
					}
				}
				if resp.status != 200 || len(resp.messages) != 1 {
					t.Fatalf("%s: %d %.300s", path.url, resp.status, resp.body)
				}
				b, _ := json.Marshal(resp.messages[0])
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatalf("%s: %d %.300s", path.url, resp.status, resp.body)
				}
				var names []string
				for _, tool := range got.Result.Tools {
					names = append(names, tool.Name)
				}
				// tool_search, which the gateway serves on MCP alone, finds
				// only what the caller may call: every caller may call it.
				if path.url == resource {
					names = slices.DeleteFunc(names, func(n string) bool { return n == gateway.ToolSearchName })
				}
				sort.Strings(names)
				if diff := cmp.Diff(want(tc.scopes), names); diff != "" {
					t.Errorf("%s: tools mismatch (-want +got):\n%s", path.url, diff)
				}
				// Every list is the caller's own: it holds the tenant's
				// connectors' tools, and a scoped caller's is filtered too.
				if path.url == resource && got.Result.CacheScope != "private" {
					t.Errorf("cacheScope %q; want private: the list is the caller's own", got.Result.CacheScope)
				}
			}
		})
	}
	create := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"c1"}}}`
	if resp := post(t, resource, map[string]string{"Authorization": "Bearer " + key(oauth.ScopeRead), "Mcp-Protocol-Version": "2025-11-25"}, create); resp.status != http.StatusForbidden {
		t.Errorf("a read-only API key called a mutating tool: %d %.300s", resp.status, resp.body)
	}
}
