package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// Writers committed in one group stay each atomic and in turn: of many
// transactions racing to create one item, each with an item of its own, one
// commits both, and every other writes nothing, while writers beside them
// lose nothing.
func TestGroupedWritersStayAtomicAndInTurn(t *testing.T) {
	tbl, err := Open(filepath.Join(t.TempDir(), "t.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	ctx := context.Background()
	const racers, others = 64, 64
	var wg sync.WaitGroup
	won := make([]bool, racers)
	for i := range racers {
		wg.Go(func() {
			err := tbl.Transact(ctx,
				store.Put(store.Item{PK: "p", SK: "winner", Attrs: store.Attrs{"by": int64(i)}}, store.IfAbsent()),
				store.Put(store.Item{PK: "p", SK: fmt.Sprintf("racer#%02d", i)}, store.Condition{}))
			switch {
			case err == nil:
				won[i] = true
			case !errors.Is(err, store.ErrConditionFailed):
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	for i := range others {
		wg.Go(func() {
			if err := tbl.Put(ctx, store.Item{PK: "p", SK: fmt.Sprintf("other#%02d", i)}, store.IfAbsent()); err != nil {
				t.Errorf("other %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	winner, err := tbl.Get(ctx, "p", "winner")
	if err != nil {
		t.Fatal(err)
	}
	for i := range racers {
		_, err := tbl.Get(ctx, "p", fmt.Sprintf("racer#%02d", i))
		if won[i] != (err == nil) || won[i] != (winner.Int("by") == int64(i)) {
			t.Errorf("racer %d: committed %v, its item %v, the winner %d", i, won[i], err, winner.Int("by"))
		}
	}
	page, err := tbl.Query(ctx, "p", store.Query{Prefix: "other#", Limit: store.MaxQueryLimit})
	if err != nil || len(page.Items) != others {
		t.Fatalf("%d of %d other writers' items, %v", len(page.Items), others, err)
	}
}
