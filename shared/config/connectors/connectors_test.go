package connectors_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
)

func TestOpenRefusesWhatWouldLeaveConnectorsUnguardedOrUnsealed(t *testing.T) {
	keyFile := config.FilePrefix + filepath.Join(t.TempDir(), "k.json")
	for _, tc := range []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"no key is refused, naming the variable", config.Config{}, config.EnvConnectorKey},
		{"an alias instead of a key ARN is refused", config.Config{ConnectorKey: "alias/connectors"}, config.EnvConnectorKey},
		{"a host with a scheme is refused", config.Config{ConnectorKey: keyFile, ConnectorAllowedHosts: "http://127.0.0.1"}, config.EnvConnectorAllowedHosts},
		{"a cache TTL that is no duration is refused", config.Config{ConnectorKey: keyFile, ConnectorCacheTTL: "five"}, config.EnvConnectorCacheTTL},
		{"a cache TTL under a second is refused", config.Config{ConnectorKey: keyFile, ConnectorCacheTTL: "10ms"}, config.EnvConnectorCacheTTL},
		{"a cache TTL over a day is refused", config.Config{ConnectorKey: keyFile, ConnectorCacheTTL: "25h"}, config.EnvConnectorCacheTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d lambdafn.Deps
			err := connectors.Open(context.Background(), &tc.cfg, &d)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestOpenAllowsHTTPAndTheListedHostsOnlyWhereConfigured(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		http    bool
		hosts   string
		url     string
		allowed bool
	}{
		{"a laptop reaches an allowed loopback host over http", true, "127.0.0.1", "http://127.0.0.1:3001/mcp", true},
		{"a laptop still refuses loopback hosts it did not allow", true, "localhost", "http://127.0.0.1:3001/mcp", false},
		{"a deployed function refuses http even to an allowed host", false, "127.0.0.1", "http://127.0.0.1:3001/mcp", false},
		{"a deployed function refuses the metadata service", false, "", "https://169.254.169.254/latest", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Config{ConnectorKey: config.FilePrefix + filepath.Join(t.TempDir(), "k.json"), ConnectorAllowedHosts: tc.hosts, ConnectorHTTP: tc.http}
			var d lambdafn.Deps
			if err := connectors.Open(ctx, &cfg, &d); err != nil {
				t.Fatal(err)
			}
			if _, err := d.CheckURL(ctx, tc.url); (err == nil) != tc.allowed {
				t.Errorf("CheckURL(%s) = %v, want allowed %v", tc.url, err, tc.allowed)
			}
			if d.HTTPClient == nil {
				t.Error("no HTTP client")
			}
		})
	}
}

func TestOpenSetsTheCacheTTLOrLeavesTheDefault(t *testing.T) {
	for raw, want := range map[string]time.Duration{"": 0, "0": 0, "90s": 90 * time.Second, "1h": time.Hour} {
		cfg := config.Config{ConnectorKey: config.FilePrefix + filepath.Join(t.TempDir(), "k.json"), ConnectorCacheTTL: raw}
		var d lambdafn.Deps
		if err := connectors.Open(context.Background(), &cfg, &d); err != nil || d.ConnectorCacheTTL != want {
			t.Errorf("%s=%q: TTL %v, %v; want %v", config.EnvConnectorCacheTTL, raw, d.ConnectorCacheTTL, err, want)
		}
	}
}

func TestTheClientReadsAnEventStreamPastTheBodyCap(t *testing.T) {
	events := strings.Repeat("data: "+strings.Repeat("x", 1<<10)+"\n\n", (netguard.DefaultMaxResponseBytes>>10)+100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(events))
	}))
	defer srv.Close()
	cfg := config.Config{ConnectorKey: config.FilePrefix + filepath.Join(t.TempDir(), "k.json"), ConnectorAllowedHosts: "127.0.0.1", ConnectorHTTP: true}
	var d lambdafn.Deps
	if err := connectors.Open(context.Background(), &cfg, &d); err != nil {
		t.Fatal(err)
	}
	resp, err := d.HTTPClient.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != len(events) {
		t.Fatalf("read %d of %d bytes of small events, %v", len(b), len(events), err)
	}
}

func TestTheLocalKeyFileSealsAndOpensUnderTheSameContextOnly(t *testing.T) {
	ctx := context.Background()
	cfg := config.Config{ConnectorKey: config.FilePrefix + filepath.Join(t.TempDir(), "sub", "k.json")}
	var d lambdafn.Deps
	if err := connectors.Open(ctx, &cfg, &d); err != nil {
		t.Fatal(err)
	}
	var again lambdafn.Deps // a second process opens the same file
	if err := connectors.Open(ctx, &cfg, &again); err != nil {
		t.Fatal(err)
	}
	checkSealing(t, d, again)
}

// checkSealing checks that what one sealer seals, the other opens, under the
// same encryption context only.
func checkSealing(t *testing.T, one, other lambdafn.Deps) {
	t.Helper()
	ctx := context.Background()
	ec := map[string]string{"tenant": "t1", "connector": "github", "purpose": "connector-credentials"}
	sealed, err := one.Sealer.Seal(ctx, []byte("secret"), ec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.Sealer.Open(ctx, sealed, ec); err != nil || string(got) != "secret" {
		t.Fatalf("Open = %q, %v; want the secret", got, err)
	}
	ec["tenant"] = "t2"
	if _, err := other.Sealer.Open(ctx, sealed, ec); err == nil {
		t.Error("another tenant's context opened the secret")
	}
}

// On AWS without a customer-managed key, the key ring is a Secrets Manager
// secret the function reads once at start: what one instance seals, another
// opens, under the same context only; a ring that is no key ring is refused
// naming the variable.
func TestTheKeyRingOfASecretSealsAndOpensUnderTheSameContextOnly(t *testing.T) {
	ctx := context.Background()
	ring, bad := secretstest.ARN("connector-keys"), secretstest.ARN("not-keys")
	sm := secretstest.New(t, map[string]string{ring: `{"k1":"` + strings.Repeat("a1", 32) + `"}`, bad: `{"k1":"short"}`})
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", sm.URL)
	t.Setenv("AWS_REGION", secretstest.Region)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	open := func(ref string) (lambdafn.Deps, error) {
		cfg := config.FromEnv(os.Getenv)
		cfg.ConnectorKey = ref
		var d lambdafn.Deps
		return d, connectors.Open(ctx, &cfg, &d)
	}
	d, err := open(ring)
	if err != nil {
		t.Fatal(err)
	}
	again, err := open(ring)
	if err != nil {
		t.Fatal(err)
	}
	checkSealing(t, d, again)
	if _, err := open(bad); err == nil || !strings.Contains(err.Error(), config.EnvConnectorKey) || strings.Contains(err.Error(), "short") {
		t.Errorf("a ring that is no key ring: err = %v, want one naming %s without the secret", err, config.EnvConnectorKey)
	}
	if diff := cmp.Diff([]string{ring, ring, bad}, sm.Reads()); diff != "" {
		t.Errorf("reads mismatch (-want +got):\n%s", diff)
	}
}
