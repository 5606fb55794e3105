package ratelimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// OverridePK is the partition of the per-tenant overrides: outside every
// tenant's keys, like the API keys', so that no tenant-scoped credential
// can raise its own limits.
const OverridePK = "_limits"

func overrideSK(tenantID string) string { return "rate#" + tenantID }

// SetOverride stores spec ([ParseLimits] syntax, read over the deployment's
// defaults) as tenantID's limits. Instances pick it up within their
// [Options.OverrideTTL].
func SetOverride(ctx context.Context, table store.Table, tenantID, spec string) error {
	if err := tenant.Validate(tenantID); err != nil {
		return err
	}
	if _, err := ParseLimits(spec, Limits{}); err != nil {
		return err
	}
	it := store.Item{PK: OverridePK, SK: overrideSK(tenantID), Attrs: store.Attrs{"spec": spec}}
	if err := table.Put(ctx, it, store.Condition{}); err != nil {
		return fmt.Errorf("ratelimit: storing the override of %s: %w", tenantID, err)
	}
	return nil
}

// ClearOverride removes tenantID's override, returning it to the defaults.
func ClearOverride(ctx context.Context, table store.Table, tenantID string) error {
	if err := table.Delete(ctx, OverridePK, overrideSK(tenantID), store.Condition{}); err != nil {
		return fmt.Errorf("ratelimit: clearing the override of %s: %w", tenantID, err)
	}
	return nil
}

// limits returns tenantID's limits: its override over the defaults, read
// at most once per OverrideTTL.
func (l *Limiter) limits(ctx context.Context, tenantID string) (Limits, error) {
	now := l.now()
	l.mu.Lock()
	o, ok := l.overrides[tenantID]
	l.mu.Unlock()
	if ok && now.Before(o.until) {
		return o.limits, nil
	}
	lim := l.defaults
	it, err := l.table.Get(ctx, OverridePK, overrideSK(tenantID))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return Limits{}, fault.Unavailable(err, "reading the limits of tenant %q failed; retry", tenantID)
	default:
		if lim, err = ParseLimits(it.String("spec"), l.defaults); err != nil {
			// SetOverride validates; only a hand-edited item gets here.
			l.log.WarnContext(ctx, "ignoring an unreadable override", "tenant", tenantID, "error", err)
			lim = l.defaults
		}
	}
	l.mu.Lock()
	if len(l.overrides) >= maxCached {
		clear(l.overrides)
	}
	l.overrides[tenantID] = override{limits: lim, until: now.Add(l.overrideTTL)}
	l.mu.Unlock()
	return lim, nil
}
