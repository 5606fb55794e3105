package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// TestTheKeyCacheNeverOutlivesAKeysExpiry drives the cache and the keys it
// caches with one clock: an entry lasts the cache's TTL, or until its key
// expires if that is sooner.
func TestTheKeyCacheNeverOutlivesAKeysExpiry(t *testing.T) {
	type check struct {
		after time.Duration // since the key was first verified
		ok    bool
	}
	tests := []struct {
		name    string
		expires time.Duration // from the first verification; 0: never
		revoke  bool          // revoked just after the first verification
		checks  []check
	}{
		{
			name:    "a key expiring within the TTL is refused from its expiry on",
			expires: 10 * time.Second,
			checks:  []check{{10*time.Second - time.Nanosecond, true}, {10 * time.Second, false}, {49 * time.Second, false}},
		},
		{
			name:    "a key expiring after the TTL is served from the cache until it expires",
			expires: 90 * time.Second,
			checks:  []check{{59 * time.Second, true}, {60 * time.Second, true}, {90*time.Second - time.Nanosecond, true}, {90 * time.Second, false}},
		},
		{
			name:   "a revoked key works until the TTL ends, then is refused",
			revoke: true,
			checks: []check{{59 * time.Second, true}, {60 * time.Second, false}},
		},
	}
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, apikey.Partition) })
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				start := time.Now().Truncate(time.Second)
				now := start
				clock := func() time.Time { return now }
				keys := apikey.New(tbl, &apikey.Options{Now: clock})
				var expires time.Time
				if tt.expires > 0 {
					expires = start.Add(tt.expires)
				}
				secret, key, err := keys.Create(ctx, "acme", "alice", nil, expires)
				if err != nil {
					t.Fatal(err)
				}
				cache := newKeyCache(keys, time.Minute)
				cache.now = clock
				if _, err := cache.Verify(ctx, secret); err != nil {
					t.Fatal(err)
				}
				if tt.revoke {
					if err := keys.Revoke(ctx, key.Hash); err != nil {
						t.Fatal(err)
					}
				}
				for _, c := range tt.checks {
					now = start.Add(c.after)
					_, err := cache.Verify(ctx, secret)
					if c.ok && err != nil {
						t.Errorf("%s after the first use: %v, want the key accepted", c.after, err)
					}
					if !c.ok && !errors.Is(err, apikey.ErrInvalidKey) {
						t.Errorf("%s after the first use: %v, want ErrInvalidKey", c.after, err)
					}
				}
			})
		}
	})
}
