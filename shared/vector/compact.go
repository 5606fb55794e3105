package vector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Compaction settings. Every ingest writes a shard of its own, so a store
// fed one document at a time would soon be thousands of tiny objects, each a
// request per cold search; and replaced or deleted documents leave dead
// chunks in their shards. Compaction runs in the ingestion path, after the
// commit, when a store has more than [MaxShards] shards or much dead weight:
// it merges the smallest shards, size-tiered (and those much dead) into
// one, dropping dead chunks, and commits the swap like any other change. A compaction that
// loses a race to another one gives up; the next ingest tries again.
const (
	// MaxShards is how many shards a store may have before compaction merges
	// the smallest; after it, the store has about half as many.
	MaxShards = 16
	// MaxShardChunks bounds the chunks a merged shard holds (about 150 MB
	// decoded at 384 dimensions), so compaction fits a Lambda's memory.
	MaxShardChunks = 50_000
	// deadShare is the share of dead chunks in a shard, or in a store, past
	// which compaction rewrites it.
	deadShare = 0.3
)

// needsCompaction reports whether m has too many shards or too many dead
// chunks, needs centroids (see ivf.go) or has too many loose shards; dims
// are the store's.
func (s *Service) needsCompaction(m *manifest, dims int) bool {
	if len(m.Shards) > s.maxShards || s.needsIndex(m, dims) || needsLooseRewrite(m) {
		return true
	}
	var total, dead int
	for _, sh := range m.Shards {
		total += sh.Chunks
	}
	for _, d := range m.Dead {
		dead += d.Chunks
	}
	return dead > 0 && float64(dead) > deadShare*float64(total)
}

// pickShards chooses the shards a compaction merges: those whose known dead
// share passes deadShare; and, when the store has more than maxShards
// shards, the smallest, size-tiered: the smallest two, then each next one as
// long as it is no larger than those picked together. A chunk is therefore
// copied only into a shard at least twice the size of the one it leaves, so
// it is copied O(log n) times over a store's life; taking a fixed number of
// the smallest instead kept re-copying one growing shard, quadratic in the
// store's size (SciFact's 5,183 single-passage ingests copied ten times the
// chunks). Everything stays within [MaxShardChunks]. When dead chunks whose
// shard is unknown (their shard was compacted since) pass deadShare of the
// store, every shard is picked, size permitting. When loose shards (not
// partitioned by the store's current centroids) hold more than looseShare
// of it, they are picked too, smallest first, size permitting; a loose shard
// is worth rewriting alone.
func pickShards(m *manifest, maxShards int) []shardRef {
	deadIn := map[string]int{}
	unknown, total := 0, 0
	for _, d := range m.Dead {
		if m.shard(d.Shard) >= 0 {
			deadIn[d.Shard] += d.Chunks
		} else {
			unknown += d.Chunks
		}
	}
	for _, sh := range m.Shards {
		total += sh.Chunks
	}
	shards := slices.Clone(m.Shards)
	slices.SortFunc(shards, func(a, b shardRef) int { return cmp.Or(cmp.Compare(a.Chunks, b.Chunks), cmp.Compare(a.ID, b.ID)) })
	picked := map[string]bool{}
	var out []shardRef
	chunks := 0
	take := func(sh shardRef) bool {
		live := sh.Chunks - deadIn[sh.ID]
		if picked[sh.ID] {
			return true
		}
		if chunks+live > MaxShardChunks && len(out) >= 2 {
			return false
		}
		picked[sh.ID] = true
		out = append(out, sh)
		chunks += live
		return true
	}
	everything := unknown > 0 && float64(unknown) > deadShare*float64(total)
	for _, sh := range shards {
		if everything || float64(deadIn[sh.ID]) > deadShare*float64(sh.Chunks) {
			take(sh)
		}
	}
	if cur := m.ivf(); needsLooseRewrite(m) {
		for _, sh := range shards {
			if sh.Index != cur.ID && !take(sh) {
				break
			}
		}
	}
	if len(m.Shards) > maxShards {
		tier, n := 0, 0
		for _, sh := range shards {
			if n >= 2 && sh.Chunks > tier || !take(sh) {
				break
			}
			tier += sh.Chunks
			n++
		}
	}
	if len(out) == 1 && deadIn[out[0].ID] == 0 && (m.ivf() == nil || out[0].Index == m.ivf().ID) {
		return nil // rewriting one partitioned shard with nothing dead in it gains nothing
	}
	return out
}

// errStale ends a compaction whose shards another change removed meanwhile.
var errStale = errors.New("shards changed during compaction")

// compact brings a store's shards in order: it trains the store's centroids
// when it needs them (see ivf.go), and merges shards as [pickShards]
// chooses, dropping dead chunks, each step committed on its own; it runs up
// to compactRounds steps while the store still needs compaction. While one
// call of this process compacts a store, another returns at once: both would
// pick the same shards and all but one would throw their merge away (half
// the compaction work of two concurrent ingesters went so). Other processes
// may still race; the commit settles that.
func (s *Service) compact(ctx context.Context, c tenant.Caller, alias string) error {
	key := c.Tenant + "\x00" + alias
	if _, busy := s.compacting.LoadOrStore(key, true); busy {
		return nil
	}
	defer s.compacting.Delete(key)
	trained := false
	for round := range compactRounds {
		r, m, err := s.snapshot(ctx, c, alias)
		if err != nil {
			return err
		}
		if round > 0 && !s.needsCompaction(m, r.Dims) {
			return nil
		}
		if !trained && s.needsIndex(m, r.Dims) {
			trained = true
			if err := s.train(ctx, c, alias, r, m); err != nil && !errors.Is(err, errStale) {
				return err
			}
			continue
		}
		picked := pickShards(m, s.maxShards)
		if len(picked) == 0 {
			return nil
		}
		if err := s.merge(ctx, c, alias, m, picked); err != nil {
			return err
		}
	}
	return nil
}

// merge merges the picked shards of m into one, partitioned by the current
// centroids if the store has some, dropping dead chunks, and commits the
// swap. A merge whose shards another change removed meanwhile is dropped.
func (s *Service) merge(ctx context.Context, c tenant.Caller, alias string, m *manifest, picked []shardRef) error {
	var err error
	segs := make([]*retrieval.Segment, len(picked))
	for i, sh := range picked {
		if segs[i], err = s.segment(ctx, sh); err != nil {
			if isNotFound(err) {
				return nil // another change removed it meanwhile: the merge is stale
			}
			return err
		}
	}
	packs, err := s.packs(ctx, picked)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Each entry of the dead list stands for one copy of a version's chunks.
	// A version has one copy, unless it was written before nonces: ingested
	// again after another version, it got the ids of the copy it replaced, so
	// its copies (alike but for their shard) share ids, and the live one among
	// them has no entry. The merge drops as many copies of a chunk as m has
	// entries for it, and keeps one of the rest.
	entries := map[string]int{}
	for _, d := range m.Dead {
		for i := range d.Chunks {
			entries[d.chunkID(alias, i)]++
		}
	}
	copies := map[string]int{} // chunk id -> copies in the picked shards
	keep := make([][]bool, len(segs))
	for si, sg := range segs {
		keep[si] = make([]bool, sg.Len())
		for i := range sg.Len() {
			id := sg.ChunkID(i)
			copies[id]++
			keep[si][i] = copies[id] == entries[id]+1
		}
	}
	// Shards written before graphs get theirs now, from the chunks kept.
	for si, sh := range picked {
		if sh.Graph == "" {
			if packs[si], err = s.segmentGraphs(ctx, segs[si], func(i int) bool { return keep[si][i] }); err != nil {
				return err
			}
		}
	}
	// Postings and vectors are copied, not rebuilt from the texts: a merge
	// that re-indexed its chunks spent more than the ingests themselves.
	var seg *retrieval.Segment
	var spread float64
	if cur := m.ivf(); cur != nil {
		cs, err := s.centroids(ctx, c, alias, cur.ID)
		if err != nil {
			return err
		}
		seg, spread, err = retrieval.Partition(ctx, segs, func(si, i int) bool { return keep[si][i] }, cs)
		if err != nil {
			return fmt.Errorf("partitioning shards: %w", err)
		}
	} else if seg, err = retrieval.Merge(segs, func(si, i int) bool { return keep[si][i] }); err != nil {
		return fmt.Errorf("merging shards: %w", err)
	}
	var merged shardRef
	if seg.Len() > 0 {
		if merged, err = s.writeShard(ctx, c, alias, seg); err != nil {
			return err
		}
		merged.Index, merged.Spread = seg.Index(), spread
		kept := make(map[string]bool, seg.Len())
		for i := range seg.Len() {
			kept[seg.ChunkID(i)] = true
		}
		if merged.Graph, _, err = s.mergeGraphs(ctx, c, alias, merged.ID, packs, kept); err != nil {
			s.removeObjects(ctx, merged.Key)
			return err
		}
	}
	pickedIDs := map[string]bool{}
	for _, sh := range picked {
		pickedIDs[sh.ID] = true
	}
	everything := len(picked) == len(m.Shards)
	var gone []string
	_, _, err = s.commit(ctx, c, alias, func(_ *storeRec, cur *manifest) ([]store.Write, error) {
		for id := range pickedIDs {
			if cur.shard(id) < 0 {
				return nil, errStale
			}
		}
		if merged.Index != "" && !slices.ContainsFunc(cur.IVF, func(x ivfRef) bool { return x.ID == merged.Index }) {
			return nil, errStale // its centroids left meanwhile
		}
		cur.Shards = slices.DeleteFunc(cur.Shards, func(sh shardRef) bool { return pickedIDs[sh.ID] })
		if merged.ID != "" {
			cur.Shards = append(cur.Shards, merged)
		}
		// The entries of m whose copies the merge dropped leave the list; when
		// it merged every shard, all of m's entries do (an entry whose copy
		// the merge did not meet then hides nothing: a store damaged before
		// nonces may hold such).
		drop := map[string]int{}
		for _, d := range m.Dead {
			first := d.chunkID(alias, 0)
			drop[first] = entries[first]
			if !everything {
				drop[first] = min(entries[first], copies[first])
			}
		}
		var dead []deadDoc
		for _, d := range cur.Dead {
			first := d.chunkID(alias, 0)
			if drop[first] > 0 {
				drop[first]--
				continue
			}
			if d.Nonce != "" && entries[first] == 0 && copies[first] > 0 {
				d.Shard = merged.ID // killed while we merged: its chunks were copied
			}
			dead = append(dead, d)
		}
		cur.Dead = dead
		gone = cur.pruneIVF()
		return nil, nil
	})
	if err != nil && !errors.Is(err, errMaybeCommitted) {
		s.removeObjects(ctx, merged.Key, merged.Graph)
	}
	if errors.Is(err, errStale) {
		return nil
	}
	if err != nil {
		return err
	}
	s.mergeTokens(ctx, c, alias, picked, seg, merged)
	for _, sh := range picked {
		s.removeObjects(ctx, shardObjects(sh)...)
	}
	s.removeObjects(ctx, gone...)
	return nil
}

// segment returns a shard, decoded, from the cache when its ETag is unchanged.
func (s *Service) segment(ctx context.Context, sh shardRef) (*retrieval.Segment, error) {
	seg, err := cached(ctx, s.cache, s.blobs, sh.Key, s.revalidate, decodeSegment)
	if isNotFound(err) {
		return nil, err
	}
	if errors.Is(err, retrieval.ErrCorrupt) {
		return nil, fault.Unavailable(err, "shard %s is corrupt: %v; re-ingest its documents, or delete and rebuild the store", sh.Key, err)
	}
	if err != nil {
		return nil, fault.Unavailable(err, "reading shard %s failed; retry", sh.Key)
	}
	if seg.Len() != sh.Chunks {
		return nil, fault.Unavailable(fmt.Errorf("shard %s holds %d chunks, its manifest says %d", sh.Key, seg.Len(), sh.Chunks),
			"shard %s does not match the store's manifest; re-ingest its documents, or delete and rebuild the store", sh.Key)
	}
	return seg, nil
}
