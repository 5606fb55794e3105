// Package ratelimit keeps each tenant to its limits across every instance of
// every function: request rates per tenant and per principal (token buckets)
// and calls in flight per tenant, per principal and per function (leases), so
// that one tenant flooding a tool cannot make another's calls fail. The
// counters live in a [store.Table], written with conditional puts, and vanish
// by TTL once idle.
//
//	l := ratelimit.New(table, nil)
//	lease, err := l.Acquire(ctx, ratelimit.Call{Caller: caller, Function: "vector/rag_basic", Deadline: deadline})
//	if err != nil {
//		return err // fault.KindRateLimited, naming the limit and when to retry
//	}
//	defer lease.Release(context.WithoutCancel(ctx))
//
// Keys, in the tenant's own partition (a tenant-scoped credential reaches
// them), and the operators' overrides beside the API keys:
//
//	t#<tenant>#limits  rate              tokens (micro-calls), at (unix µs), ver   TTL: when full again + 1 min
//	                   rate#p#<16 hex>   the same, per principal (FNV-1a of the principal)
//	                   leases            leases (32 bytes each: expiry, id, principal, function), ver
//	                                     TTL: the last lease's expiry + 1 min
//	_limits            rate#<tenant>     spec (ParseLimits syntax over the defaults)
//
// An absent bucket is full and an absent lease set empty, so expiry loses
// nothing. Every write is conditional on the random version the writer read;
// a lost race reads again ([store.Retry]).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Limit names one of the limits a call can meet.
type Limit string

// The limits, as refusals name them.
const (
	TenantRate           Limit = "tenant rate"
	PrincipalRate        Limit = "principal rate"
	TenantConcurrency    Limit = "tenant concurrency"
	PrincipalConcurrency Limit = "principal concurrency"
	FunctionShare        Limit = "function share"
)

// Exceeded is the cause of a refusal: the limit a call met and when it may
// be tried again. Acquire returns it inside a [fault.KindRateLimited] error.
type Exceeded struct {
	Limit      Limit
	RetryAfter time.Duration
}

func (e *Exceeded) Error() string {
	return fmt.Sprintf("%s limit reached; retry after %v", e.Limit, e.RetryAfter)
}

// Defaults of [Options].
const (
	// DefaultOverrideTTL is how long an instance keeps a tenant's override
	// before reading it again: a changed override takes up to this long.
	DefaultOverrideTTL = time.Minute
	// DefaultHold is how long an instance may keep tokens it took ahead.
	DefaultHold = time.Second
	// LeaseGrace is how long a lease outlives its call's deadline: more than
	// the clock skew between instances, so a lease never lapses while its
	// call may still run.
	LeaseGrace = 2 * time.Second
	// MaxLease is the expiry of a lease whose call has no deadline: Lambda's
	// longest timeout.
	MaxLease = 15 * time.Minute
	// idleTTL is how long a counter outlives the moment it holds nothing.
	idleTTL = time.Minute
	// concurrencyRetry is the retry-after of a concurrency refusal when no
	// lease ends sooner: calls end unannounced, so this is a hint.
	concurrencyRetry = time.Second
	// maxCached bounds each of an instance's caches (states, held tokens,
	// overrides); a full cache is emptied, which costs reads, not correctness.
	maxCached = 4096
)

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Defaults are the limits of a tenant without an override. If nil,
	// defaults to [DefaultLimits].
	Defaults *Limits
	// Batch is how many tokens an instance takes from a bucket per write,
	// keeping the spare ones for its next calls (for at most Hold). If zero,
	// defaults to a tenth of the bucket's burst (at least 1); 1 writes on
	// every call. Tokens are taken before they are spent, so no limit is
	// ever exceeded; the price is that tokens an instance holds are not
	// available to the tenant's calls on other instances until they lapse,
	// so a tenant spread over n instances may be refused up to
	// n*(Batch-1) calls early. Other tenants are not affected.
	Batch int
	// Hold is how long held tokens stay usable. If zero, defaults to [DefaultHold].
	Hold time.Duration
	// OverrideTTL is how long an instance caches a tenant's override. If
	// zero, defaults to [DefaultOverrideTTL]; negative reads it on every call.
	OverrideTTL time.Duration
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings (an unreadable override, a failed release).
	// If nil, logs are discarded.
	Logger *slog.Logger
}

// Limiter enforces [Limits] across instances through a [store.Table]. It is
// safe for concurrent use; one per process.
type Limiter struct {
	table       store.Table
	defaults    Limits
	batch       int
	hold        time.Duration
	overrideTTL time.Duration
	now         func() time.Time
	log         *slog.Logger

	mu        sync.Mutex
	states    map[string]*store.Item // the last state this instance wrote or read, by pk and sk (nil: absent)
	held      map[string]heldTokens  // tokens taken ahead, by pk and sk
	overrides map[string]override    // by tenant
}

type heldTokens struct {
	n     int64
	until time.Time
}

type override struct {
	limits Limits
	until  time.Time
}

// New returns a Limiter keeping its counters in table.
func New(table store.Table, opts *Options) *Limiter {
	l := &Limiter{table: table, defaults: DefaultLimits, hold: DefaultHold, overrideTTL: DefaultOverrideTTL,
		now: time.Now, log: slog.New(slog.DiscardHandler),
		states: map[string]*store.Item{}, held: map[string]heldTokens{}, overrides: map[string]override{}}
	if opts != nil {
		if opts.Defaults != nil {
			l.defaults = *opts.Defaults
		}
		l.batch = opts.Batch
		if opts.Hold > 0 {
			l.hold = opts.Hold
		}
		if opts.OverrideTTL != 0 {
			l.overrideTTL = opts.OverrideTTL
		}
		if opts.Now != nil {
			l.now = opts.Now
		}
		if opts.Logger != nil {
			l.log = opts.Logger
		}
	}
	l.log = l.log.With("component", "ratelimit")
	return l
}

// Call is what [Limiter.Acquire] needs to know of a call.
type Call struct {
	// Caller is who the call acts for; its tenant and principal pick the budgets.
	Caller tenant.Caller
	// Function is the function serving the call (its path under functions/),
	// which [Limits.Shares] is keyed by.
	Function string
	// Deadline is when the call ends at the latest; its lease lapses
	// [LeaseGrace] later even if never released. If zero, [MaxLease] from now.
	Deadline time.Time
}

// Lease is an admitted call's place among the calls in flight.
type Lease struct {
	l  *Limiter
	pk string
	id uint64 // 0: the call holds no lease (no concurrency limit applied)
}

// Acquire admits c or refuses it with a [fault.KindRateLimited] error whose
// message names the limit met and when to retry (its cause is an
// [*Exceeded]). The principal's rate, the tenant's rate and the calls in
// flight (tenant, principal, function share) are checked at once, and a
// refusal names the first of them in that order; a refused call has spent
// the tokens it took, as a call, and gives back its lease. An
// admitted call must [Lease.Release] its lease when it ends; a lease never
// released lapses [LeaseGrace] after the call's deadline, so an instance
// that dies mid-call holds no place for long. A failure to reach the table
// is a [fault.KindUnavailable] error.
func (l *Limiter) Acquire(ctx context.Context, c Call) (*Lease, error) {
	if err := tenant.Validate(c.Caller.Tenant); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	lim, err := l.limits(ctx, c.Caller.Tenant)
	if err != nil {
		return nil, err
	}
	pk := tenant.Key(c.Caller.Tenant) + "limits"
	principal := principalHash(c.Caller.Principal)
	// The three items are independent: check them at once, so the call
	// waits for one write rather than three.
	var principalErr, tenantErr error
	var wg sync.WaitGroup
	if !lim.PrincipalRate.unlimited() {
		wg.Go(func() { principalErr = l.take(ctx, pk, "rate#p#"+strconv.FormatUint(principal, 16), lim.PrincipalRate) })
	}
	if !lim.TenantRate.unlimited() {
		wg.Go(func() { tenantErr = l.take(ctx, pk, "rate", lim.TenantRate) })
	}
	lease, met, leaseErr := l.lease(ctx, pk, principal, lim, c)
	wg.Wait()
	switch {
	case principalErr != nil:
		err = l.refusal(principalErr, PrincipalRate, lim, c)
	case tenantErr != nil:
		err = l.refusal(tenantErr, TenantRate, lim, c)
	case leaseErr != nil:
		return nil, l.refusal(leaseErr, met, lim, c)
	default:
		return lease, nil
	}
	lease.Release(ctx)
	return nil, err
}

// lease takes a place among the tenant's calls in flight for c, if any
// concurrency limit applies to it, or says which limit refused it.
func (l *Limiter) lease(ctx context.Context, pk string, principal uint64, lim Limits, c Call) (*Lease, Limit, error) {
	share := lim.Shares[c.Function]
	if lim.TenantConcurrency == 0 && lim.PrincipalConcurrency == 0 && share == 0 {
		return &Lease{}, "", nil
	}
	expiry := c.Deadline.Add(LeaseGrace)
	if c.Deadline.IsZero() {
		expiry = l.now().Add(MaxLease)
	}
	ls := lease{expiry: expiry.UnixMilli(), id: rand.Uint64() | 1, principal: principal, function: functionHash(c.Function)}
	var met Limit
	err := l.update(ctx, pk, skLeases, func(cur *store.Item, now time.Time) (*store.Item, error) {
		held := liveLeases(cur, now)
		var tenantN, principalN, functionN int
		for _, h := range held {
			tenantN++
			if h.principal == ls.principal {
				principalN++
			}
			if h.function == ls.function {
				functionN++
			}
		}
		switch {
		case lim.TenantConcurrency > 0 && tenantN >= lim.TenantConcurrency:
			met = TenantConcurrency
		case lim.PrincipalConcurrency > 0 && principalN >= lim.PrincipalConcurrency:
			met = PrincipalConcurrency
		case share > 0 && functionN >= share:
			met = FunctionShare
		default:
			return leasesItem(pk, append(held, ls), now), nil
		}
		return nil, &Exceeded{Limit: met, RetryAfter: concurrencyWait(held, met, ls, now)}
	})
	if err != nil {
		return nil, met, err
	}
	return &Lease{l: l, pk: pk, id: ls.id}, "", nil
}

// Release gives the lease's place back. It is safe to call on a lease that
// holds none, and more than once; a lease that cannot be released lapses
// at its expiry.
func (ls *Lease) Release(ctx context.Context) error {
	if ls == nil || ls.id == 0 {
		return nil
	}
	id := ls.id
	ls.id = 0
	err := ls.l.update(ctx, ls.pk, skLeases, func(cur *store.Item, now time.Time) (*store.Item, error) {
		held := liveLeases(cur, now)
		kept := held[:0]
		for _, h := range held {
			if h.id != id {
				kept = append(kept, h)
			}
		}
		if cur == nil || len(kept) == len(held) {
			return nil, nil // lapsed or already gone: nothing to write
		}
		return leasesItem(ls.pk, kept, now), nil
	})
	if err != nil {
		ls.l.log.WarnContext(ctx, "releasing a lease failed; it lapses at its expiry", "partition", ls.pk, "error", err)
		return fault.Unavailable(err, "releasing a call's place among the calls in flight failed; it lapses at the call's deadline")
	}
	return nil
}

// refusal turns err from checking limit into what Acquire returns.
func (l *Limiter) refusal(err error, limit Limit, lim Limits, c Call) error {
	var ex *Exceeded
	if !errors.As(err, &ex) {
		return fault.Unavailable(err, "checking the limits of tenant %q failed; retry", c.Caller.Tenant)
	}
	if ex.Limit == "" {
		ex.Limit = limit
	}
	t := c.Caller.Tenant
	var msg string
	switch ex.Limit {
	case PrincipalRate:
		msg = fmt.Sprintf("principal rate limit reached: each principal of tenant %q may make %s (bursts of %d)", t, perSecond(lim.PrincipalRate), lim.PrincipalRate.burst())
	case TenantRate:
		msg = fmt.Sprintf("tenant rate limit reached: tenant %q may make %s (bursts of %d)", t, perSecond(lim.TenantRate), lim.TenantRate.burst())
	case TenantConcurrency:
		msg = fmt.Sprintf("tenant concurrency limit reached: tenant %q may have %d calls in flight", t, lim.TenantConcurrency)
	case PrincipalConcurrency:
		msg = fmt.Sprintf("principal concurrency limit reached: each principal of tenant %q may have %d calls in flight", t, lim.PrincipalConcurrency)
	default:
		msg = fmt.Sprintf("function share reached: tenant %q may have %d calls to %s in flight", t, lim.Shares[c.Function], c.Function)
	}
	return fault.RateLimited(ex, ex.RetryAfter, "%s", msg)
}

func perSecond(r Rate) string {
	return strconv.FormatFloat(r.PerSecond, 'g', 4, 64) + " calls a second"
}

// update applies fn to the item at pk, sk and puts what it returns,
// conditional on the version fn saw; fn's error ends it, as does a nil item
// (nothing to write). It starts from this instance's last known state of
// the item, so an item only this instance writes costs one write and no
// read; a stale state fails its condition and is read again, and a refusal
// or nothing to write on a remembered state is checked on a read. Versions are
// random, never counted, so an item that expired and was created anew
// cannot match a version remembered from before.
func (l *Limiter) update(ctx context.Context, pk, sk string, fn func(cur *store.Item, now time.Time) (*store.Item, error)) error {
	key := pk + "\x00" + sk
	l.mu.Lock()
	cur, known := l.states[key]
	l.mu.Unlock()
	return store.Retry(ctx, func() error {
		var next *store.Item
		var err error
		for {
			if !known {
				it, gerr := l.table.Get(ctx, pk, sk)
				switch {
				case errors.Is(gerr, store.ErrNotFound):
					cur = nil
				case gerr != nil:
					return gerr
				default:
					cur = &it
				}
			}
			cached := known
			known = false // a retry reads
			next, err = fn(cur, l.now())
			if (err == nil && next != nil) || !cached {
				break
			}
			// Refused, or nothing to write, on a remembered state. It may be
			// stale: another instance may have released a lease since, and
			// concurrent calls of this instance remember their states in any
			// order, so the one remembered may predate a lease this instance
			// added (whose release would then find nothing to remove). A put
			// on a stale state fails its condition; a decision that writes
			// nothing is taken only on what the table holds.
		}
		if err != nil || next == nil {
			l.remember(key, cur)
			return err
		}
		next.Attrs["ver"] = rand.Int64()
		cond := store.IfAbsent()
		if cur != nil {
			cond = store.IfEquals("ver", cur.Int("ver"))
		}
		if err := l.table.Put(ctx, *next, cond); err != nil {
			return err
		}
		l.remember(key, next)
		return nil
	})
}

func (l *Limiter) remember(key string, it *store.Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.states) >= maxCached {
		clear(l.states)
	}
	l.states[key] = it
}

// principalHash and functionHash name a principal and a function in keys
// and leases in a fixed size: FNV-1a, 64 bits. Two principals of one tenant
// sharing a hash (one chance in 2^64 a pair) would share their budgets.
func principalHash(p string) uint64 { return fnv64(p) }
func functionHash(f string) uint64  { return fnv64(f) }

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
