package embedded

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestItemsReadAgainAreTheirOwnAndNeverStale(t *testing.T) {
	ctx := context.Background()
	tbl, err := Open(filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	put := func(it store.Item) {
		t.Helper()
		if err := tbl.Put(ctx, it, store.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	// reads read an item as callers do; a write's condition reads it too.
	reads := map[string]func(sk string) store.Item{
		"Get": func(sk string) store.Item {
			it, err := tbl.Get(ctx, "p", sk)
			if err != nil {
				t.Fatal(err)
			}
			return it
		},
		"Query": func(sk string) store.Item {
			page, err := tbl.Query(ctx, "p", store.Query{From: sk, To: sk})
			if err != nil || len(page.Items) != 1 {
				t.Fatal(page, err)
			}
			return page.Items[0]
		},
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			sk := "s-" + name
			want := store.Item{PK: "p", SK: sk, Attrs: store.Attrs{"text": "one", "n": int64(1000), "b": true}}
			put(want)
			for range 2 { // the item as decoded, then as kept
				first := read(sk)
				first.Attrs["text"] = "changed by its reader"
				delete(first.Attrs, "n")
			}
			if got := read(sk); !cmp.Equal(got, want) {
				t.Errorf("an item read again after its reader changed its copy:\n%s", cmp.Diff(want, got))
			}
			want.Attrs = store.Attrs{"text": "two", "n": int64(1001), "b": true}
			put(want)
			if got := read(sk); !cmp.Equal(got, want) {
				t.Errorf("an item read again after a write:\n%s", cmp.Diff(want, got))
			}
			if err := tbl.Put(ctx, want, store.IfEquals("n", int64(1001))); err != nil {
				t.Errorf("a write's condition on the item read again: %v", err)
			}
			bytesItem := store.Item{PK: "p", SK: sk + "-bytes", Attrs: store.Attrs{"b": []byte("abc")}}
			put(bytesItem)
			read(bytesItem.SK).Attrs["b"].([]byte)[0] = 'X'
			if got := read(bytesItem.SK); !cmp.Equal(got, bytesItem) {
				t.Errorf("an item with bytes read again after its reader changed them:\n%s", cmp.Diff(bytesItem, got))
			}
		})
	}
}

func TestReadOnlyQueriesShareWhatOtherReadersCannotChange(t *testing.T) {
	ctx := context.Background()
	tbl, err := Open(filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	want := store.Item{PK: "p", SK: "s", Attrs: store.Attrs{"text": "one", "n": int64(1000), "b": true}}
	if err := tbl.Put(ctx, want, store.Condition{}); err != nil {
		t.Fatal(err)
	}
	query := func(readOnly bool) store.Item {
		t.Helper()
		page, err := tbl.Query(ctx, "p", store.Query{From: "s", To: "s", ReadOnly: readOnly})
		if err != nil || len(page.Items) != 1 {
			t.Fatal(page, err)
		}
		return page.Items[0]
	}
	for _, first := range []bool{true, false} { // the item as decoded by either, then as kept
		if got := query(first); !cmp.Equal(got, want) {
			t.Errorf("a query (read-only %v):\n%s", first, cmp.Diff(want, got))
		}
		changed := query(false)
		changed.Attrs["text"] = "changed by its reader"
		if got := query(true); !cmp.Equal(got, want) {
			t.Errorf("a read-only query after an ordinary reader changed its copy:\n%s", cmp.Diff(want, got))
		}
	}
	want.Attrs = store.Attrs{"text": "two"}
	if err := tbl.Put(ctx, want, store.Condition{}); err != nil {
		t.Fatal(err)
	}
	if got := query(true); !cmp.Equal(got, want) {
		t.Errorf("a read-only query after a write:\n%s", cmp.Diff(want, got))
	}
}
