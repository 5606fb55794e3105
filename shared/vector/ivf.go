package vector

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Inverted-file index. A store of at least [Options.IVFThreshold] live
// chunks gets centroids (retrieval.KMeans over a bounded sample of its
// vectors, k about √chunks), kept as an immutable object the manifest names;
// from then on compaction writes its merged shards partitioned
// (retrieval.Partition): each chunk in the run of its nearest centroid, so a
// vector search reads only the probed clusters' runs of such a shard. A
// shard not partitioned by the current centroids (ingested since the build,
// or written before it) is "loose": searched exactly, whole, until a
// compaction folds it in; compaction also rewrites loose shards once they
// hold more than [looseShare] of the store. Centroids are trained again when
// the store has grown [regrowth] times since, or when the shards partitioned
// by them fit them [driftFactor] times worse than their training sample did
// (the mean 1 - cos of a chunk and its centroid): the older centroids stay,
// named by the manifest, while shards partitioned by them remain, and are
// deleted once compaction has rewritten the last of those. Every step is a
// commit like any other, so concurrent ingests lose nothing.
const (
	// DefaultIVFThreshold is the live chunks past which a store gets an
	// inverted-file index when [Options.IVFThreshold] is zero: below it an
	// exact scan takes a few milliseconds (about 30 ms per million chunks of
	// 384 dimensions on one core).
	DefaultIVFThreshold = 200_000
	// looseShare is the share of a store's chunks in loose shards past
	// which compaction rewrites them.
	looseShare = 0.1
	// regrowth is how many times a store grows before its centroids are
	// trained again.
	regrowth = 2
	// driftFactor is how much worse than at training the partitioned
	// shards may fit their centroids before these are trained again.
	driftFactor = 1.25
	// sampleFactor is how many sample vectors k-means takes per cluster.
	sampleFactor = 64
	// maxSampleBytes bounds the float32 sample k-means trains on (k-means
	// takes about a quarter more for its int8 copy).
	maxSampleBytes = 256 << 20
	// compactRounds bounds the compactions one call runs back to back, so
	// an ingest that leaves work (a new index's loose shards) does some of
	// it without holding the call long.
	compactRounds = 4
)

// ivfRef names one set of centroids a manifest uses: the current one is the
// last; older ones stay while shards partitioned by them remain.
type ivfRef struct {
	ID  string `json:"id"`
	Key string `json:"key"`
	K   int    `json:"k"`
	// Trained is the store's live chunks when the centroids were trained.
	Trained int64 `json:"trained"`
	// Spread is the mean 1 - cos of the training sample and its centroids.
	Spread float64 `json:"spread"`
}

// CentroidKeys matches the key of every centroids object, in the wildcard
// syntax of IAM resources: what a function that searches shards also reads.
const CentroidKeys = "tenants/*/vector/*/ivf/*.cen"

func centroidsKey(c tenant.Caller, alias, id string) string {
	return storePrefix(c, alias) + "ivf/" + id + ".cen"
}

// centroidsID is the form of the ids this package gives centroids.
var centroidsID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ivf returns the current centroids of m, or nil.
func (m *manifest) ivf() *ivfRef {
	if len(m.IVF) == 0 {
		return nil
	}
	return &m.IVF[len(m.IVF)-1]
}

// loose returns the chunks of m's shards that the current centroids do not
// partition (all of them when m has none).
func (m *manifest) loose() int {
	cur, n := m.ivf(), 0
	for _, sh := range m.Shards {
		if cur == nil || sh.Index != cur.ID {
			n += sh.Chunks
		}
	}
	return n
}

// pruneIVF drops the centroids no shard of m is partitioned by, but the
// current ones, and returns their keys.
func (m *manifest) pruneIVF() []string {
	var gone []string
	cur := m.ivf()
	if cur == nil {
		return nil
	}
	m.IVF = slices.DeleteFunc(m.IVF, func(x ivfRef) bool {
		used := x.ID == cur.ID || slices.ContainsFunc(m.Shards, func(sh shardRef) bool { return sh.Index == x.ID })
		if !used {
			gone = append(gone, x.Key)
		}
		return !used
	})
	return gone
}

// needsIndex reports whether m should get centroids, or new ones.
func (s *Service) needsIndex(m *manifest, dims int) bool {
	live := m.liveChunks()
	if s.ivfThreshold <= 0 || dims <= 0 || live < s.ivfThreshold {
		return false
	}
	cur := m.ivf()
	if cur == nil || live >= regrowth*cur.Trained {
		return true
	}
	var chunks int
	var spread float64
	for _, sh := range m.Shards {
		if sh.Index == cur.ID {
			chunks += sh.Chunks
			spread += sh.Spread * float64(sh.Chunks)
		}
	}
	return 2*int64(chunks) >= live && spread/float64(chunks) > driftFactor*cur.Spread
}

// needsLooseRewrite reports whether m's loose shards hold too much of it.
func needsLooseRewrite(m *manifest) bool {
	if m.ivf() == nil {
		return false
	}
	total := 0
	for _, sh := range m.Shards {
		total += sh.Chunks
	}
	return float64(m.loose()) > looseShare*float64(total)
}

// train trains centroids for a store and commits them as its current ones.
// The sample is every n-th live chunk's vector, shard by shard (one shard in
// memory at a time beside it), at most sampleFactor per cluster and
// maxSampleBytes in all, counted before it is allocated; the seed is the
// manifest's version, so the same store state trains the same centroids.
func (s *Service) train(ctx context.Context, c tenant.Caller, alias string, r storeRec, m *manifest) error {
	live := m.liveChunks()
	k := retrieval.Clusters(live)
	size := min(live, int64(sampleFactor*k), int64(maxSampleBytes/(4*r.Dims)))
	k = min(k, int(size))
	if size < 1 || k < 1 {
		return nil
	}
	stride := max(live/size, 1)
	sample := make([]float32, 0, size*int64(r.Dims))
	var seen int64
	for _, sh := range m.Shards {
		seg, err := s.segment(ctx, sh)
		if err != nil {
			return err
		}
		if seg.Dims() != r.Dims {
			return fault.Unavailable(nil, "shard %s has %d dimensions, its store %d", sh.Key, seg.Dims(), r.Dims)
		}
		for i := range seg.Len() {
			if m.dead[seg.ChunkID(i)] {
				continue
			}
			if seen%stride == 0 && int64(len(sample)) < size*int64(r.Dims) {
				sample = append(sample, seg.Vector(i)...)
			}
			seen++
		}
	}
	if len(sample)/r.Dims < retrieval.MinClusters {
		return nil // too few live chunks left to cluster (many dead)
	}
	id := randomID(8)
	cs, spread, err := retrieval.KMeans(ctx, id, sample, r.Dims, retrieval.KMeansOptions{K: min(k, len(sample)/r.Dims), Seed: uint64(m.Version)})
	if err != nil {
		return fmt.Errorf("training centroids: %w", err)
	}
	data, err := cs.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding centroids: %w", err)
	}
	ref := ivfRef{ID: id, Key: centroidsKey(c, alias, id), K: cs.K(), Trained: live, Spread: spread}
	if _, err := s.blobs.Put(ctx, ref.Key, data, &store.PutOptions{IfAbsent: true}); err != nil {
		return fault.Unavailable(err, "writing the centroids of vector store %q failed; retry", alias)
	}
	s.cache.add(&cacheEntry{key: ref.Key, size: centroidsBytes(cs), value: cs, checked: s.now()})
	was := m.ivf()
	var gone []string
	_, _, err = s.commit(ctx, c, alias, func(_ *storeRec, cur *manifest) ([]store.Write, error) {
		if now := cur.ivf(); (now == nil) != (was == nil) || now != nil && now.ID != was.ID {
			return nil, errStale // another process trained meanwhile
		}
		cur.IVF = append(cur.IVF, ref)
		gone = cur.pruneIVF()
		return nil, nil
	})
	if err != nil && !errors.Is(err, errMaybeCommitted) {
		s.removeObjects(ctx, ref.Key)
	}
	if err != nil {
		return err
	}
	s.removeObjects(ctx, gone...)
	return nil
}

// centroids returns a store's centroids, from the cache.
func (s *Service) centroids(ctx context.Context, c tenant.Caller, alias, id string) (*retrieval.Centroids, error) {
	if !centroidsID.MatchString(id) {
		return nil, fault.Unavailable(nil, "a shard of vector store %q names centroids %q, which are not of this store; re-ingest its documents", alias, id)
	}
	key := centroidsKey(c, alias, id)
	cs, err := cached(ctx, s.cache, s.blobs, key, never, decodeCentroids)
	switch {
	case isNotFound(err):
		return nil, err
	case errors.Is(err, retrieval.ErrCorrupt):
		return nil, fault.Unavailable(err, "centroids %s are corrupt: %v; delete and rebuild the store", key, err)
	case err != nil:
		return nil, fault.Unavailable(err, "reading centroids %s failed; retry", key)
	}
	return cs, nil
}

// probe returns the probe of a search of segs, the shards of g: the
// centroids their partitions name, and nprobe.
func (s *Service) probe(ctx context.Context, c tenant.Caller, g ShardGroup, segs []*retrieval.Segment, nprobe int) (*retrieval.Probe, error) {
	p := &retrieval.Probe{Centroids: map[string]*retrieval.Centroids{}, NProbe: nprobe}
	for i, seg := range segs {
		id := seg.Index()
		if id == "" || p.Centroids[id] != nil {
			continue
		}
		cs, err := s.centroids(ctx, c, g.Shards[i].Store, id)
		if err != nil {
			return nil, err
		}
		p.Centroids[id] = cs
	}
	return p, nil
}

// centroidsBytes is the memory decoded centroids hold.
func centroidsBytes(cs *retrieval.Centroids) int64 { return int64(cs.K()*cs.Dims()) * 9 }

func decodeCentroids(data []byte) (*retrieval.Centroids, int64, error) {
	cs, err := retrieval.DecodeCentroids(data)
	if err != nil {
		return nil, 0, err
	}
	return cs, centroidsBytes(cs), nil
}
