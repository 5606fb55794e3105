package vector

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Compact runs one compaction of a store, as an ingest does when the store
// needs one, for the tests of package vector_test.
func (s *Service) Compact(ctx context.Context, c tenant.Caller, alias string) error {
	return s.compact(ctx, c, alias)
}
