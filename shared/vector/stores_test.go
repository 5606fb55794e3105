package vector_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// acme and globex are the tenants of tests on a table of their own.
var (
	acme   = tenant.Caller{Tenant: "acme", Principal: "alice"}
	globex = tenant.Caller{Tenant: "globex", Principal: "bob"}
)

// newTenants returns two tenants no other test uses, for tests on a table
// shared by the test process (DynamoDB Local).
func newTenants() (tenant.Caller, tenant.Caller) {
	var b [4]byte
	rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	return tenant.Caller{Tenant: "acme-" + suffix, Principal: "alice"}, tenant.Caller{Tenant: "globex-" + suffix, Principal: "bob"}
}

func wantKind(t *testing.T, err error, kind fault.Kind) {
	t.Helper()
	if got := fault.KindOf(err); got != kind {
		t.Fatalf("error %v is %s, want %s", err, got, kind)
	}
}

func TestStores(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		svc := newService(t, tbl, storetest.OpenLocalFS(t), nil)

		created, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "manuals", Description: "Product manuals"})
		if err != nil {
			t.Fatal(err)
		}
		if created.Provider != offline.Name || created.Model != offline.EmbedderModel || created.Dims != testDims ||
			created.ChunkSize != text.DefaultPassageOptions.Size || created.ChunkOverlap != text.DefaultPassageOptions.Overlap {
			t.Errorf("created %+v: want the offline embedder of %d dimensions and the default chunking", created, testDims)
		}
		t.Run("get returns what create returned", func(t *testing.T) {
			got, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "manuals"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(created, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
		t.Run("create twice is a conflict", func(t *testing.T) {
			_, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "manuals"})
			wantKind(t, err, fault.KindConflict)
		})
		for _, tc := range []struct {
			name string
			in   vector.CreateStoreInput
		}{
			{"an upper-case alias is refused", vector.CreateStoreInput{Alias: "Manuals"}},
			{"an alias with a '#' is refused", vector.CreateStoreInput{Alias: "a#b"}},
			{"an empty alias is refused", vector.CreateStoreInput{}},
			{"a tiny chunk size is refused", vector.CreateStoreInput{Alias: "x", ChunkSize: 10}},
			{"an overlap over half the chunk is refused", vector.CreateStoreInput{Alias: "x", ChunkSize: 500, ChunkOverlap: 300}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := svc.CreateStore(ctx, acme, tc.in)
				wantKind(t, err, fault.KindInvalid)
			})
		}
		t.Run("an unknown store is not found", func(t *testing.T) {
			_, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "nothing"})
			wantKind(t, err, fault.KindNotFound)
			_, err = svc.DeleteStore(ctx, acme, vector.StoreInput{Alias: "nothing"})
			wantKind(t, err, fault.KindNotFound)
			_, err = svc.ListDocuments(ctx, acme, vector.ListDocumentsInput{Store: "nothing"})
			wantKind(t, err, fault.KindNotFound)
		})
		t.Run("another tenant sees none of it", func(t *testing.T) {
			_, err := svc.GetStore(ctx, globex, vector.StoreInput{Alias: "manuals"})
			wantKind(t, err, fault.KindNotFound)
			list, err := svc.ListStores(ctx, globex, vector.ListStoresInput{})
			if err != nil || len(list.Stores) != 0 {
				t.Errorf("globex lists %+v, %v; want nothing", list.Stores, err)
			}
			_, err = svc.DeleteStore(ctx, globex, vector.StoreInput{Alias: "manuals"})
			wantKind(t, err, fault.KindNotFound)
			if _, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "manuals"}); err != nil {
				t.Errorf("acme's store after globex's delete: %v", err)
			}
		})
		t.Run("list pages through every store by alias", func(t *testing.T) {
			for _, a := range []string{"b-store", "a-store", "c_store"} {
				if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: a}); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			in := vector.ListStoresInput{Limit: 3}
			for {
				page, err := svc.ListStores(ctx, acme, in)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range page.Stores {
					got = append(got, s.Alias)
				}
				if page.NextCursor == "" {
					break
				}
				in.Cursor = page.NextCursor
			}
			if diff := cmp.Diff([]string{"a-store", "b-store", "c_store", "manuals"}, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			_, err := svc.ListStores(ctx, acme, vector.ListStoresInput{Cursor: "not base64!"})
			wantKind(t, err, fault.KindInvalid)
		})
		t.Run("delete removes the store and lets the alias be reused", func(t *testing.T) {
			out, err := svc.DeleteStore(ctx, acme, vector.StoreInput{Alias: "b-store"})
			if err != nil || out.Status != "deleted" {
				t.Fatalf("delete: %+v, %v", out, err)
			}
			_, err = svc.GetStore(ctx, acme, vector.StoreInput{Alias: "b-store"})
			wantKind(t, err, fault.KindNotFound)
			if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "b-store"}); err != nil {
				t.Errorf("re-creating: %v", err)
			}
		})
	})
}

func TestStorageHidesStoresOfOtherEmbedders(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	svc := newService(t, tbl, blobs, nil)
	other := vector.New(tbl, blobs, offline.NewEmbedder(32), nil)
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "mine", Description: "Release notes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "theirs"}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Storage(ctx, acme, vector.StorageInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := vector.StorageOutput{
		Stores: []vector.StorageStore{{Alias: "mine", Description: "Release notes", Model: "hashing-v1", Provider: "offline", Dims: testDims}},
		Hidden: []vector.HiddenStore{{Alias: "theirs", Model: "offline/hashing-v1",
			Reason: "built with embedder offline/hashing-v1 (32 dimensions); this server embeds with offline/hashing-v1 (64 dimensions)"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if got, _ := svc.Storage(ctx, globex, vector.StorageInput{}); len(got.Stores)+len(got.Hidden) != 0 {
		t.Errorf("another tenant sees %+v", got)
	}
}
