package ratelimit

import (
	"context"
	"math"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// micro is one token, in the micro-tokens a bucket counts.
const micro = 1_000_000

// Take spends one call from the token bucket at pk, sk, which refills at
// r: a budget of the caller's own, kept as [Limiter.Acquire] keeps the
// tenants' rates (the web searches a tenant may make, in the tenant's
// partition). It returns an [*Exceeded], its Limit empty, when the bucket
// is empty, or the table's error. An unlimited r takes nothing.
func (l *Limiter) Take(ctx context.Context, pk, sk string, r Rate) error {
	if r.unlimited() {
		return nil
	}
	return l.take(ctx, pk, sk, r)
}

// take spends one token of the bucket at pk, sk, or returns an [*Exceeded]
// (its Limit left for the caller) saying when one will be there. It spends a
// token held from an earlier write when it can, and otherwise takes up to
// the batch at once, holding the spare ones.
func (l *Limiter) take(ctx context.Context, pk, sk string, r Rate) error {
	key := pk + "\x00" + sk
	now := l.now()
	l.mu.Lock()
	if h := l.held[key]; h.n > 0 && now.Before(h.until) {
		h.n--
		l.held[key] = h
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	want := int64(l.batch)
	if want <= 0 {
		want = max(r.burst()/10, 1)
	}
	var got int64
	err := l.update(ctx, pk, sk, func(cur *store.Item, now time.Time) (*store.Item, error) {
		tokens, at := refill(cur, r, now)
		if tokens < micro {
			wait := time.Duration(math.Ceil(float64(micro-tokens)/r.PerSecond)) * time.Microsecond
			return nil, &Exceeded{RetryAfter: wait}
		}
		got = min(want, tokens/micro)
		tokens -= got * micro
		toFull := time.Duration(float64(r.burst()*micro-tokens)/r.PerSecond) * time.Microsecond
		return &store.Item{PK: pk, SK: sk, Attrs: store.Attrs{"tokens": tokens, "at": at.UnixMicro()},
			ExpiresAt: at.Add(toFull + idleTTL)}, nil
	})
	if err != nil {
		return err
	}
	if got > 1 {
		l.mu.Lock()
		if len(l.held) >= maxCached {
			clear(l.held)
		}
		l.held[key] = heldTokens{n: got - 1, until: now.Add(l.hold)}
		l.mu.Unlock()
	}
	return nil
}

// refill returns the micro-tokens in the bucket cur at now, and the time
// they are counted at: now, or the item's own time if another instance's
// clock ran ahead (a bucket never refills twice for the same moment). An
// absent bucket is full.
func refill(cur *store.Item, r Rate, now time.Time) (int64, time.Time) {
	full := r.burst() * micro
	if cur == nil {
		return full, now
	}
	at := time.UnixMicro(cur.Int("at"))
	if !now.After(at) {
		return min(cur.Int("tokens"), full), at
	}
	added := float64(now.Sub(at).Microseconds()) * r.PerSecond
	if added >= float64(full) {
		return full, now
	}
	return min(cur.Int("tokens")+int64(added), full), now
}
