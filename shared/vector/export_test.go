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

// IndexState reports a store's inverted-file index, for the tests of
// package vector_test: how many sets of centroids its manifest names, and
// the chunks of its shards partitioned by the current ones and not.
func (s *Service) IndexState(ctx context.Context, c tenant.Caller, alias string) (sets, partitioned, loose int, err error) {
	_, m, err := s.snapshot(ctx, c, alias)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, sh := range m.Shards {
		partitioned += sh.Chunks
	}
	return len(m.IVF), partitioned - m.loose(), m.loose(), nil
}

// ParseSelection is parseSelection, for the tests of package vector_test.
var ParseSelection = parseSelection
