package authz_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/authz"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func signingKeyPEM(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func keyring(t *testing.T) *elicit.Keyring {
	k, err := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestOffWithoutAResource(t *testing.T) {
	o, err := authz.Open(config.OAuth{}, nil, nil, nil)
	if o != nil || err != nil {
		t.Errorf("Open of no settings = %v, %v; want nil, nil", o, err)
	}
}

func TestBadSettingsNameTheirVariable(t *testing.T) {
	const resource = "https://api.example.com/mcp"
	for _, tc := range []struct {
		name string
		o    config.OAuth
		want string
	}{
		{"AnIssuerOverHTTP", config.OAuth{Resource: resource, Issuer: "http://issuer.example.com"}, config.EnvOAuthIssuer},
		{"ScopesThatAreNotJSON", config.OAuth{Resource: resource, Issuer: "https://issuer.example.com", Scopes: "read"}, config.EnvOAuthScopes},
		{"ASigningKeyNeitherPEMNorALongSeed", config.OAuth{Resource: resource, Facade: "on", ProviderIssuer: "https://idp.example.com", ProviderClientID: "c", SigningKeys: `{"fk1":"nope"}`}, config.EnvOAuthSigningKeys},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := authz.Open(tc.o, storetest.OpenEmbedded(t), keyring(t), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// With the facade on, the gateway serves its RFC 8414 metadata and names it
// as the resource's authorization server.
func TestTheFacadeIsMountedOnTheGateway(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	origin := "http://" + srv.Listener.Addr().String()
	// fk1 in PEM, fk2 derived from a seed as the template's secret holds it.
	keys, _ := json.Marshal(map[string]string{"fk1": signingKeyPEM(t), "fk2": elicit.NewSecret()})
	o, err := authz.Open(config.OAuth{
		Resource: origin + "/mcp", Facade: "on", SigningKeys: string(keys),
		ProviderIssuer: "https://idp.example.com", ProviderClientID: "switchboard",
	}, storetest.OpenEmbedded(t), keyring(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: unused{}, OAuth: o})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = gw.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	for path, want := range map[string]string{
		"/.well-known/oauth-authorization-server":   `"issuer":"` + origin + `"`,
		"/oauth/jwks.json":                          `"kid":"fk1"`,
		"/oauth/jwks.json?":                         `"kid":"fk2"`,
		"/.well-known/oauth-protected-resource/mcp": `"authorization_servers":["` + origin + `"]`,
	} {
		resp, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d %s, want it to hold %s", path, resp.StatusCode, b, want)
		}
	}
	resp, err := http.Post(origin+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, origin+"/.well-known/oauth-protected-resource/mcp") {
		t.Errorf("a request without a token: %d %q, want 401 naming the metadata", resp.StatusCode, ch)
	}
}

// unused is an invoker no test here reaches.
type unused struct{}

func (unused) Invoke(context.Context, string, *invoke.Request) (*invoke.Response, error) {
	panic("unused")
}
