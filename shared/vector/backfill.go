package vector

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Shards written before entity graphs existed have no graph pack. Their
// documents' graphs are built from their stored chunks on the store's
// lifecycle: compaction extracts the graphs of the shards it merges that
// have none (see merge); global search, which writes its reports anyway,
// extracts theirs before building reports, at most [MaxBackfillChunks]
// chunks a call (whole shards; the next call goes on), and commits their
// packs into the manifest like any other change; and the retriever, which
// is read-only, extracts them in memory when it builds a store's graph
// (at most [MaxBackfillChunks] chunks; kept with the graph, for its
// manifest version). A backfill extracts offline ([graph.Heuristic])
// whatever generator is configured: it runs inside a query, whose deadline
// a model call per chunk would pass; entity names are embedded as at
// ingest, so a store's graph keeps one kind of entity vectors. Only shards
// without a pack are read, so an unchanged document is never extracted
// again once stored, and dead chunks are skipped, so a deleted document's
// entities never enter.

// MaxBackfillChunks bounds the chunks one call extracts entity graphs from
// (whole shards, so one larger shard may pass it).
const MaxBackfillChunks = 4096

// extractPack extracts the pack of shard sh of manifest m from its live chunks.
func (s *Service) extractPack(ctx context.Context, sh shardRef, m *manifest) ([]graph.PackEntry, error) {
	seg, err := s.segment(ctx, sh)
	if err != nil {
		return nil, err
	}
	return s.segmentGraphs(ctx, seg, func(i int) bool { return !m.dead[seg.ChunkID(i)] })
}

// segmentGraphs extracts the graph shards of the document versions whose
// chunks seg holds and keep accepts, one pack entry per version (a
// version's chunks are contiguous in a shard, written by one ingest and
// moved whole by compaction), each under its first chunk's id.
func (s *Service) segmentGraphs(ctx context.Context, seg *retrieval.Segment, keep func(i int) bool) ([]graph.PackEntry, error) {
	var entries []graph.PackEntry
	var version []retrieval.Chunk
	flush := func() error {
		if len(version) == 0 {
			return nil
		}
		sh, err := s.graphShard(ctx, version[0].DocID, version, graph.Heuristic{})
		if err != nil {
			return err
		}
		entries = append(entries, graph.PackEntry{Version: version[0].ID, Shard: sh})
		version = nil
		return nil
	}
	for i := range seg.Len() {
		if !keep(i) {
			continue
		}
		ch := seg.Chunk(i)
		if len(version) > 0 && ch.DocID != version[0].DocID {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		version = append(version, ch)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return entries, nil
}

// backfillGraphs writes the graph packs of up to [MaxBackfillChunks] chunks
// of m's shards that have none, and commits them. It returns the store's
// record and manifest after the commit, or r and m when there was nothing
// to do.
func (s *Service) backfillGraphs(ctx context.Context, c tenant.Caller, r storeRec, m *manifest) (storeRec, *manifest, error) {
	written := map[string]string{} // shard id -> pack key
	chunks := 0
	for _, sh := range m.Shards {
		if sh.Graph != "" || chunks >= MaxBackfillChunks {
			continue
		}
		chunks += sh.Chunks
		entries, err := s.extractPack(ctx, sh, m)
		if isNotFound(err) {
			continue // compacted meanwhile
		}
		if err != nil {
			s.removeObjects(ctx, slices.Collect(maps.Values(written))...)
			return r, m, err
		}
		// A random suffix, so that concurrent backfills of a shard do not collide.
		key, _, err := s.writePack(ctx, c, r.Alias, sh.ID+"-"+randomID(4), entries)
		if err != nil {
			s.removeObjects(ctx, slices.Collect(maps.Values(written))...)
			return r, m, err
		}
		written[sh.ID] = key
	}
	if len(written) == 0 {
		return r, m, nil
	}
	used := map[string]bool{}
	nr, nm, err := s.commit(ctx, c, r.Alias, func(_ *storeRec, cur *manifest) ([]store.Write, error) {
		clear(used)
		for i, sh := range cur.Shards {
			if key, ok := written[sh.ID]; ok && sh.Graph == "" {
				cur.Shards[i].Graph, used[key] = key, true
			}
		}
		if len(used) == 0 {
			return nil, errNoChange // another backfill or a compaction came first
		}
		return nil, nil
	})
	var unused []string
	for _, key := range written {
		if !used[key] || err != nil && !errors.Is(err, errMaybeCommitted) {
			unused = append(unused, key)
		}
	}
	s.removeObjects(ctx, unused...)
	if err != nil {
		return r, m, err
	}
	return nr, nm, nil
}

// graphManifest returns r's record and manifest for global search: with
// the graphs of shards that lack them backfilled first. A backfill that
// fails is logged and the search goes on with the graphs there are.
func (s *Service) graphManifest(ctx context.Context, c tenant.Caller, r storeRec) (storeRec, *manifest, error) {
	m, err := s.loadManifest(ctx, r)
	if err != nil || !m.lacksGraphs() {
		return r, m, err
	}
	nr, nm, err := s.backfillGraphs(ctx, c, r, m)
	if err != nil {
		if ctx.Err() != nil {
			return r, m, ctx.Err()
		}
		s.log.WarnContext(ctx, "backfilling entity graphs failed", "store", r.Alias, "error", err)
		return r, m, nil
	}
	return nr, nm, nil
}

// lacksGraphs reports whether some shard of m has no graph pack.
func (m *manifest) lacksGraphs() bool {
	for _, sh := range m.Shards {
		if sh.Graph == "" {
			return true
		}
	}
	return false
}
