package ratelimit

import (
	"encoding/binary"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
)

const (
	skLeases = "leases"
	// leaseBytes is one lease's size in the item: expiry (unix ms), id,
	// principal hash, function hash, 8 bytes each, big-endian.
	leaseBytes = 32
)

// lease is one call in flight.
type lease struct {
	expiry    int64 // unix milliseconds
	id        uint64
	principal uint64
	function  uint64
}

// liveLeases decodes the leases of cur that have not lapsed at now.
func liveLeases(cur *store.Item, now time.Time) []lease {
	if cur == nil {
		return nil
	}
	b := cur.Bytes("leases")
	ms := now.UnixMilli()
	out := make([]lease, 0, len(b)/leaseBytes+1)
	for ; len(b) >= leaseBytes; b = b[leaseBytes:] {
		ls := lease{expiry: int64(binary.BigEndian.Uint64(b)), id: binary.BigEndian.Uint64(b[8:]),
			principal: binary.BigEndian.Uint64(b[16:]), function: binary.BigEndian.Uint64(b[24:])}
		if ls.expiry > ms {
			out = append(out, ls)
		}
	}
	return out
}

// leasesItem encodes leases as the tenant's lease item, which expires a
// minute after its last lease, or after now when it holds none (an item
// written already expired would fail the next write's condition).
func leasesItem(pk string, leases []lease, now time.Time) *store.Item {
	b := make([]byte, 0, len(leases)*leaseBytes)
	last := now.UnixMilli()
	for _, ls := range leases {
		b = binary.BigEndian.AppendUint64(b, uint64(ls.expiry))
		b = binary.BigEndian.AppendUint64(b, ls.id)
		b = binary.BigEndian.AppendUint64(b, ls.principal)
		b = binary.BigEndian.AppendUint64(b, ls.function)
		last = max(last, ls.expiry)
	}
	return &store.Item{PK: pk, SK: skLeases, Attrs: store.Attrs{"leases": b},
		ExpiresAt: time.UnixMilli(last).Add(idleTTL)}
}

// concurrencyWait is the retry-after of a refusal by limit: the time until
// the first lease counted against it lapses, or [concurrencyRetry] if that
// is sooner (calls end unannounced, usually long before their leases lapse).
func concurrencyWait(held []lease, limit Limit, want lease, now time.Time) time.Duration {
	wait := concurrencyRetry
	for _, h := range held {
		counts := limit == TenantConcurrency ||
			limit == PrincipalConcurrency && h.principal == want.principal ||
			limit == FunctionShare && h.function == want.function
		if counts {
			wait = min(wait, time.UnixMilli(h.expiry).Sub(now))
		}
	}
	return wait
}
