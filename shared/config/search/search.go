// Package search opens what the web search family's function needs: its
// backends, as the settings choose them (config.WebSearch), each reached
// through the outbound guard (shared/netguard), the Brave API key read from
// Secrets Manager when the setting names a secret (config/secrets), and the
// cache's TTL and the tenants' rate of searches.
//
//	err := search.Open(ctx, &cfg, &deps) // sets deps.WebSearch
package search

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/websearch"
	"github.com/switchboard-dev/switchboard/shared/websearch/brave"
	"github.com/switchboard-dev/switchboard/shared/websearch/duckduckgo"
	"github.com/switchboard-dev/switchboard/shared/websearch/searxng"
)

// MaxCacheTTL bounds the cache's TTL: results older than a day are stale.
const MaxCacheTTL = 24 * time.Hour

// Open sets d.WebSearch from c.WebSearch, naming the variable at fault.
func Open(ctx context.Context, c *config.Config, d *lambdafn.Deps) error {
	o, err := Options(ctx, c)
	if err != nil {
		return err
	}
	o.Logger = d.Logger
	d.WebSearch = o
	return nil
}

// Options builds the web search options c's settings describe.
func Options(ctx context.Context, c *config.Config) (*websearch.Options, error) {
	s := c.WebSearch
	hosts, err := netguard.ParseHosts(s.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvWebSearchAllowedHosts, err)
	}
	// A backend's answer is read whole, up to websearch.MaxBodyBytes; each
	// request is bounded by its context (websearch.Options.Timeout).
	guard := &netguard.Policy{AllowHTTP: s.AllowHTTP, AllowedHosts: hosts, MaxResponseBytes: websearch.MaxBodyBytes + 1}
	client := guard.Client(0)
	o := &websearch.Options{}
	names := s.Backends
	if len(names) == 0 {
		names = []string{websearch.DuckDuckGoBackend}
	}
	for _, name := range names {
		if slices.ContainsFunc(o.Backends, func(b websearch.Backend) bool { return b.Name() == name }) {
			return nil, fmt.Errorf("%s: %s is listed twice", config.EnvWebSearchBackends, name)
		}
		var b websearch.Backend
		switch name {
		case websearch.DuckDuckGoBackend:
			u, err := checkURL(ctx, guard, config.EnvWebSearchDuckDuckGoURL, s.DuckDuckGoURL)
			if err != nil {
				return nil, err
			}
			b = duckduckgo.New(u, client)
		case websearch.BraveBackend:
			u, err := checkURL(ctx, guard, config.EnvWebSearchBraveURL, s.BraveURL)
			if err != nil {
				return nil, err
			}
			key := s.BraveAPIKey
			if err := secrets.Resolve(ctx, c, config.EnvWebSearchBraveAPIKey, &key); err != nil {
				return nil, err
			}
			if b, err = brave.New(u, key, client); err != nil {
				return nil, fmt.Errorf("%s is required with the brave backend: %w", config.EnvWebSearchBraveAPIKey, err)
			}
		case websearch.SearXNGBackend:
			if s.SearXNGURL == "" {
				return nil, fmt.Errorf("%s is required with the searxng backend: the instance's base URL", config.EnvWebSearchSearXNGURL)
			}
			u, err := checkURL(ctx, guard, config.EnvWebSearchSearXNGURL, s.SearXNGURL)
			if err != nil {
				return nil, err
			}
			if b, err = searxng.New(u, client); err != nil {
				return nil, fmt.Errorf("%s: %w", config.EnvWebSearchSearXNGURL, err)
			}
		default:
			return nil, fmt.Errorf("%s: unknown backend %q (want %s)", config.EnvWebSearchBackends, name, strings.Join(websearch.BackendNames, ", "))
		}
		o.Backends = append(o.Backends, b)
	}
	switch ttl, err := time.ParseDuration(s.CacheTTL); {
	case s.CacheTTL == "":
	case s.CacheTTL == "0":
		o.CacheTTL = -1
	case err != nil || ttl < time.Second || ttl > MaxCacheTTL:
		return nil, fmt.Errorf("%s: %q is not a duration from 1s to %v, such as 15m, or 0", config.EnvWebSearchCacheTTL, s.CacheTTL, MaxCacheTTL)
	default:
		o.CacheTTL = ttl
	}
	if s.Rate != "" {
		per, err := ratelimit.ParseRate(s.Rate)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", config.EnvWebSearchRate, err)
		}
		o.Rate = ratelimit.Rate{PerSecond: per, Burst: websearch.DefaultRate.Burst}
		if per == 0 {
			o.Rate.PerSecond = -1
		}
	}
	if s.Burst != "" {
		n, err := strconv.Atoi(s.Burst)
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("%s: %q is not a count from 1 to 1000", config.EnvWebSearchBurst, s.Burst)
		}
		if o.Rate == (ratelimit.Rate{}) {
			o.Rate = websearch.DefaultRate
		}
		o.Rate.Burst = n
	}
	return o, nil
}

// checkURL checks raw, the setting of variable name, against the outbound
// guard; "" (the backend's default) passes.
func checkURL(ctx context.Context, guard *netguard.Policy, name, raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	if _, err := guard.CheckURL(ctx, raw); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return raw, nil
}
