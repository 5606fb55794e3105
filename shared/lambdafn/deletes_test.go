package lambdafn

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestOnlyFunctionsThatDeleteMayDelete(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		deletes bool
		op      func(store.Table) error
		refused bool
	}{
		{"AFunctionThatDoesNotDeleteIsRefusedADelete", false, func(tb store.Table) error { return tb.Delete(ctx, "p", "a", store.Condition{}) }, true},
		{"AFunctionThatDoesNotDeleteIsRefusedATransactionWithADelete", false, func(tb store.Table) error {
			return tb.Transact(ctx, store.Put(store.Item{PK: "p", SK: "b"}, store.Condition{}), store.Delete("p", "a", store.Condition{}))
		}, true},
		{"AFunctionThatDoesNotDeleteStillPutsAndTransacts", false, func(tb store.Table) error {
			return tb.Transact(ctx, store.Put(store.Item{PK: "p", SK: "b"}, store.Condition{}), store.Check("p", "a", store.IfExists()))
		}, false},
		{"AFunctionThatDeletesDeletes", true, func(tb store.Table) error { return tb.Delete(ctx, "p", "a", store.Condition{}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := storetest.OpenEmbedded(t)
			if err := table.Put(ctx, store.Item{PK: "p", SK: "a"}, store.Condition{}); err != nil {
				t.Fatal(err)
			}
			d := ForFunction(Deps{Table: table}, catalog.Function{Path: "test/fn", Deletes: tc.deletes})
			err := tc.op(d.Table)
			if refused := err != nil && strings.Contains(err.Error(), "function test/fn deletes item p/a"); refused != tc.refused {
				t.Fatalf("err = %v; want refused %v", err, tc.refused)
			}
			_, getErr := table.Get(ctx, "p", "a")
			if kept := getErr == nil; kept != (tc.refused || !tc.deletes) {
				t.Errorf("item p/a kept: %v (%v)", kept, getErr)
			}
			if tc.refused {
				if _, err := table.Get(ctx, "p", "b"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("a refused transaction wrote part of itself: %v", err)
				}
			}
		})
	}
}
