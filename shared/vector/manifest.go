package vector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// manifest is the current state of a store's shards: which shard objects are
// live, and which documents inside them left search since the shard was
// written (replaced or deleted; they stay in the shard until compaction
// rewrites it). A manifest object is never changed: each version is a new
// object, named by the store record.
type manifest struct {
	Version int64      `json:"version"`
	Shards  []shardRef `json:"shards"`
	Dead    []deadDoc  `json:"dead,omitempty"`
	// IVF lists the store's centroids (see ivf.go), the current ones last.
	IVF []ivfRef `json:"ivf,omitempty"`

	dead map[string]bool // chunk ids of Dead, built on first use
}

// shardRef describes one live shard object.
type shardRef struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	ETag   string `json:"etag"`
	Size   int64  `json:"size"`
	Chunks int    `json:"chunks"`
	Docs   int    `json:"docs"`
	// Terms counts, for the shard's most frequent terms, the chunks that hold
	// them: the store's term profile, for store selection, is their sum.
	Terms map[string]int `json:"terms,omitempty"`
	// Index names the centroids the shard is partitioned by ("" for a shard
	// that is not); Spread is the mean 1 - cos of its chunks and their
	// centroids.
	Index  string  `json:"index,omitempty"`
	Spread float64 `json:"spread,omitempty"`
	// Graph is the key of the shard's graph pack ("" for a shard written
	// before graphs, or whose documents have none; see graph.go).
	Graph string `json:"graph,omitempty"`
}

// deadDoc is one version of a document that left search, in shard Shard
// ("" when compaction has merged the shard the version was written to since).
// Its chunk ids follow from the rest (see [chunkID]).
type deadDoc struct {
	Shard  string `json:"shard"`
	DocID  string `json:"doc_id"`
	Hash   string `json:"hash"`
	Nonce  string `json:"nonce,omitempty"`
	Chunks int    `json:"chunks"`
}

// chunkID returns the id of chunk i of this version.
func (d deadDoc) chunkID(alias string, i int) string {
	return chunkID(alias, d.DocID, d.Hash, d.Nonce, i)
}

// chunkID returns the id of chunk i of a version of document docID, in store
// alias: the version whose text and metadata hash to hash, written by the
// ingest that drew nonce. The nonce makes every ingest's ids its own, so that
// the dead list, which names chunks by id, hides a replaced version and never
// a later ingest of the same text: the same ids in a new shard and in the
// old one, still holding the replaced copy, made a version ingested again
// after another unfindable, and a compaction dropped it (A, B, A). Versions
// written before nonces have none, and keep the ids they were given.
func chunkID(alias, docID, hash, nonce string, i int) string {
	key := alias + "\x00" + docID + "\x00" + hash
	if nonce != "" {
		key += "\x00" + nonce
	}
	return text.Hash64Hex(key + "\x00" + strconv.Itoa(i))
}

func (m *manifest) clone() *manifest {
	n := &manifest{Version: m.Version, Shards: slices.Clone(m.Shards), Dead: slices.Clone(m.Dead), IVF: slices.Clone(m.IVF)}
	return n
}

// liveChunks counts the searchable chunks.
func (m *manifest) liveChunks() int64 {
	var n int64
	for _, s := range m.Shards {
		n += int64(s.Chunks)
	}
	for _, d := range m.Dead {
		n -= int64(d.Chunks)
	}
	return n
}

// index builds the dead chunk set; call it once before sharing m.
func (m *manifest) index(alias string) {
	m.dead = make(map[string]bool)
	for _, d := range m.Dead {
		for i := range d.Chunks {
			m.dead[d.chunkID(alias, i)] = true
		}
	}
}

// hides reports whether m hides the chunks of the version rec names. A
// version with a nonce is never hidden while its record stands; one written
// before nonces may be, when it was ingested again after another version
// (the chunks of both of its ingests have the same ids).
func (m *manifest) hides(rec docRec) bool {
	return slices.ContainsFunc(m.Dead, func(d deadDoc) bool {
		return d.DocID == rec.DocID && d.Hash == rec.Hash && d.Nonce == rec.Nonce
	})
}

// shard returns the index of the shard with id, or -1.
func (m *manifest) shard(id string) int {
	return slices.IndexFunc(m.Shards, func(s shardRef) bool { return s.ID == id })
}

// kill removes a document version from search. d.Shard is where the
// version was written; if that shard has all its documents dead now, it is
// dropped from the manifest and its keys (the shard's and its graph pack's)
// returned, so the caller can delete the objects once the manifest is
// committed.
func (m *manifest) kill(d deadDoc) (droppedKeys []string) {
	i := m.shard(d.Shard)
	if i < 0 {
		// The document's record names a shard compaction has merged since:
		// its chunks are in some live shard, which is not known here.
		d.Shard = ""
		m.Dead = append(m.Dead, d)
		return nil
	}
	m.Dead = append(m.Dead, d)
	deadDocs := 0
	for _, x := range m.Dead {
		if x.Shard == d.Shard {
			deadDocs++
		}
	}
	if deadDocs < m.Shards[i].Docs {
		return nil
	}
	keys := shardObjects(m.Shards[i])
	m.Shards = slices.Delete(m.Shards, i, i+1)
	m.Dead = slices.DeleteFunc(m.Dead, func(x deadDoc) bool { return x.Shard == d.Shard })
	return keys
}

// ProfileTerms bounds the term profile a store record keeps.
const ProfileTerms = 100

// profile returns the store's term profile: its most frequent terms, each
// weighted by its chunk count relative to the most frequent one (0..1].
func (m *manifest) profile() map[string]float64 {
	counts := map[string]int{}
	for _, s := range m.Shards {
		for t, n := range s.Terms {
			counts[t] += n
		}
	}
	terms := slices.Collect(maps.Keys(counts))
	slices.SortFunc(terms, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	if len(terms) > ProfileTerms {
		terms = terms[:ProfileTerms]
	}
	out := make(map[string]float64, len(terms))
	for _, t := range terms {
		out[t] = float64(counts[t]) / float64(counts[terms[0]])
	}
	return out
}

func decodeManifest(alias string) decoder[*manifest] {
	return func(data []byte) (*manifest, int64, error) {
		var m manifest
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, 0, fmt.Errorf("manifest is not valid JSON: %w", err)
		}
		m.index(alias)
		return &m, int64(3*len(data)) + int64(40*len(m.dead)), nil
	}
}

// loadManifest returns the manifest r points at (an empty one before the
// first document). Errors wrap [store.ErrNotFound] when the object is gone,
// which happens when a newer commit deleted it: re-read the record and retry.
func (s *Service) loadManifest(ctx context.Context, r storeRec) (*manifest, error) {
	if r.Manifest == "" {
		m := &manifest{Version: r.Version}
		m.index(r.Alias)
		return m, nil
	}
	return cached(ctx, s.cache, s.blobs, r.Manifest, never, decodeManifest(r.Alias))
}

// snapshot reads a store's record and manifest consistently.
func (s *Service) snapshot(ctx context.Context, c tenant.Caller, alias string) (storeRec, *manifest, error) {
	for attempt := 0; ; attempt++ {
		r, err := s.loadStore(ctx, c, alias, false)
		if err != nil {
			return storeRec{}, nil, err
		}
		m, err := s.loadManifest(ctx, r)
		if isNotFound(err) && attempt < 3 {
			continue // replaced by a newer version meanwhile
		}
		if err != nil {
			return storeRec{}, nil, fault.Unavailable(err, "reading the manifest of vector store %q failed; retry", alias)
		}
		return r, m, nil
	}
}

// errNoChange aborts a commit that has nothing to write.
var errNoChange = errors.New("nothing to change")

// errMaybeCommitted marks a commit whose transaction failed without saying
// whether it landed (a timeout, an answer lost on the way): the manifest it
// wrote may be the one the store's record points at now, and the shard a
// change added one the manifest lists, so neither may be deleted.
var errMaybeCommitted = errors.New("the change may have been applied")

// A change edits a store's record and a copy of its manifest for one commit,
// and returns the other table writes (document records) that must land with
// it. It may run several times, once per attempt, each time on fresh state;
// returning errNoChange ends the commit without writing.
type change func(r *storeRec, m *manifest) ([]store.Write, error)

// commit applies fn to the store's current state and moves the store's
// manifest pointer to the result: a new manifest object, then one
// transaction that updates the record if its version is unchanged along with
// fn's writes. A lost race is retried on fresh state; the losing attempt's
// manifest object is deleted. A transaction that may have landed leaves its
// manifest in place, and the error wraps errMaybeCommitted. It returns the
// new record and manifest (the old ones when fn returned errNoChange) and the
// old manifest's key.
func (s *Service) commit(ctx context.Context, c tenant.Caller, alias string, fn change) (storeRec, *manifest, error) {
	var out storeRec
	var outM *manifest
	var oldKey string
	err := store.Retry(ctx, func() error {
		r, m, err := s.snapshot(ctx, c, alias)
		if err != nil {
			return err
		}
		nr, nm := r, m.clone()
		writes, err := fn(&nr, nm)
		if errors.Is(err, errNoChange) {
			out, outM, oldKey = r, m, ""
			return nil
		}
		if err != nil {
			return err
		}
		nm.Version = r.Version + 1
		nr.Version, nr.Manifest, nr.Updated = nm.Version, manifestKey(c, alias, nm.Version), s.now()
		nr.Shards, nr.Chunks, nr.Profile = len(nm.Shards), nm.liveChunks(), nm.profile()
		data, err := json.Marshal(nm)
		if err != nil {
			return fmt.Errorf("encoding manifest: %w", err)
		}
		if _, err := s.blobs.Put(ctx, nr.Manifest, data, &store.PutOptions{IfAbsent: true, ContentType: "application/json"}); err != nil {
			return fault.Unavailable(err, "writing the manifest of vector store %q failed; retry", alias)
		}
		writes = append([]store.Write{store.Put(nr.item(c), store.IfEquals("ver", r.Version))}, writes...)
		if err := s.table.Transact(ctx, writes...); err != nil {
			if !errors.Is(err, store.ErrConditionFailed) && !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("%w: %w", errMaybeCommitted, err)
			}
			if derr := s.blobs.Delete(ctx, nr.Manifest); derr != nil {
				s.log.WarnContext(ctx, "deleting an uncommitted manifest failed", "key", nr.Manifest, "error", derr)
			}
			return err
		}
		nm.index(alias)
		s.cache.add(&cacheEntry{key: nr.Manifest, checked: time.Now(), size: int64(3*len(data)) + int64(40*len(nm.dead)), value: nm})
		out, outM, oldKey = nr, nm, r.Manifest
		return nil
	})
	if err != nil {
		return storeRec{}, nil, lostRace(err, alias)
	}
	if oldKey != "" {
		s.removeObjects(ctx, oldKey)
	}
	return out, outM, nil
}

// cleanupTimeout bounds the removal of objects that a change left behind.
const cleanupTimeout = 5 * time.Second

// removeObjects deletes objects a commit made unreachable. A failure leaves
// garbage, not damage, so it is logged, not returned; vector_store_delete
// removes whatever is left under the store's prefix.
func (s *Service) removeObjects(ctx context.Context, keys ...string) {
	// Cleaning up runs even when the call's deadline ended it, or the
	// objects would be left behind.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, k := range keys {
		if k == "" {
			continue
		}
		if err := s.blobs.Delete(ctx, k); err != nil {
			s.log.WarnContext(ctx, "deleting an unreachable object failed", "key", k, "error", err)
		}
		s.cache.Forget(k)
	}
}
