package ratelimit

import (
	"maps"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// Configured returns the limits of a tenant without an override of its
// own, as the deployment configures them (config.EnvRateLimits): spec in
// [ParseLimits]'s syntax over [DefaultLimits] ("" for the defaults), with
// the catalog's [Shares]; and false for "off". The gateway holds each call
// to them, and the chat each tool call it makes for its caller.
func Configured(spec string, cat *catalog.Catalog) (Limits, bool, error) {
	if strings.TrimSpace(spec) == "off" { // config.RateLimitsOff
		return Limits{}, false, nil
	}
	l, err := ParseLimits(spec, DefaultLimits)
	if err != nil {
		return l, false, err
	}
	return Shares(cat, l), true, nil
}

// Shares returns limits with each function's share of calls in flight per
// tenant set from the catalog: half the function's reserved concurrency,
// at least 1, for every function that has one (the pipelines), so that one
// tenant flooding a function leaves the rest of its capacity to others. A
// share limits already gives is kept.
func Shares(cat *catalog.Catalog, limits Limits) Limits {
	shares := map[string]int{}
	for _, f := range cat.Functions() {
		if rc := f.Limits.ReservedConcurrency; rc > 0 {
			shares[f.Path] = max(rc/2, 1)
		}
	}
	maps.Copy(shares, limits.Shares)
	limits.Shares = shares
	return limits
}
