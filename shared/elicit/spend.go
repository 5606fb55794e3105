package elicit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// spentRetention is how long a spent state's record outlives the state: more
// than any call takes between the gateway opening the state (before its
// expiry) and the function spending it, so a record never vanishes while the
// state it guards could still be opened.
const spentRetention = time.Hour

// Spend records that s, a state of the caller's tenant meant to be used once,
// has been used, and returns [ErrReplayed] if it already was. The record is a
// put-if-absent, so of any number of concurrent calls with one state exactly
// one succeeds:
//
//	t#<tenant>#elicit  <state id>  spent_at (expires an hour after the state)
//
// The function serving the call spends the state before the tool runs, so
// it needs put access to the table.
func Spend(ctx context.Context, table store.Table, tenantID string, s *State, now time.Time) error {
	if table == nil {
		return errors.New("elicit: spending a state needs a table, and this function has none")
	}
	if s.ID == "" || s.Expires.IsZero() {
		return errors.New("elicit: spending a state without an id or an expiry")
	}
	it := store.Item{
		PK: tenant.Key(tenantID) + "elicit", SK: s.ID,
		Attrs:     store.Attrs{"spent_at": now.UTC().Format(time.RFC3339Nano)},
		ExpiresAt: s.Expires.Add(spentRetention),
	}
	err := table.Put(ctx, it, store.IfAbsent())
	if errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("%w: it could be used once; call again without it to be asked again", ErrReplayed)
	}
	if err != nil {
		return fmt.Errorf("elicit: spending request state: %w", err)
	}
	return nil
}
