package elicit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestSpendLetsExactlyOneOfManyConcurrentUsesThrough(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		state := &elicit.State{ID: rand.Text(), Expires: time.Now().Add(time.Minute), Once: true}
		const callers = 16
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() { errs[i] = elicit.Spend(ctx, tbl, "acme", state, time.Now()) })
		}
		wg.Wait()
		spent := 0
		for _, err := range errs {
			switch {
			case err == nil:
				spent++
			case !errors.Is(err, elicit.ErrReplayed):
				t.Errorf("Spend: %v, want nil or ErrReplayed", err)
			}
		}
		if spent != 1 {
			t.Errorf("%d of %d concurrent spends succeeded, want exactly 1", spent, callers)
		}
		if err := elicit.Spend(ctx, tbl, "acme", state, time.Now()); !errors.Is(err, elicit.ErrReplayed) {
			t.Errorf("a later spend: %v, want ErrReplayed", err)
		}
	})
}

func TestSpendKeepsTenantsApart(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		state := &elicit.State{ID: rand.Text(), Expires: time.Now().Add(time.Minute), Once: true}
		for _, tn := range []string{"acme", "globex"} {
			if err := elicit.Spend(ctx, tbl, tn, state, time.Now()); err != nil {
				t.Errorf("Spend for %s: %v", tn, err)
			}
		}
	})
}
