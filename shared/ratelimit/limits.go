package ratelimit

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rate is a token bucket: a caller may make Burst calls at once, and the
// bucket refills at PerSecond calls a second. The zero Rate is unlimited.
type Rate struct {
	PerSecond float64
	Burst     int
}

// unlimited reports whether r imposes nothing.
func (r Rate) unlimited() bool { return r.PerSecond <= 0 }

// burst is r's bucket size: Burst, or one second's calls (at least 1) when
// Burst is not set.
func (r Rate) burst() int64 {
	if r.Burst > 0 {
		return int64(r.Burst)
	}
	return max(int64(r.PerSecond), 1)
}

// Limits are one tenant's limits. A zero field imposes nothing.
type Limits struct {
	// TenantRate bounds the calls of the whole tenant, every principal together.
	TenantRate Rate
	// PrincipalRate bounds the calls of each principal (API key holder, user) of the tenant.
	PrincipalRate Rate
	// TenantConcurrency bounds the tenant's calls in flight at once.
	TenantConcurrency int
	// PrincipalConcurrency bounds each principal's calls in flight at once.
	PrincipalConcurrency int
	// Shares bounds the tenant's calls in flight at once to one function,
	// by function (its path under functions/, such as "vector/rag_basic"):
	// the tenant's share of a function whose capacity all tenants share
	// (reserved concurrency), so one tenant cannot hold all of it.
	Shares map[string]int
}

// DefaultLimits are the limits of a tenant with no override, unless the
// deployment configures others ([Options.Defaults]). Sized for an agent
// host's bursts (a few dozen tool calls within seconds), not for bulk work:
// 20 calls a second per tenant (bursts of 40), 10 per principal (bursts of
// 20), 16 calls in flight per tenant and 8 per principal. Function shares
// come from the catalog, by the wiring.
var DefaultLimits = Limits{
	TenantRate:           Rate{PerSecond: 20, Burst: 40},
	PrincipalRate:        Rate{PerSecond: 10, Burst: 20},
	TenantConcurrency:    16,
	PrincipalConcurrency: 8,
}

// MaxConcurrency bounds every concurrency limit, so that a tenant's leases
// fit one item (32 bytes each).
const MaxConcurrency = 1000

// MaxRate bounds a rate and a burst, so bucket arithmetic in micro-tokens
// never overflows.
const MaxRate = 1_000_000

// ParseLimits reads a limits specification over base: space- or
// comma-separated key=value pairs, each setting one limit.
//
//	tenant_rate=20 tenant_burst=40 principal_rate=10/s principal_burst=20
//	tenant_concurrency=16 principal_concurrency=8 share.vector/rag_basic=2
//
// Rates are calls a second, or a minute with the suffix /min (600/min); 0
// removes a limit. It is the syntax of the deployment's configuration and of
// the per-tenant overrides in the table ([SetOverride]).
func ParseLimits(spec string, base Limits) (Limits, error) {
	l := base
	l.Shares = maps.Clone(base.Shares)
	for _, field := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return Limits{}, fmt.Errorf("rate limits: %q is not key=value", field)
		}
		var err error
		switch key {
		case "tenant_rate":
			l.TenantRate.PerSecond, err = parseRate(value)
		case "principal_rate":
			l.PrincipalRate.PerSecond, err = parseRate(value)
		case "tenant_burst":
			l.TenantRate.Burst, err = parseCount(value, MaxRate)
		case "principal_burst":
			l.PrincipalRate.Burst, err = parseCount(value, MaxRate)
		case "tenant_concurrency":
			l.TenantConcurrency, err = parseCount(value, MaxConcurrency)
		case "principal_concurrency":
			l.PrincipalConcurrency, err = parseCount(value, MaxConcurrency)
		default:
			fn, isShare := strings.CutPrefix(key, "share.")
			if !isShare || fn == "" || len(fn) > 128 || !utf8.ValidString(fn) {
				return Limits{}, fmt.Errorf("rate limits: unknown limit %q (want tenant_rate, tenant_burst, principal_rate, principal_burst, tenant_concurrency, principal_concurrency or share.<function>)", key)
			}
			var n int
			if n, err = parseCount(value, MaxConcurrency); err == nil {
				if l.Shares == nil {
					l.Shares = map[string]int{}
				}
				l.Shares[fn] = n
			}
		}
		if err != nil {
			return Limits{}, fmt.Errorf("rate limits: %s: %w", key, err)
		}
	}
	return l, nil
}

func parseRate(s string) (float64, error) {
	per := 1.0
	if n, ok := strings.CutSuffix(s, "/min"); ok {
		s, per = n, 60
	} else {
		s = strings.TrimSuffix(s, "/s")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v/per > MaxRate {
		return 0, fmt.Errorf("%q is not a rate: use calls a second (20, 20/s) or a minute (600/min), at most %d a second", s, MaxRate)
	}
	return v / per, nil
}

func parseCount(s string, limit int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > limit {
		return 0, fmt.Errorf("%q is not a count from 0 to %d", s, limit)
	}
	return n, nil
}

// String returns l in the syntax [ParseLimits] reads.
func (l Limits) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	parts := []string{
		"tenant_rate=" + f(l.TenantRate.PerSecond), "tenant_burst=" + strconv.Itoa(l.TenantRate.Burst),
		"principal_rate=" + f(l.PrincipalRate.PerSecond), "principal_burst=" + strconv.Itoa(l.PrincipalRate.Burst),
		"tenant_concurrency=" + strconv.Itoa(l.TenantConcurrency), "principal_concurrency=" + strconv.Itoa(l.PrincipalConcurrency),
	}
	for _, fn := range slices.Sorted(maps.Keys(l.Shares)) {
		parts = append(parts, "share."+fn+"="+strconv.Itoa(l.Shares[fn]))
	}
	return strings.Join(parts, " ")
}

// ParseRate reads a rate as [ParseLimits] does: calls a second (20, 20/s)
// or a minute (600/min).
func ParseRate(s string) (float64, error) { return parseRate(s) }
