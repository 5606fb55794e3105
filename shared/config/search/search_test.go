package search_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/secretstest"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/websearch"
)

func TestOptionsRefuseBadSettingsNamingTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    config.WebSearch
		want string
	}{
		{"an unknown backend", config.WebSearch{Backends: []string{"google"}}, config.EnvWebSearchBackends},
		{"a backend listed twice", config.WebSearch{Backends: []string{"duckduckgo", "duckduckgo"}}, config.EnvWebSearchBackends},
		{"brave without a key", config.WebSearch{Backends: []string{"brave"}}, config.EnvWebSearchBraveAPIKey},
		{"searxng without a URL", config.WebSearch{Backends: []string{"searxng"}}, config.EnvWebSearchSearXNGURL},
		{"searxng at an internal address", config.WebSearch{Backends: []string{"searxng"}, SearXNGURL: "https://169.254.169.254/"}, config.EnvWebSearchSearXNGURL},
		{"searxng over http when deployed", config.WebSearch{Backends: []string{"searxng"}, SearXNGURL: "http://searx.example.org/"}, config.EnvWebSearchSearXNGURL},
		{"duckduckgo at loopback", config.WebSearch{DuckDuckGoURL: "https://127.0.0.1/html/"}, config.EnvWebSearchDuckDuckGoURL},
		{"a cache TTL that is no duration", config.WebSearch{CacheTTL: "soon"}, config.EnvWebSearchCacheTTL},
		{"a cache TTL over a day", config.WebSearch{CacheTTL: "48h"}, config.EnvWebSearchCacheTTL},
		{"a rate that is none", config.WebSearch{Rate: "fast"}, config.EnvWebSearchRate},
		{"a burst of none", config.WebSearch{Burst: "0"}, config.EnvWebSearchBurst},
		{"an allowed host with a scheme", config.WebSearch{AllowedHosts: "https://searx.internal"}, config.EnvWebSearchAllowedHosts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Config{WebSearch: tc.s}
			if _, err := search.Options(context.Background(), &cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Options = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestOptionsBuildTheBackendsInOrder(t *testing.T) {
	cfg := config.Config{WebSearch: config.WebSearch{Backends: []string{"searxng", "brave", "duckduckgo"}, SearXNGURL: "http://127.0.0.1:8888",
		BraveAPIKey: "BSA-key", AllowedHosts: "127.0.0.1", AllowHTTP: true, CacheTTL: "0", Rate: "120/min", Burst: "5"}}
	o, err := search.Options(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range o.Backends {
		names = append(names, b.Name())
	}
	if strings.Join(names, ",") != "searxng,brave,duckduckgo" || o.CacheTTL >= 0 || o.Rate != (ratelimit.Rate{PerSecond: 2, Burst: 5}) {
		t.Errorf("Options = backends %v, TTL %v, rate %+v; want the three in order, no cache, 2/s in bursts of 5", names, o.CacheTTL, o.Rate)
	}
	cfg.WebSearch = config.WebSearch{CacheTTL: "1h", Rate: "0"}
	if o, err = search.Options(context.Background(), &cfg); err != nil || len(o.Backends) != 1 || o.Backends[0].Name() != websearch.DuckDuckGoBackend ||
		o.CacheTTL != time.Hour || o.Rate.PerSecond >= 0 {
		t.Errorf("defaults: %+v, %v; want duckduckgo alone, an hour's cache, no rate", o, err)
	}
}

func TestTheBraveKeyIsReadFromSecretsManager(t *testing.T) {
	arn := secretstest.ARN("brave")
	sm := secretstest.New(t, map[string]string{arn: "BSA-from-the-secret"})
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL, "AWS_REGION": secretstest.Region,
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	var got string
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("X-Subscription-Token")
		w.Write([]byte(`{"web":{"results":[]}}`))
	}))
	defer brave.Close()
	cfg := config.FromEnv(func(k string) string {
		switch k {
		case config.EnvWebSearchBackends:
			return "brave"
		case config.EnvWebSearchBraveAPIKey:
			return arn
		case config.EnvWebSearchBraveURL:
			return brave.URL
		case config.EnvWebSearchAllowedHosts:
			return "127.0.0.1"
		}
		return os.Getenv(k)
	})
	cfg.WebSearch.AllowHTTP = true
	o, err := search.Options(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Backends[0].Search(context.Background(), websearch.Query{Text: "go", Max: 5, Safe: websearch.SafeModerate}); err != nil {
		t.Fatal(err)
	}
	if got != "BSA-from-the-secret" || len(sm.Reads()) != 1 {
		t.Errorf("brave got the key %q after %d reads, want the secret's, read once", got, len(sm.Reads()))
	}
}
