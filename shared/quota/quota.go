// Package quota bounds what a tenant stores, per store and in all:
// documents, chunks and bytes. Usage counters are updated in the same
// transaction as the writes they count, so they never drift from what is
// stored, and a change that would pass a quota is refused before anything
// is written.
//
//	writes, err := quotas.Charge(ctx, tenantID, alias, quota.Usage{Documents: 1, Chunks: n, Bytes: size})
//	if err != nil {
//		return err // fault.KindQuotaExceeded, naming the quota and the current use
//	}
//	err = table.Transact(ctx, append(manifestCommit, writes...)...)
//	// a lost race (store.ErrConditionFailed): read again and charge again
//
// Keys, in the tenant's partition, and the operators' overrides beside the
// rate limits':
//
//	t#<tenant>#quota  tenant          documents, chunks, bytes, ver (no TTL: usage must persist)
//	                  store#<name>    the same, per store
//	_limits           quota#<tenant>  store_documents, store_chunks, store_bytes, tenant_documents, ...
package quota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Usage is what a tenant or a store holds, or a change to it.
type Usage struct {
	Documents int64
	Chunks    int64
	Bytes     int64
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Documents + v.Documents, u.Chunks + v.Chunks, u.Bytes + v.Bytes}
}

// Limits are a tenant's quotas. A zero field imposes nothing.
type Limits struct {
	// Store bounds each store.
	Store Usage
	// Tenant bounds every store of the tenant together.
	Tenant Usage
}

// DefaultLimits are the quotas of a tenant with no override, unless the
// deployment configures others ([Options.Defaults]): per store 50,000
// documents, 1,000,000 chunks and 2 GiB; per tenant 200,000 documents,
// 5,000,000 chunks and 10 GiB. Bytes are what the store keeps: shards and
// uploads, as the caller counts them.
var DefaultLimits = Limits{
	Store:  Usage{Documents: 50_000, Chunks: 1_000_000, Bytes: 2 << 30},
	Tenant: Usage{Documents: 200_000, Chunks: 5_000_000, Bytes: 10 << 30},
}

// OverridePK is the partition of the per-tenant overrides, outside every
// tenant's keys, so that no tenant-scoped credential can raise its own quota.
const OverridePK = "_limits"

func overrideSK(tenantID string) string { return "quota#" + tenantID }

const (
	skTenant    = "tenant"
	storePrefix = "store#"
)

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Defaults are the quotas of a tenant without an override. If nil,
	// defaults to [DefaultLimits].
	Defaults *Limits
	// Overrides is the table the operators' overrides ([OverridePK]) are
	// read from. If nil, defaults to the usage table. A function whose table
	// client signs as the caller's tenant (package tenantcreds) cannot read
	// them, being outside every tenant's keys: it passes a client of its own.
	Overrides store.Table
}

// Quotas checks and counts usage in a [store.Table]. It is safe for
// concurrent use.
type Quotas struct {
	table     store.Table
	overrides store.Table
	defaults  Limits
}

// New returns Quotas keeping usage in table.
func New(table store.Table, opts *Options) *Quotas {
	q := &Quotas{table: table, overrides: table, defaults: DefaultLimits}
	if opts != nil && opts.Defaults != nil {
		q.defaults = *opts.Defaults
	}
	if opts != nil && opts.Overrides != nil {
		q.overrides = opts.Overrides
	}
	return q
}

func pk(tenantID string) string { return tenant.Key(tenantID) + "quota" }

// counter is a usage item as read: absent is zero usage.
type counter struct {
	use    Usage
	ver    int64
	exists bool
}

func (q *Quotas) read(ctx context.Context, pk, sk string) (counter, error) {
	it, err := q.table.Get(ctx, pk, sk)
	if errors.Is(err, store.ErrNotFound) {
		return counter{}, nil
	}
	if err != nil {
		return counter{}, err
	}
	return counter{use: Usage{it.Int("documents"), it.Int("chunks"), it.Int("bytes")}, ver: it.Int("ver"), exists: true}, nil
}

// write returns the put of u over c, conditional on c being what the table
// still holds.
func (c counter) write(pk, sk string, u Usage) store.Write {
	cond := store.IfAbsent()
	if c.exists {
		cond = store.IfEquals("ver", c.ver)
	}
	return store.Put(store.Item{PK: pk, SK: sk, Attrs: store.Attrs{
		"documents": max(u.Documents, 0), "chunks": max(u.Chunks, 0), "bytes": max(u.Bytes, 0), "ver": rand.Int64(),
	}}, cond)
}

// Usage returns what storeName and the whole tenant hold.
func (q *Quotas) Usage(ctx context.Context, tenantID, storeName string) (storeUse, tenantUse Usage, err error) {
	p := pk(tenantID)
	s, err := q.read(ctx, p, storePrefix+storeName)
	if err != nil {
		return Usage{}, Usage{}, fault.Unavailable(err, "reading the usage of store %q failed; retry", storeName)
	}
	t, err := q.read(ctx, p, skTenant)
	if err != nil {
		return Usage{}, Usage{}, fault.Unavailable(err, "reading the tenant's usage failed; retry")
	}
	return s.use, t.use, nil
}

// Charge checks that adding delta to storeName and to the tenant keeps both
// within their quotas, and returns the two writes that record it,
// conditional on the usage it read: the caller adds them to the
// transaction that stores what delta counts, and on a lost race
// ([store.ErrConditionFailed], [store.ErrConflict]) reads its own state
// again and charges again. A delta that only shrinks usage (a delete) is
// never refused. Going over is a [fault.KindQuotaExceeded] error naming the
// quota, the current use and what the change adds.
func (q *Quotas) Charge(ctx context.Context, tenantID, storeName string, delta Usage) ([]store.Write, error) {
	lim, err := q.limits(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	p := pk(tenantID)
	s, err := q.read(ctx, p, storePrefix+storeName)
	if err != nil {
		return nil, fault.Unavailable(err, "reading the usage of store %q failed; retry", storeName)
	}
	t, err := q.read(ctx, p, skTenant)
	if err != nil {
		return nil, fault.Unavailable(err, "reading the tenant's usage failed; retry")
	}
	if err := check(fmt.Sprintf("store %q", storeName), s.use, delta, lim.Store); err != nil {
		return nil, err
	}
	if err := check(fmt.Sprintf("tenant %q", tenantID), t.use, delta, lim.Tenant); err != nil {
		return nil, err
	}
	return []store.Write{
		s.write(p, storePrefix+storeName, s.use.Add(delta)),
		t.write(p, skTenant, t.use.Add(delta)),
	}, nil
}

// Drop returns the writes that forget storeName's usage when the store is
// deleted: its counter removed and the tenant's reduced by it, conditional
// on both being what was read. The caller adds them to the transaction
// that deletes the store's record.
func (q *Quotas) Drop(ctx context.Context, tenantID, storeName string) ([]store.Write, error) {
	p := pk(tenantID)
	s, err := q.read(ctx, p, storePrefix+storeName)
	if err != nil {
		return nil, fault.Unavailable(err, "reading the usage of store %q failed; retry", storeName)
	}
	if !s.exists {
		return nil, nil
	}
	t, err := q.read(ctx, p, skTenant)
	if err != nil {
		return nil, fault.Unavailable(err, "reading the tenant's usage failed; retry")
	}
	return []store.Write{
		store.Delete(p, storePrefix+storeName, store.IfEquals("ver", s.ver)),
		t.write(p, skTenant, t.use.Add(Usage{-s.use.Documents, -s.use.Chunks, -s.use.Bytes})),
	}, nil
}

// check refuses delta if it takes who's use past limit in any dimension it grows.
func check(who string, use, delta, limit Usage) error {
	dims := []struct {
		name             string
		use, delta, most int64
		format           func(int64) string
	}{
		{"documents", use.Documents, delta.Documents, limit.Documents, count},
		{"chunks", use.Chunks, delta.Chunks, limit.Chunks, count},
		{"stored", use.Bytes, delta.Bytes, limit.Bytes, bytes},
	}
	for _, d := range dims {
		if d.delta > 0 && d.most > 0 && d.use+d.delta > d.most {
			return fault.QuotaExceeded("%s would pass its quota of %s %s: it holds %s and this change adds %s; delete some or ask the operator for a larger quota",
				who, d.format(d.most), d.name, d.format(d.use), d.format(d.delta))
		}
	}
	return nil
}

func count(n int64) string { return fmt.Sprintf("%d", n) }

// bytes writes n in the largest binary unit that keeps it at 1 or more.
func bytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// SetOverride stores l as tenantID's quotas.
func SetOverride(ctx context.Context, table store.Table, tenantID string, l Limits) error {
	if err := tenant.Validate(tenantID); err != nil {
		return err
	}
	for _, v := range []int64{l.Store.Documents, l.Store.Chunks, l.Store.Bytes, l.Tenant.Documents, l.Tenant.Chunks, l.Tenant.Bytes} {
		if v < 0 {
			return fmt.Errorf("quota: a quota of %d for %s is negative; 0 removes a quota", v, tenantID)
		}
	}
	it := store.Item{PK: OverridePK, SK: overrideSK(tenantID), Attrs: store.Attrs{
		"store_documents": l.Store.Documents, "store_chunks": l.Store.Chunks, "store_bytes": l.Store.Bytes,
		"tenant_documents": l.Tenant.Documents, "tenant_chunks": l.Tenant.Chunks, "tenant_bytes": l.Tenant.Bytes,
	}}
	if err := table.Put(ctx, it, store.Condition{}); err != nil {
		return fmt.Errorf("quota: storing the override of %s: %w", tenantID, err)
	}
	return nil
}

// ClearOverride removes tenantID's override, returning it to the defaults.
func ClearOverride(ctx context.Context, table store.Table, tenantID string) error {
	if err := table.Delete(ctx, OverridePK, overrideSK(tenantID), store.Condition{}); err != nil {
		return fmt.Errorf("quota: clearing the override of %s: %w", tenantID, err)
	}
	return nil
}

// limits returns tenantID's quotas: its override, or the defaults. Charges
// are rare next to what they count (an ingest embeds and writes shards), so
// the override is read every time rather than cached.
func (q *Quotas) limits(ctx context.Context, tenantID string) (Limits, error) {
	it, err := q.overrides.Get(ctx, OverridePK, overrideSK(tenantID))
	if errors.Is(err, store.ErrNotFound) {
		return q.defaults, nil
	}
	if err != nil {
		return Limits{}, fault.Unavailable(err, "reading the quotas of tenant %q failed; retry", tenantID)
	}
	return Limits{
		Store:  Usage{it.Int("store_documents"), it.Int("store_chunks"), it.Int("store_bytes")},
		Tenant: Usage{it.Int("tenant_documents"), it.Int("tenant_chunks"), it.Int("tenant_bytes")},
	}, nil
}

// ParseLimits reads a quota specification over base: space- or
// comma-separated key=value pairs, each setting one quota, with the keys of
// the overrides ([SetOverride]).
//
//	store_documents=50000 store_chunks=1000000 store_bytes=2GiB
//	tenant_documents=200000 tenant_chunks=5000000 tenant_bytes=10GiB
//
// Bytes take a suffix KiB, MiB, GiB or TiB; 0 removes a quota. It is the
// syntax of the deployment's defaults (SWITCHBOARD_QUOTAS).
func ParseLimits(spec string, base Limits) (Limits, error) {
	l := base
	for _, field := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return Limits{}, fmt.Errorf("quotas: %q is not key=value", field)
		}
		dst := map[string]*int64{
			"store_documents": &l.Store.Documents, "store_chunks": &l.Store.Chunks, "store_bytes": &l.Store.Bytes,
			"tenant_documents": &l.Tenant.Documents, "tenant_chunks": &l.Tenant.Chunks, "tenant_bytes": &l.Tenant.Bytes,
		}[key]
		if dst == nil {
			return Limits{}, fmt.Errorf("quotas: unknown quota %q (want store_documents, store_chunks, store_bytes, tenant_documents, tenant_chunks or tenant_bytes)", key)
		}
		n, err := parseAmount(value, strings.HasSuffix(key, "_bytes"))
		if err != nil {
			return Limits{}, fmt.Errorf("quotas: %s: %w", key, err)
		}
		*dst = n
	}
	return l, nil
}

// parseAmount reads a count, or with binary units a byte size.
func parseAmount(s string, units bool) (int64, error) {
	shift := 0
	if units {
		for i, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
			if n, ok := strings.CutSuffix(s, u); ok {
				s, shift = n, 10*(i+1)
				break
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		if units {
			return 0, fmt.Errorf("%q is not a size: use bytes, or a whole number of KiB, MiB, GiB or TiB (2GiB)", s)
		}
		return 0, fmt.Errorf("%q is not a count: use a whole number, 0 for none", s)
	}
	return n << shift, nil
}
