package vector

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/store"
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

// DropGraphs makes a store look as if ingested before entity graphs, for
// the tests of package vector_test: its shards lose their graph packs.
func (s *Service) DropGraphs(ctx context.Context, c tenant.Caller, alias string) error {
	var keys []string
	_, _, err := s.commit(ctx, c, alias, func(_ *storeRec, m *manifest) ([]store.Write, error) {
		keys = keys[:0]
		for i, sh := range m.Shards {
			if sh.Graph != "" {
				keys = append(keys, sh.Graph)
			}
			m.Shards[i].Graph = ""
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	s.removeObjects(ctx, keys...)
	return nil
}

// GraphlessShards counts a store's shards without a graph pack, for the
// tests of package vector_test.
func (s *Service) GraphlessShards(ctx context.Context, c tenant.Caller, alias string) (int, error) {
	_, m, err := s.snapshot(ctx, c, alias)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sh := range m.Shards {
		if sh.Graph == "" {
			n++
		}
	}
	return n, nil
}
