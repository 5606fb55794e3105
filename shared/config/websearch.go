package config

import "strings"

// The environment variables of the web search family (package
// config/search builds its backends). README's web search section lists
// them.
const (
	// EnvWebSearchBackends lists the backends, in the order a search tries
	// them: duckduckgo, brave, searxng, comma-separated (default duckduckgo).
	EnvWebSearchBackends = "SWITCHBOARD_WEBSEARCH_BACKENDS"
	// EnvWebSearchDuckDuckGoURL, EnvWebSearchBraveURL: the endpoints, if not
	// the public ones (tests, a proxy).
	EnvWebSearchDuckDuckGoURL = "SWITCHBOARD_WEBSEARCH_DUCKDUCKGO_URL"
	EnvWebSearchBraveURL      = "SWITCHBOARD_WEBSEARCH_BRAVE_URL"
	// EnvWebSearchBraveAPIKey is the Brave Search API's subscription key
	// (on AWS, a Secrets Manager secret's ARN; package config/secrets).
	EnvWebSearchBraveAPIKey = "SWITCHBOARD_WEBSEARCH_BRAVE_API_KEY"
	// EnvWebSearchSearXNGURL is the SearXNG instance's base URL.
	EnvWebSearchSearXNGURL = "SWITCHBOARD_WEBSEARCH_SEARXNG_URL"
	// EnvWebSearchCacheTTL is how long a tenant's results stay cached, a Go
	// duration (default 15m; 0 caches nothing).
	EnvWebSearchCacheTTL = "SWITCHBOARD_WEBSEARCH_CACHE_TTL"
	// EnvWebSearchRate is each tenant's rate of outbound searches, such as
	// 30/min (the default; 0 for none), in bursts of EnvWebSearchBurst
	// (default 10).
	EnvWebSearchRate  = "SWITCHBOARD_WEBSEARCH_RATE"
	EnvWebSearchBurst = "SWITCHBOARD_WEBSEARCH_BURST"
	// EnvWebSearchAllowedHosts exempts hosts from the outbound guard's
	// address checks (shared/netguard): a SearXNG instance on a private
	// network.
	EnvWebSearchAllowedHosts = "SWITCHBOARD_WEBSEARCH_ALLOWED_HOSTS"
)

// WebSearch are the web search family's settings, as the environment gives
// them; package config/search checks and builds them.
type WebSearch struct {
	Backends                             []string
	DuckDuckGoURL, BraveURL, BraveAPIKey string
	SearXNGURL, CacheTTL, Rate, Burst    string
	AllowedHosts                         string
	// AllowHTTP allows backends over plain http: set on a laptop ([Local])
	// only, never from the environment.
	AllowHTTP bool
}

// WebSearchFromEnv reads the web search settings through getenv.
func WebSearchFromEnv(getenv func(string) string) WebSearch {
	return WebSearch{
		Backends:      list(strings.ToLower(getenv(EnvWebSearchBackends))),
		DuckDuckGoURL: strings.TrimSpace(getenv(EnvWebSearchDuckDuckGoURL)),
		BraveURL:      strings.TrimSpace(getenv(EnvWebSearchBraveURL)),
		BraveAPIKey:   strings.TrimSpace(getenv(EnvWebSearchBraveAPIKey)),
		SearXNGURL:    strings.TrimSpace(getenv(EnvWebSearchSearXNGURL)),
		CacheTTL:      strings.TrimSpace(getenv(EnvWebSearchCacheTTL)),
		Rate:          strings.TrimSpace(getenv(EnvWebSearchRate)),
		Burst:         strings.TrimSpace(getenv(EnvWebSearchBurst)),
		AllowedHosts:  getenv(EnvWebSearchAllowedHosts),
	}
}
