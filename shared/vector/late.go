package vector

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/colbert"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// Late interaction (rag_pylate_colbert) keeps a store's chunks a second way,
// as compressed token vectors (package colbert), built lazily: the first
// late-interaction search of a store trains its codec and encodes each chunk
// shard into a token shard beside it, and later searches encode only the
// shards written since. Every ingest would otherwise pay for token vectors
// (with a remote embedder, an API call per 16 chunks) that most stores never
// use. The objects, under the store's prefix:
//
//	tenants/<tenant>/vector/<alias>/colbert/<embedder, 16 hex>/<chunks, 12 digits>.codec  the codec, by the chunks it was trained on
//	tenants/<tenant>/vector/<alias>/tokens/<shard id>.tv                                  the token vectors of shards/<shard id>.seg
//	tenants/<tenant>/vector/<alias>/tokens/<shard id>.tv.part                             those encoded so far, when a call ran out of time
//
// A token shard holds exactly the chunks of its chunk shard, so it shares its
// lifecycle: the manifest's dead list hides a deleted or replaced document's
// tokens as it hides its chunks; a shard dropped from the manifest takes its
// token shard with it; compaction writes a merged shard's token shard by
// copying the compressed tokens of its parts (never embedding again), and an
// unchanged document, never rewritten, is never encoded again. Concurrent
// builders write the same object (the codec is written only if absent, and
// the loser reads the winner's), so they lose nothing. A token shard of
// another codec (the embedder was changed) is encoded again.
const (
	// DefaultLateBytes bounds the token vectors one process holds in memory
	// for late interaction, over all stores: at 34 bytes a 128-dimension
	// token (2 bits), about 7.5 million tokens, some 50,000 chunks of 150.
	DefaultLateBytes = colbert.DefaultMaxBytes
	// lateSampleChunks is how many chunks, spread over the store, train its codec.
	lateSampleChunks = 1024
	// lateMaxCentroids bounds a codec's centroids.
	lateMaxCentroids = 1024
	// lateBatch is how many texts one token-embedding call carries.
	lateBatch = 16
	// MaxLateK is [query.MaxLateK].
	MaxLateK = query.MaxLateK
)

// The candidate sources of a late-interaction search ([query.LateFromCentroids], [query.LateFromHybrid]).
const (
	LateFromCentroids = query.LateFromCentroids
	LateFromHybrid    = query.LateFromHybrid
)

// LateInput is [query.LateInput].
type LateInput = query.LateInput

// LateCandidate is [query.LateCandidate].
type LateCandidate = query.LateCandidate

// LateHit is [query.LateHit].
type LateHit = query.LateHit

// LateOutput is [query.LateOutput].
type LateOutput = query.LateOutput

// lateIndex is a store's token vectors at one manifest version, in memory.
type lateIndex struct {
	version int64
	codec   *colbert.Codec
	index   *colbert.Index
	shards  []shardRef
	where   map[string]chunkAt        // live chunk id -> its place
	tokens  map[string]colbert.Tokens // live chunk id -> its tokens, for the next version's shards
	used    time.Time
}

// chunkAt is where a chunk lies: shard index (in lateIndex.shards) and position.
type chunkAt struct{ shard, pos int }

// lateIndexes holds this process's late-interaction indexes, one a store,
// within a byte bound; the least recently used go first.
type lateIndexes struct {
	mu      sync.Mutex
	build   sync.Mutex // one build at a time: each may hold a store's tokens twice
	byStore map[string]*lateIndex
}

// LateInteraction searches stores by late interaction (MaxSim over token
// vectors, [colbert.Index]) with the configured multi-vector embedder:
// reranking in.Candidates, or over candidates found by centroid pruning. It
// builds what the stores lack first (see the top of this file): the codec,
// and the token shard of each chunk shard written since the last search.
// That work is saved shard by shard, so a call whose deadline ends it is
// continued by the next (inside a shard too: the chunks encoded are saved
// beside it). A store whose token vectors would take the index
// past its memory bound is refused with quota_exceeded.
func (s *Service) LateInteraction(ctx context.Context, c tenant.Caller, in LateInput) (LateOutput, error) {
	if s.multi == nil {
		return LateOutput{}, fault.Unavailable(nil, "late interaction is not configured: no multi-vector embedder")
	}
	if strings.TrimSpace(in.Question) == "" {
		return LateOutput{}, fault.Invalid("question", "must not be empty")
	}
	if n := utf8.RuneCountInString(in.Question); n > MaxQuestionChars {
		return LateOutput{}, fault.Invalid("question", "is %d characters, more than %d", n, MaxQuestionChars)
	}
	if in.K < 1 || in.K > MaxLateK {
		return LateOutput{}, fault.Invalid("top_k", "%d is outside 1..%d", in.K, MaxLateK)
	}
	if in.Threshold < 0 || in.Threshold > 1 || math.IsNaN(in.Threshold) {
		return LateOutput{}, fault.Invalid("interaction_threshold", "%v is outside 0..1", in.Threshold)
	}
	if len(in.Candidates) > MaxLateK {
		return LateOutput{}, fault.Invalid("candidates", "names %d chunks, more than %d", len(in.Candidates), MaxLateK)
	}
	if len(in.Stores) == 0 || len(in.Stores) > MaxSearchStores {
		return LateOutput{}, fault.Invalid("stores", "names %d stores: want 1..%d", len(in.Stores), MaxSearchStores)
	}
	for _, a := range in.Stores {
		if err := ValidateAlias("stores", a); err != nil {
			return LateOutput{}, err
		}
	}
	if err := ValidateFilter("filter", in.Filter); err != nil {
		return LateOutput{}, err
	}
	out := LateOutput{Hits: []LateHit{}, Source: LateFromCentroids, Provider: s.multi.Provider(), Model: s.multi.Model(), Dims: s.multi.Dims()}
	byStore := map[string][]string{}
	if len(in.Candidates) > 0 {
		out.Source = LateFromHybrid
		for _, cd := range in.Candidates {
			byStore[cd.Store] = append(byStore[cd.Store], cd.ChunkID)
		}
	}
	q, err := s.multi.EmbedTokens(ctx, multivector.Request{Texts: []string{in.Question}, Purpose: provider.ForQuery})
	if err != nil {
		return LateOutput{}, embedderFault(err, "embedding the question's tokens")
	}
	if len(q.Tokens) != 1 || len(q.Tokens[0]) == 0 {
		return out, nil // nothing in the question to match
	}
	var all []LateHit
	var ratios []float64
	for _, alias := range slices.Compact(slices.Sorted(slices.Values(in.Stores))) {
		if out.Source == LateFromHybrid && len(byStore[alias]) == 0 {
			continue
		}
		for attempt := 0; ; attempt++ {
			found, res, x, err := s.lateSearch(ctx, c, alias, q.Tokens[0], byStore[alias], in)
			if isNotFound(err) && attempt < 3 {
				continue // a shard left with a newer manifest meanwhile
			}
			if isNotFound(err) {
				return LateOutput{}, fault.Unavailable(err, "vector store %q changed during the search; retry", alias)
			}
			if err != nil {
				return LateOutput{}, err
			}
			if x != nil {
				out.Candidates += res.Candidates
				out.TokenInteractions += res.TokenInteractions
				out.IndexBytes += x.index.Bytes()
				out.Tokens += x.index.Tokens()
				ratios = append(ratios, x.index.CompressionRatio())
				all = append(all, found...)
			}
			break
		}
	}
	for _, r := range ratios {
		out.CompressionRatio = max(out.CompressionRatio, r) // one embedder and bit width: all equal
	}
	slices.SortStableFunc(all, func(a, b LateHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Store, b.Store), cmp.Compare(a.ChunkID, b.ChunkID))
	})
	out.Hits = append(out.Hits, all[:min(len(all), in.K)]...)
	return out, nil
}

// lateSearch searches one store: its index at the current manifest version,
// reranking ids or, without any, pruning by centroids; the hits read their
// chunks and pass the filter. Errors wrap [store.ErrNotFound] when a shard
// left meanwhile: search again. A store without chunks has a nil index.
func (s *Service) lateSearch(ctx context.Context, c tenant.Caller, alias string, q [][]float32, ids []string, in LateInput) ([]LateHit, colbert.Result, *lateIndex, error) {
	x, err := s.buildLateIndex(ctx, c, alias)
	if err != nil || x == nil {
		return nil, colbert.Result{}, nil, err
	}
	opts := &colbert.SearchOptions{K: min(in.K, colbert.MaxK), Threshold: float32(in.Threshold)}
	var res colbert.Result
	if len(ids) > 0 {
		opts.K = len(ids)
		res, err = x.index.Rerank(ctx, q, ids, opts)
	} else {
		if len(in.Filter) > 0 {
			opts.K = min(4*in.K, colbert.MaxK) // the filter drops some afterwards
		}
		opts.Candidates = max(colbert.DefaultCandidates, opts.K)
		res, err = x.index.Search(ctx, q, opts)
	}
	if err != nil {
		return nil, colbert.Result{}, nil, err
	}
	var found []LateHit
	for _, h := range res.Hits {
		if len(found) == in.K {
			break
		}
		at := x.where[h.ID]
		seg, err := s.segment(ctx, x.shards[at.shard])
		if err != nil {
			return nil, colbert.Result{}, nil, err
		}
		ch := seg.Chunk(at.pos)
		if !matchesFilter(ch.Metadata, in.Filter) {
			continue
		}
		found = append(found, LateHit{Store: alias, ChunkID: ch.ID, DocID: ch.DocID, Content: ch.Text, Metadata: ch.Metadata, Score: float64(h.Score)})
	}
	return found, res, x, nil
}

// matchesFilter reports whether metadata has, for every key of f, one of its values.
func matchesFilter(md map[string]string, f map[string][]string) bool {
	for k, vs := range f {
		v, ok := md[k]
		if !ok || !slices.Contains(vs, v) {
			return false
		}
	}
	return true
}

// embedderFault classifies a multi-vector embedder's failure: classified
// errors pass through, anything else is the dependency being unavailable.
func embedderFault(err error, doing string) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	return fault.Unavailable(err, "%s failed: the multi-vector embedder did not answer (%v)", doing, err)
}

// buildLateIndex returns the store's late-interaction index at its current
// manifest version, building what is missing; nil for a store without chunks.
func (s *Service) buildLateIndex(ctx context.Context, c tenant.Caller, alias string) (*lateIndex, error) {
	_, m, err := s.snapshot(ctx, c, alias)
	if err != nil {
		return nil, err
	}
	key := c.Tenant + "\x00" + alias
	s.late.mu.Lock()
	prev := s.late.byStore[key]
	if prev != nil && prev.version == m.Version {
		prev.used = time.Now()
		s.late.mu.Unlock()
		return prev, nil
	}
	s.late.mu.Unlock()
	if m.liveChunks() == 0 {
		return nil, nil
	}
	s.late.build.Lock()
	defer s.late.build.Unlock()
	s.late.mu.Lock()
	if x := s.late.byStore[key]; x != nil && x.version == m.Version {
		s.late.mu.Unlock()
		return x, nil // built by a concurrent call meanwhile
	}
	s.late.mu.Unlock()
	codec, err := s.lateCodec(ctx, c, alias, m)
	if err != nil {
		return nil, err
	}
	if prev != nil && prev.codec.ID() != codec.ID() {
		prev = nil
	}
	x := &lateIndex{version: m.Version, codec: codec, shards: slices.Clone(m.Shards), where: map[string]chunkAt{},
		tokens: map[string]colbert.Tokens{}, index: colbert.NewIndex(codec, &colbert.IndexOptions{MaxBytes: s.lateBytes})}
	for si, sh := range x.shards {
		ts, err := s.tokenShard(ctx, c, alias, codec, sh, prev, si, len(x.shards))
		if err != nil {
			return nil, err
		}
		live := colbert.Shard{}
		for i, id := range ts.IDs {
			if m.dead[id] {
				continue
			}
			if _, dup := x.where[id]; dup {
				continue // a copy of a version written before nonces
			}
			x.where[id] = chunkAt{si, i}
			x.tokens[id] = ts.Tokens[i]
			live.IDs, live.Tokens = append(live.IDs, id), append(live.Tokens, ts.Tokens[i])
		}
		if err := x.index.Add(live); err != nil {
			if fault.KindOf(err) == fault.KindQuotaExceeded {
				return nil, fault.QuotaExceeded("the token vectors of vector store %q need more than the %d MiB late interaction may hold in memory; search it with another pipeline, or split it into smaller stores", alias, s.lateBytes>>20)
			}
			return nil, err
		}
	}
	x.used = time.Now()
	s.late.mu.Lock()
	defer s.late.mu.Unlock()
	s.late.byStore[key] = x
	// Keep the indexes within the bound, the least recently used leaving first.
	for {
		var total int64
		var oldest string
		for k, y := range s.late.byStore {
			total += y.index.Bytes()
			if k != key && (oldest == "" || y.used.Before(s.late.byStore[oldest].used)) {
				oldest = k
			}
		}
		if total <= s.lateBytes || oldest == "" {
			break
		}
		delete(s.late.byStore, oldest)
	}
	return x, nil
}

// tokenKey returns the key of the token shard of the chunk shard at key.
func tokenKey(shardKey string) string {
	dir, file, ok := strings.Cut(shardKey, "/shards/")
	if !ok {
		return ""
	}
	return dir + "/tokens/" + strings.TrimSuffix(file, ".seg") + ".tv"
}

// shardObjects returns the objects that live and die with a chunk shard:
// the shard, its graph pack and its token shard (with a partial build).
func shardObjects(sh shardRef) []string {
	if sh.Key == "" {
		return nil
	}
	return []string{sh.Key, sh.Graph, tokenKey(sh.Key), partKey(tokenKey(sh.Key))}
}

// codecPrefix returns the prefix of a store's codecs for the multi-vector
// embedder e: each is named by the live chunks it was trained on, 12 digits,
// so that the newest lists last.
func codecPrefix(c tenant.Caller, alias string, e multivector.Embedder) string {
	return storePrefix(c, alias) + "colbert/" + text.Hash64Hex(fmt.Sprintf("%s\x00%s\x00%d", e.Provider(), e.Model(), e.Dims())) + "/"
}

func codecKey(prefix string, trainedOn int64) string {
	return fmt.Sprintf("%s%012d.codec", prefix, trainedOn)
}

// trainedOn reads the live chunks a codec was trained on from its key.
func trainedOn(key string) int64 {
	n, err := strconv.ParseInt(strings.TrimSuffix(path.Base(key), ".codec"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// tokenShardCodec returns the codec id a token shard was written with.
func tokenShardCodec(data []byte) (uint64, bool) {
	if len(data) < 16 || string(data[:4]) != "SBTV" {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[8:16]), true
}

// codedShard is a decoded token shard and the codec it was written with;
// a shard of another codec than the one decoding is kept undecoded.
type codedShard struct {
	codec uint64
	colbert.Shard
}

func decodeTokenShard(codec *colbert.Codec) decoder[codedShard] {
	return func(data []byte) (codedShard, int64, error) {
		if id, ok := tokenShardCodec(data); ok && id != codec.ID() {
			return codedShard{codec: id}, int64(len(data)), nil
		}
		sh, err := codec.DecodeShard(data)
		if err != nil {
			return codedShard{}, 0, err
		}
		return codedShard{codec.ID(), sh}, int64(len(data)) + int64(len(sh.IDs))*chunkBookkeeping, nil
	}
}

// chunkBookkeeping approximates a decoded chunk's headers beside its token bytes.
const chunkBookkeeping = 96

// tokenShard returns the token shard of sh, encoding it when it is missing
// or of another codec: the tokens of chunks prev holds are copied, the others
// embedded. It is saved before it is returned.
func (s *Service) tokenShard(ctx context.Context, c tenant.Caller, alias string, codec *colbert.Codec, sh shardRef, prev *lateIndex, n, of int) (colbert.Shard, error) {
	key := tokenKey(sh.Key)
	cs, err := cached(ctx, s.cache, s.blobs, key, s.revalidate, decodeTokenShard(codec))
	if err == nil && cs.codec != codec.ID() {
		// Cached as another codec wrote it: the object may have been
		// written again since, with this one.
		s.cache.Forget(key)
		cs, err = cached(ctx, s.cache, s.blobs, key, s.revalidate, decodeTokenShard(codec))
	}
	if err == nil && cs.codec == codec.ID() && len(cs.IDs) == sh.Chunks {
		return cs.Shard, nil
	}
	if err != nil && !isNotFound(err) && !errors.Is(err, colbert.ErrCorrupt) {
		return colbert.Shard{}, fault.Unavailable(err, "reading the token vectors of vector store %q failed; retry", alias)
	}
	seg, err := s.segment(ctx, sh)
	if err != nil {
		return colbert.Shard{}, err
	}
	ts := colbert.Shard{IDs: make([]string, seg.Len()), Tokens: make([]colbert.Tokens, seg.Len())}
	saved := s.partialTokens(ctx, codec, partKey(key))
	done := make([]bool, seg.Len())
	var todo []int
	for i := range seg.Len() {
		ts.IDs[i] = seg.ChunkID(i)
		if t, ok := prev.tokensOf(ts.IDs[i]); ok {
			ts.Tokens[i], done[i] = t, true
		} else if t, ok := saved[ts.IDs[i]]; ok {
			ts.Tokens[i], done[i] = t, true
		} else {
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		batch := todo[:min(lateBatch, len(todo))]
		todo = todo[len(batch):]
		texts := make([]string, len(batch))
		for j, i := range batch {
			texts[j] = seg.Chunk(i).Text
		}
		e, err := s.multi.EmbedTokens(ctx, multivector.Request{Texts: texts, Purpose: provider.ForDocument})
		if err != nil {
			if ctx.Err() != nil {
				s.savePartialTokens(ctx, codec, partKey(key), ts, done)
				return colbert.Shard{}, fault.Unavailable(err, "building the token vectors of vector store %q ran out of time in shard %d of %d; what was built is kept: retry to continue", alias, n+1, of)
			}
			return colbert.Shard{}, embedderFault(err, "embedding the tokens of vector store "+alias)
		}
		if len(e.Tokens) != len(batch) || e.Dims != codec.Dims() {
			return colbert.Shard{}, fault.Unavailable(nil, "the multi-vector embedder answered %d texts of %d dimensions for %d of %d", len(e.Tokens), e.Dims, len(batch), codec.Dims())
		}
		for j, i := range batch {
			if ts.Tokens[i], err = codec.Compress(e.Tokens[j]); err != nil {
				return colbert.Shard{}, fmt.Errorf("compressing the tokens of chunk %s: %w", ts.IDs[i], err)
			}
			done[i] = true
		}
	}
	data, err := codec.EncodeShard(ts)
	if err != nil {
		return colbert.Shard{}, err
	}
	info, err := s.blobs.Put(ctx, key, data, &store.PutOptions{})
	if err != nil {
		return colbert.Shard{}, fault.Unavailable(err, "writing the token vectors of vector store %q failed; retry", alias)
	}
	s.cache.add(&cacheEntry{key: key, etag: info.ETag, size: int64(len(data)) + int64(len(ts.IDs))*chunkBookkeeping, value: codedShard{codec.ID(), ts}, checked: time.Now()})
	if saved != nil {
		s.removeObjects(ctx, partKey(key))
	}
	return ts, nil
}

// partKey is where the chunks of a token shard encoded so far are kept
// when a call runs out of time inside it, for the next call to go on from.
func partKey(tokenKey string) string { return tokenKey + ".part" }

// partialTokens returns the tokens saved at key by a call that ran out of
// time, by chunk id; nil if there are none (or of another codec).
func (s *Service) partialTokens(ctx context.Context, codec *colbert.Codec, key string) map[string]colbert.Tokens {
	data, err := readAll(ctx, s.blobs, key)
	if err != nil {
		return nil
	}
	if id, ok := tokenShardCodec(data); !ok || id != codec.ID() {
		return nil
	}
	part, err := codec.DecodeShard(data)
	if err != nil {
		return nil
	}
	out := make(map[string]colbert.Tokens, len(part.IDs))
	for i, id := range part.IDs {
		out[id] = part.Tokens[i]
	}
	return out
}

// savePartialTokens keeps the chunks of ts encoded so far at key, after
// ctx has ended: the caller's deadline leaves time for it (a pipeline's
// answer reserve). A failure only loses that progress.
func (s *Service) savePartialTokens(ctx context.Context, codec *colbert.Codec, key string, ts colbert.Shard, done []bool) {
	var part colbert.Shard
	for i, ok := range done {
		if ok {
			part.IDs, part.Tokens = append(part.IDs, ts.IDs[i]), append(part.Tokens, ts.Tokens[i])
		}
	}
	if len(part.IDs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	data, err := codec.EncodeShard(part)
	if err == nil {
		_, err = s.blobs.Put(ctx, key, data, &store.PutOptions{})
	}
	if err != nil {
		s.log.WarnContext(ctx, "saving partly built token vectors failed", "key", key, "error", err)
	}
}

// tokensOf returns the tokens x holds for a chunk id; x may be nil.
func (x *lateIndex) tokensOf(id string) (colbert.Tokens, bool) {
	if x == nil {
		return colbert.Tokens{}, false
	}
	t, ok := x.tokens[id]
	return t, ok
}

func parseCodec(data []byte) (*colbert.Codec, int64, error) {
	codec, err := colbert.ParseCodec(data)
	if err != nil {
		return nil, 0, err
	}
	return codec, 2 * int64(len(data)), nil
}

// lateCodec returns the store's codec for the configured multi-vector
// embedder, training one on a sample of the store's live chunks when there
// is none, or when the store has grown to twice the chunks the newest was
// trained on and that was fewer than [lateSampleChunks]: a codec trained on
// a store's first few chunks has centroids for their tokens only, and
// compresses later ones badly. So a store is trained again at most 10
// times, all while it is small, and its chunks are encoded at most twice
// over in all. Training takes at most [lateSampleChunks] chunks,
// evenly across shards; 16·√(the store's estimated tokens) centroids,
// rounded down to a power of two, within 16..[lateMaxCentroids]; seeded; 2
// bits a dimension. A codec is written only if absent, so concurrent
// trainers agree on the first; older codecs are deleted.
func (s *Service) lateCodec(ctx context.Context, c tenant.Caller, alias string, m *manifest) (*colbert.Codec, error) {
	prefix := codecPrefix(c, alias, s.multi)
	page, err := s.blobs.List(ctx, prefix, nil)
	if err != nil {
		return nil, fault.Unavailable(err, "listing the late-interaction codecs of vector store %q failed; retry", alias)
	}
	live := m.liveChunks()
	var older []string
	if n := len(page.Blobs); n > 0 {
		key := page.Blobs[n-1].Key
		for _, b := range page.Blobs[:n-1] {
			older = append(older, b.Key)
		}
		if on := trainedOn(key); on >= lateSampleChunks || live < 2*on {
			codec, err := cached(ctx, s.cache, s.blobs, key, s.revalidate, parseCodec)
			if err != nil {
				return nil, fault.Unavailable(err, "reading the late-interaction codec of vector store %q failed; retry", alias)
			}
			if codec.Dims() != s.multi.Dims() {
				return nil, fault.Unavailable(nil, "the late-interaction codec of vector store %q has %d dimensions, the embedder %d", alias, codec.Dims(), s.multi.Dims())
			}
			return codec, nil
		}
		older = append(older, key)
	}
	stride := max(1, int(live/lateSampleChunks))
	var texts []string
	seen := 0
	for _, sh := range m.Shards {
		seg, err := s.segment(ctx, sh)
		if err != nil {
			return nil, err
		}
		for i := range seg.Len() {
			if m.dead[seg.ChunkID(i)] {
				continue
			}
			if seen%stride == 0 && len(texts) < lateSampleChunks {
				texts = append(texts, seg.Chunk(i).Text)
			}
			seen++
		}
	}
	var sample [][]float32
	for i := 0; i < len(texts); i += lateBatch {
		e, err := s.multi.EmbedTokens(ctx, multivector.Request{Texts: texts[i:min(i+lateBatch, len(texts))], Purpose: provider.ForDocument})
		if err != nil {
			return nil, embedderFault(err, "embedding the tokens of vector store "+alias)
		}
		for _, t := range e.Tokens {
			sample = append(sample, t...)
		}
	}
	if len(sample) == 0 {
		return nil, fault.Invalid("stores", "vector store %q has no text the multi-vector embedder finds tokens in", alias)
	}
	est := float64(len(sample)) * float64(live) / float64(max(len(texts), 1))
	k := 16
	for k*2 <= min(int(16*math.Sqrt(est)), lateMaxCentroids) {
		k *= 2
	}
	codec, err := colbert.Train(ctx, sample, &colbert.TrainOptions{Centroids: k, Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("training the late-interaction codec of vector store %q: %w", alias, err)
	}
	data, err := codec.MarshalBinary()
	if err != nil {
		return nil, err
	}
	key := codecKey(prefix, live)
	info, err := s.blobs.Put(ctx, key, data, &store.PutOptions{IfAbsent: true})
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		s.cache.Forget(key)
		if codec, err = cached(ctx, s.cache, s.blobs, key, s.revalidate, parseCodec); err != nil {
			return nil, fault.Unavailable(err, "reading the late-interaction codec of vector store %q failed; retry", alias)
		}
		return codec, nil
	}
	if err != nil {
		return nil, fault.Unavailable(err, "writing the late-interaction codec of vector store %q failed; retry", alias)
	}
	s.cache.add(&cacheEntry{key: key, etag: info.ETag, size: 2 * int64(len(data)), value: codec, checked: time.Now()})
	s.removeObjects(ctx, older...)
	return codec, nil
}

// mergeTokens writes the token shard of a merged shard by copying the
// compressed tokens of the shards it merged, when each of them has one of
// the same codec; otherwise the next late-interaction search encodes it. A
// failure leaves that work to the search: it is logged, not returned.
func (s *Service) mergeTokens(ctx context.Context, c tenant.Caller, alias string, picked []shardRef, seg *retrieval.Segment, merged shardRef) {
	if merged.Key == "" {
		return
	}
	var raw [][]byte
	var id uint64
	for _, sh := range picked {
		data, err := readAll(ctx, s.blobs, tokenKey(sh.Key))
		if err != nil {
			if !isNotFound(err) {
				s.log.WarnContext(ctx, "reading a token shard to merge failed", "key", tokenKey(sh.Key), "error", err)
			}
			return
		}
		cid, ok := tokenShardCodec(data)
		if !ok || (id != 0 && cid != id) {
			return
		}
		id, raw = cid, append(raw, data)
	}
	if len(raw) == 0 {
		return
	}
	codec, err := s.codecByID(ctx, c, alias, id)
	if err != nil || codec == nil {
		return
	}
	tokens := map[string]colbert.Tokens{}
	for _, data := range raw {
		ts, err := codec.DecodeShard(data)
		if err != nil {
			return
		}
		for i, cid := range ts.IDs {
			tokens[cid] = ts.Tokens[i]
		}
	}
	out := colbert.Shard{IDs: make([]string, seg.Len()), Tokens: make([]colbert.Tokens, seg.Len())}
	for i := range seg.Len() {
		t, ok := tokens[seg.ChunkID(i)]
		if !ok {
			return
		}
		out.IDs[i], out.Tokens[i] = seg.ChunkID(i), t
	}
	data, err := codec.EncodeShard(out)
	if err == nil {
		_, err = s.blobs.Put(ctx, tokenKey(merged.Key), data, &store.PutOptions{})
	}
	if err != nil {
		s.log.WarnContext(ctx, "writing a merged token shard failed", "key", tokenKey(merged.Key), "error", err)
	}
}

// codecByID returns the store's codec whose id is id, or nil if none is.
func (s *Service) codecByID(ctx context.Context, c tenant.Caller, alias string, id uint64) (*colbert.Codec, error) {
	// Any embedder's: compaction runs in functions that embed no tokens.
	page, err := s.blobs.List(ctx, storePrefix(c, alias)+"colbert/", nil)
	if err != nil {
		return nil, err
	}
	for _, b := range page.Blobs {
		codec, err := cached(ctx, s.cache, s.blobs, b.Key, s.revalidate, parseCodec)
		if err == nil && codec.ID() == id {
			return codec, nil
		}
	}
	return nil, nil
}

// readAll reads the object at key.
func readAll(ctx context.Context, blobs store.Blobs, key string) ([]byte, error) {
	rc, _, err := blobs.Get(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
