package apikey_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestKeys(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		keys := apikey.New(tbl, nil)
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, apikey.Partition) })

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
		c, err := keys.Verify(ctx, secret)
		if err != nil || c.Tenant != "acme" || c.Principal != "alice" || len(c.Scopes) != 1 {
			t.Fatalf("Verify = %+v, %v", c, err)
		}
		expired, _, err := keys.Create(ctx, "acme", "old", nil, time.Now().Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for name, bad := range map[string]string{
			"Unknown":  apikey.Prefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
			"NoPrefix": secret[len(apikey.Prefix):],
			"Expired":  expired,
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
		if err := keys.Revoke(ctx, key.Hash); err == nil {
			t.Error("revoking a revoked key succeeded; a typo would look like success")
		}
		for _, tc := range [][2]string{{"ACME", "x"}, {"acme", ""}, {"acme", "two\nlines"}} {
			if _, _, err := keys.Create(ctx, tc[0], tc[1], nil, time.Time{}); err == nil {
				t.Errorf("Create(%q, %q) succeeded", tc[0], tc[1])
			}
		}
	})
}
