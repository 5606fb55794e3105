package apikey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// eachTable runs fn on every table backend, with the key partition emptied
// afterwards: the DynamoDB backend's table is shared by the package's tests.
func eachTable(t *testing.T, fn func(t *testing.T, tbl store.Table)) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, apikey.Partition) })
		fn(t, tbl)
	})
}

// clock is a settable time source for [apikey.Options.Now].
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestKeys(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		keys := apikey.New(tbl, nil)

		secret, key, err := keys.Create(ctx, "acme", "alice", []string{"memory"}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, apikey.Prefix) || len(secret) < 40 || key.Hash != apikey.Hash(secret) {
			t.Fatalf("Create returned %q with hash %s", secret, key.Hash)
		}
		it, err := tbl.Get(ctx, apikey.Partition, key.Hash)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range it.Attrs {
			if s, ok := v.(string); ok && strings.Contains(s, secret[len(apikey.Prefix):]) {
				t.Errorf("the stored item holds the key itself in %q", name)
			}
		}
		got, err := keys.Verify(ctx, secret)
		if c := got.Caller(); err != nil || c.Tenant != "acme" || c.Principal != "alice" || len(c.Scopes) != 1 || !got.ExpiresAt.IsZero() {
			t.Fatalf("Verify = %+v, %v", got, err)
		}
		for name, bad := range map[string]string{
			"Unknown":  apikey.Prefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
			"NoPrefix": secret[len(apikey.Prefix):],
			"TooLong":  secret + strings.Repeat("x", 200),
			"Empty":    "",
		} {
			if _, err := keys.Verify(ctx, bad); !errors.Is(err, apikey.ErrInvalidKey) {
				t.Errorf("Verify(%s) error = %v, want ErrInvalidKey", name, err)
			}
		}
		list, err := keys.List(ctx)
		if err != nil || len(list) != 1 || list[0].Hash != key.Hash {
			t.Fatalf("List = %+v, %v; want only the live key", list, err)
		}
		if err := keys.Revoke(ctx, key.Hash); err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Verify(ctx, secret); !errors.Is(err, apikey.ErrInvalidKey) {
			t.Errorf("Verify after Revoke: error = %v, want ErrInvalidKey", err)
		}
		if err := keys.Revoke(ctx, key.Hash); fault.KindOf(err) != fault.KindNotFound {
			t.Errorf("revoking a revoked key: %v, want not_found; a typo would look like success", err)
		}
		if err := keys.Revoke(ctx, "../"+key.Hash[3:]); fault.KindOf(err) != fault.KindInvalid || !strings.Contains(err.Error(), "hash") {
			t.Errorf("revoking a malformed hash: %v, want invalid_argument naming the hash", err)
		}
	})
}

func TestCreateRefusesBadInputAndStoresNothing(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	tests := []struct {
		name      string
		tenant    string
		principal string
		expires   time.Time
		wantText  string
	}{
		{"an uppercase tenant", "ACME", "alice", time.Time{}, "tenant id"},
		{"a tenant with an escape sequence", "acme\x1b[2J", "alice", time.Time{}, "tenant id"},
		{"an empty principal", "acme", "", time.Time{}, "principal"},
		{"a principal on two lines", "acme", "two\nlines", time.Time{}, "principal"},
		{"a principal with an escape sequence", "acme", "alice\x1b]0;owned\x07", time.Time{}, "principal"},
		{"a principal with a right-to-left override", "acme", "alice\u202e", time.Time{}, "principal"},
		{"an expiry in the past", "acme", "alice", now.Add(-5 * time.Minute), "expires"},
		{"an expiry now", "acme", "alice", now, "expires"},
		{"an expiry within the current second", "acme", "alice", now.Add(300 * time.Millisecond), "expires"},
	}
	eachTable(t, func(t *testing.T, tbl store.Table) {
		keys := apikey.New(tbl, &apikey.Options{Now: func() time.Time { return now }})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := keys.Create(context.Background(), tt.tenant, tt.principal, nil, tt.expires)
				if fault.KindOf(err) != fault.KindInvalid || !strings.Contains(err.Error(), tt.wantText) {
					t.Errorf("Create = %v, want invalid_argument naming %q", err, tt.wantText)
				}
			})
		}
		if list, err := keys.List(context.Background()); err != nil || len(list) != 0 {
			t.Errorf("after refused creations List = %+v, %v; want nothing", list, err)
		}
	})
}

func TestAKeyStopsWorkingAtTheStartOfItsExpirySecond(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		start := time.Now().Truncate(time.Second)
		clk := &clock{start}
		keys := apikey.New(tbl, &apikey.Options{Now: clk.now})
		secret, key, err := keys.Create(ctx, "acme", "temp", nil, start.Add(90*time.Second+700*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		expiry := start.Add(90 * time.Second)
		if !key.ExpiresAt.Equal(expiry) {
			t.Fatalf("Create reports expiry %s, want %s (cut to the second, as stored)", key.ExpiresAt, expiry)
		}
		tests := []struct {
			name string
			at   time.Time
			live bool
		}{
			{"a nanosecond before its expiry the key works", expiry.Add(-time.Nanosecond), true},
			{"at its expiry the key is refused", expiry, false},
			{"49 seconds after its expiry the key is refused", expiry.Add(49 * time.Second), false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				clk.t = tt.at
				got, err := keys.Verify(ctx, secret)
				if tt.live && (err != nil || !got.ExpiresAt.Equal(expiry)) {
					t.Errorf("Verify = %+v, %v; want the key, expiring at %s", got, err, expiry)
				}
				if !tt.live && !errors.Is(err, apikey.ErrInvalidKey) {
					t.Errorf("Verify = %+v, %v; want ErrInvalidKey", got, err)
				}
				if list, err := keys.List(ctx); err != nil || (len(list) == 1) != tt.live {
					t.Errorf("List = %+v, %v; want the key listed: %v", list, err, tt.live)
				}
			})
		}
	})
}

// TestAKeyStoredWithAnUnprintablePrincipalIsRefusedButListed covers tables
// written before principals were checked: such a key must not reach an audit
// event, and the operator must still see it (to revoke it).
func TestAKeyStoredWithAnUnprintablePrincipalIsRefusedButListed(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		secret := apikey.Prefix + strings.Repeat("B", 43)
		err := tbl.Put(ctx, store.Item{PK: apikey.Partition, SK: apikey.Hash(secret), Attrs: store.Attrs{
			"tenant": "acme", "principal": "mallory\x1b[2J", "scopes": "", "created_at": time.Now().UTC().Format(time.RFC3339),
		}}, store.IfAbsent())
		if err != nil {
			t.Fatal(err)
		}
		keys := apikey.New(tbl, nil)
		if got, err := keys.Verify(ctx, secret); !errors.Is(err, apikey.ErrInvalidKey) {
			t.Errorf("Verify = %+v, %v; want ErrInvalidKey", got, err)
		}
		if list, err := keys.List(ctx); err != nil || len(list) != 1 || list[0].Principal != "mallory\x1b[2J" {
			t.Errorf("List = %+v, %v; want the stored key", list, err)
		}
	})
}

func TestAKeysProfileIsStoredAndReadBack(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		keys := apikey.New(tbl, nil)
		secret, key, err := keys.Create(ctx, "acme", "alice", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		p := profile.Profile{Groups: []string{catalog.GroupVectorSearch}, Allow: []string{"memory_*", "optimizer_vs-*"}, Deny: []string{"memory_delete"}}
		if _, err := keys.SetProfile(ctx, key.Hash, p); err != nil {
			t.Fatal(err)
		}
		got, err := keys.Verify(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got.Profile); diff != "" {
			t.Errorf("profile mismatch (-want +got):\n%s", diff)
		}
		if _, err := keys.SetProfile(ctx, key.Hash, profile.Profile{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := keys.Verify(ctx, secret); !got.Profile.IsZero() {
			t.Errorf("after clearing, profile = %+v", got.Profile)
		}
	})
}

func TestSetProfileRefusesBadInputAndChangesNothing(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		keys := apikey.New(tbl, nil)
		secret, key, err := keys.Create(ctx, "acme", "alice", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			hash string
			p    profile.Profile
			kind fault.Kind
		}{
			{"an unknown group", key.Hash, profile.Profile{Groups: []string{"NL2SQL"}}, fault.KindInvalid},
			{"a key that does not exist", strings.Repeat("0", 64), profile.Profile{}, fault.KindNotFound},
			{"not a hash", "alice", profile.Profile{}, fault.KindInvalid},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := keys.SetProfile(ctx, tt.hash, tt.p); fault.KindOf(err) != tt.kind {
					t.Errorf("SetProfile = %v, want %s", err, tt.kind)
				}
			})
		}
		if got, _ := keys.Verify(ctx, secret); !got.Profile.IsZero() {
			t.Errorf("profile = %+v after refusals", got.Profile)
		}
	})
}

func TestAStoredProfileThatNoLongerReadsAllowsNothing(t *testing.T) {
	eachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		keys := apikey.New(tbl, nil)
		secret, key, err := keys.Create(ctx, "acme", "alice", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		it, _ := tbl.Get(ctx, apikey.Partition, key.Hash)
		it.Attrs["profile"] = `{"groups":["Retired Group"]}`
		if err := tbl.Put(ctx, it, store.IfExists()); err != nil {
			t.Fatal(err)
		}
		got, err := keys.Verify(ctx, secret)
		if err != nil || got.Profile.Allows("memory_add_message", "") {
			t.Errorf("Verify = %+v, %v; want a profile allowing nothing", got.Profile, err)
		}
	})
}
