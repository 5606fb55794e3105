package vector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Fan-out. A search runs as a coordinator and workers. The coordinator
// splits the shards to search into groups of at most [Options.GroupBytes]
// (what one worker can hold in memory). One group it searches itself, in
// process. Several it hands to workers ([Options.Searcher]), one per group,
// in parallel, in two phases:
//
//  1. statistics: each worker returns its group's BM25 statistics for the
//     query's terms (retrieval.Segment.TermStats); the coordinator adds them
//     up into the collection's statistics;
//  2. search: each worker ranks its group's chunks per modality with those
//     global statistics (retrieval.SearchLists), so BM25 scores from
//     different groups are comparable, and returns the top hits of each
//     modality with their chunks' text and metadata.
//
// The coordinator merges each modality's lists and fuses them
// (retrieval.Combine): the result is exactly what one process searching
// every shard would return.
//
// Hybrid search expands its vector query from the collection's top BM25 hits
// (pseudo-relevance feedback, retrieval.ExpandVector), so with several groups
// phase 2 splits in three: a BM25 round, merged; the vectors of the merged
// top hits, fetched from the groups holding them; and a vector round with
// the expanded query.
//
// Workers are [Searcher]s. [LocalSearcher] runs them as goroutines of this
// process, sharing its cache: the default, and what a search of one group
// always uses. The retriever's handler uses package vector/remote's instead,
// which invokes the internal tool optimizer_vs-search-group once per group
// and round, through invoke.Lambda on AWS and the local gateway's
// invoke.Local on a laptop, with the JSON of [SearchGroupInput]; the tool's
// handler is [Service.SearchGroup], which answers a [SearchGroupOutput]. Each
// warm instance of that function keeps the shards it searched in its cache;
// Lambda hands an invocation to any idle instance, though, so an instance may
// be sent a group it does not hold and load it from S3 first.

// DefaultGroupBytes bounds the encoded shard bytes of one group when
// [Options.GroupBytes] is zero. Decoded, a group takes about a quarter more
// (960 MiB), which [DefaultCacheBytes] holds: a worker keeps its whole group
// warm. Larger groups would fit the larger functions Lambda allows, but would
// lengthen every worker's cold load and scan; more groups are searched in
// parallel instead.
const DefaultGroupBytes = 768 << 20

// GroupShard is one shard of a [ShardGroup].
type GroupShard struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	// ETag and Size are the manifest's; a worker needs neither.
	ETag   string `json:"etag,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Chunks int    `json:"chunks"`
}

// ShardGroup is the shards one worker searches.
type ShardGroup struct {
	Shards []GroupShard `json:"shards"`
}

// GroupQuery is one worker's part of a search.
type GroupQuery struct {
	Text   string              `json:"text"`
	Vector []float32           `json:"vector,omitempty"`
	Mode   retrieval.Mode      `json:"mode"`
	K      int                 `json:"k"`
	PerDoc bool                `json:"per_doc,omitempty"`
	Filter map[string][]string `json:"filter,omitempty"`
	// Tuning holds the ranking parameters; nil means retrieval's defaults.
	Tuning *retrieval.Tuning `json:"tuning,omitempty"`
	// Stats are the collection's BM25 statistics; nil means the group's own.
	Stats *retrieval.Stats `json:"stats,omitempty"`
	// Dead holds the ids of chunks that left search (replaced or deleted
	// documents still inside their shards).
	Dead map[string]bool `json:"dead,omitempty"`
	// NProbe is how many clusters of a store's centroids the vector scan of
	// a partitioned shard reads; 0 means retrieval.DefaultNProbe.
	NProbe int `json:"nprobe,omitempty"`
}

func (q GroupQuery) query() retrieval.Query {
	rq := retrieval.Query{Text: q.Text, Vector: q.Vector, Mode: q.Mode, K: q.K, PerDoc: q.PerDoc, Filter: retrieval.Filter(q.Filter), Tuning: q.Tuning}
	if len(q.Dead) > 0 {
		dead := q.Dead
		rq.Exclude = func(chunkID, _ string) bool { return dead[chunkID] }
	}
	return rq
}

// ChunkContent is what a worker returns of a chunk it ranked.
type ChunkContent struct {
	Store    string            `json:"store"`
	Text     string            `json:"text"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// GroupResult is a worker's answer: its per-modality rankings (Segment and
// Index in them are the worker's own) and the chunks they name, by id.
type GroupResult struct {
	Lists  retrieval.Lists         `json:"lists"`
	Chunks map[string]ChunkContent `json:"chunks"`
}

// A Searcher is the worker side of a search over one [ShardGroup]. Its
// methods are safe for concurrent use. Errors wrap store.ErrNotFound when a
// shard is gone (a newer manifest dropped it): the coordinator then reads the
// manifests again.
type Searcher interface {
	// Stats returns the group's BM25 statistics for terms.
	Stats(ctx context.Context, c tenant.Caller, g ShardGroup, terms []string) (retrieval.Stats, error)
	// Search ranks the group's chunks for q.
	Search(ctx context.Context, c tenant.Caller, g ShardGroup, q GroupQuery) (GroupResult, error)
	// Vectors returns the vectors of hits, which a Search of the same group
	// returned (their Segment and Index are the group's own).
	Vectors(ctx context.Context, c tenant.Caller, g ShardGroup, hits []retrieval.Hit) ([][]float32, error)
}

// LocalSearcher searches shard groups in this process, through the service's
// cache.
type LocalSearcher struct{ s *Service }

// LocalSearcher returns the in-process worker of s.
func (s *Service) LocalSearcher() *LocalSearcher { return &LocalSearcher{s} }

var _ Searcher = (*LocalSearcher)(nil)

// loadParallelism bounds the shards one worker loads at once.
const loadParallelism = 8

// segments loads a group's shards, several at a time.
func (l *LocalSearcher) segments(ctx context.Context, g ShardGroup) ([]*retrieval.Segment, error) {
	segs := make([]*retrieval.Segment, len(g.Shards))
	errs := make([]error, len(g.Shards))
	sem := make(chan struct{}, loadParallelism)
	var wg sync.WaitGroup
	for i, sh := range g.Shards {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			segs[i], errs[i] = l.s.segment(ctx, shardRef{Key: sh.Key, ETag: sh.ETag, Size: sh.Size, Chunks: sh.Chunks})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return segs, nil
}

// Stats implements [Searcher].
func (l *LocalSearcher) Stats(ctx context.Context, _ tenant.Caller, g ShardGroup, terms []string) (retrieval.Stats, error) {
	segs, err := l.segments(ctx, g)
	if err != nil {
		return retrieval.Stats{}, err
	}
	var st retrieval.Stats
	for _, seg := range segs {
		st.Add(seg.TermStats(terms))
	}
	return st, nil
}

// Search implements [Searcher].
func (l *LocalSearcher) Search(ctx context.Context, c tenant.Caller, g ShardGroup, q GroupQuery) (GroupResult, error) {
	segs, err := l.segments(ctx, g)
	if err != nil {
		return GroupResult{}, err
	}
	rq := q.query()
	if rq.Mode != retrieval.ModeBM25 {
		if rq.Probe, err = l.s.probe(ctx, c, g, segs, q.NProbe); err != nil {
			return GroupResult{}, err
		}
	}
	lists, err := retrieval.SearchLists(segs, rq, q.Stats)
	if err != nil {
		return GroupResult{}, err
	}
	res := GroupResult{Lists: lists, Chunks: map[string]ChunkContent{}}
	for _, list := range [][]retrieval.Hit{lists.BM25, lists.Vector} {
		for _, h := range list {
			if _, ok := res.Chunks[h.ChunkID]; ok {
				continue
			}
			ch := segs[h.Segment].Chunk(h.Index)
			res.Chunks[h.ChunkID] = ChunkContent{Store: g.Shards[h.Segment].Store, Text: ch.Text, Metadata: ch.Metadata}
		}
	}
	return res, nil
}

// Vectors implements [Searcher].
func (l *LocalSearcher) Vectors(ctx context.Context, _ tenant.Caller, g ShardGroup, hits []retrieval.Hit) ([][]float32, error) {
	segs, err := l.segments(ctx, g)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(hits))
	for i, h := range hits {
		if h.Segment < 0 || h.Segment >= len(segs) || h.Index < 0 || h.Index >= segs[h.Segment].Len() {
			return nil, fmt.Errorf("vector: hit %s is not in its group", h.ChunkID)
		}
		out[i] = segs[h.Segment].Chunk(h.Index).Vector
	}
	return out, nil
}

// The operations of [Service.SearchGroup]: one per [Searcher] method.
const (
	OpStats   = "stats"
	OpSearch  = "search"
	OpVectors = "vectors"
)

// SearchGroupOps lists the operations [SearchGroupInput.Op] names.
var SearchGroupOps = []string{OpStats, OpSearch, OpVectors}

// SearchGroupInput is one worker call of a search fanned out over several
// functions: the [Searcher] method Op runs over Group, with its argument.
type SearchGroupInput struct {
	Op    string          `json:"op" jsonschema:"the Searcher method to run: stats, search or vectors"`
	Group ShardGroup      `json:"group" jsonschema:"the shards to search, all under the caller's tenant"`
	Terms []string        `json:"terms,omitempty" jsonschema:"stats: the query's terms"`
	Query *GroupQuery     `json:"query,omitempty" jsonschema:"search: the group's part of the search"`
	Hits  []retrieval.Hit `json:"hits,omitempty" jsonschema:"vectors: hits a search of the same group returned"`
}

// SearchGroupOutput is a worker's answer: the field its operation fills.
type SearchGroupOutput struct {
	Stats   *retrieval.Stats `json:"stats,omitempty"`
	Result  *GroupResult     `json:"result,omitempty"`
	Vectors [][]float32      `json:"vectors,omitempty"`
}

// SearchGroup runs one [Searcher] method over a group of c's shards, in this
// process: the worker side of a search fanned out over several functions.
// Every shard must lie under c's tenant, in the store it names; a group that
// names another's shard is refused before anything is read. A shard that is
// gone is a not-found fault, which the coordinator takes for
// store.ErrNotFound and reads the manifests again.
func (s *Service) SearchGroup(ctx context.Context, c tenant.Caller, in SearchGroupInput) (SearchGroupOutput, error) {
	if err := ownGroup(c, in.Group); err != nil {
		return SearchGroupOutput{}, err
	}
	l := s.LocalSearcher()
	var out SearchGroupOutput
	var err error
	switch in.Op {
	case OpStats:
		var st retrieval.Stats
		st, err = l.Stats(ctx, c, in.Group, in.Terms)
		out.Stats = &st
	case OpSearch:
		if in.Query == nil {
			return SearchGroupOutput{}, fault.Invalid("query", "is required for op %s", OpSearch)
		}
		var res GroupResult
		res, err = l.Search(ctx, c, in.Group, *in.Query)
		out.Result = &res
	case OpVectors:
		out.Vectors, err = l.Vectors(ctx, c, in.Group, in.Hits)
	default:
		return SearchGroupOutput{}, fault.Invalid("op", "%q is not an operation: use %s", in.Op, strings.Join(SearchGroupOps, ", "))
	}
	if isNotFound(err) {
		return SearchGroupOutput{}, fault.NotFound("a shard of the group is gone (%v): a newer manifest dropped it; read the manifests again", err)
	}
	if err != nil {
		return SearchGroupOutput{}, err
	}
	return out, nil
}

// ownGroup checks that every shard of g is a shard object of c's store it
// names: the caller comes from the envelope, the keys from the request.
func ownGroup(c tenant.Caller, g ShardGroup) error {
	for i, sh := range g.Shards {
		field := fmt.Sprintf("group.shards[%d]", i)
		if err := ValidateAlias(field+".store", sh.Store); err != nil {
			return err
		}
		if err := tenant.OwnBlobKey(c, sh.Key); err != nil {
			return fault.Invalid(field+".key", "%v", err)
		}
		rest, ok := strings.CutPrefix(sh.Key, storePrefix(c, sh.Store)+"shards/")
		if !ok || !strings.HasSuffix(rest, ".seg") || strings.Contains(rest, "/") {
			return fault.Invalid(field+".key", "%q is not a shard of store %q (%sshards/<id>.seg)", sh.Key, sh.Store, storePrefix(c, sh.Store))
		}
	}
	return nil
}

// groups splits shards into groups of at most maxBytes each (a larger shard
// is a group of its own), in order.
func groups(shards []GroupShard, maxBytes int64) []ShardGroup {
	var out []ShardGroup
	var cur ShardGroup
	var size int64
	for _, sh := range shards {
		if len(cur.Shards) > 0 && size+sh.Size > maxBytes {
			out = append(out, cur)
			cur, size = ShardGroup{}, 0
		}
		cur.Shards = append(cur.Shards, sh)
		size += sh.Size
	}
	if len(cur.Shards) > 0 {
		out = append(out, cur)
	}
	return out
}

// ScoredChunk is one ranked chunk of a search, with its content.
type ScoredChunk struct {
	retrieval.Hit
	ChunkContent
}

// fanOut runs a search over shards as described above: one group in
// process, several in parallel through s.searcher, in two phases.
func (s *Service) fanOut(ctx context.Context, c tenant.Caller, shards []GroupShard, q GroupQuery) ([]ScoredChunk, error) {
	gs := groups(shards, s.groupBytes)
	if len(gs) == 0 {
		return nil, nil
	}
	searcher := s.searcher
	if len(gs) == 1 {
		searcher = s.LocalSearcher()
	}
	rq := q.query()
	if len(gs) > 1 && rq.Mode != retrieval.ModeVector {
		terms := retrieval.QueryTerms(q.Text)
		stats := make([]retrieval.Stats, len(gs))
		if err := each(ctx, len(gs), func(ctx context.Context, i int) (err error) {
			stats[i], err = searcher.Stats(ctx, c, gs[i], terms)
			return err
		}); err != nil {
			return nil, err
		}
		// DF is never null, even for a query of stop words alone: workers
		// may get the statistics as JSON, checked against a schema.
		total := retrieval.Stats{DF: map[string]int64{}}
		for _, st := range stats {
			total.Add(st)
		}
		q.Stats = &total
	}
	var (
		results []GroupResult
		err     error
	)
	if len(gs) > 1 && rq.Mode == retrieval.ModeHybrid && len(q.Vector) > 0 {
		results, err = hybridRounds(ctx, searcher, c, gs, q)
	} else {
		results, err = searchRound(ctx, searcher, c, gs, q)
	}
	if err != nil {
		return nil, err
	}
	lists := make([]retrieval.Lists, len(results))
	chunks := map[string]ChunkContent{}
	for i, r := range results {
		lists[i] = r.Lists
		maps.Copy(chunks, r.Chunks)
	}
	hits := retrieval.Combine(rq, lists...)
	out := make([]ScoredChunk, len(hits))
	for i, h := range hits {
		out[i] = ScoredChunk{Hit: h, ChunkContent: chunks[h.ChunkID]}
	}
	return out, nil
}

// searchRound runs q on every group.
func searchRound(ctx context.Context, searcher Searcher, c tenant.Caller, gs []ShardGroup, q GroupQuery) ([]GroupResult, error) {
	results := make([]GroupResult, len(gs))
	err := each(ctx, len(gs), func(ctx context.Context, i int) (err error) {
		results[i], err = searcher.Search(ctx, c, gs[i], q)
		return err
	})
	return results, err
}

// hybridRounds runs a hybrid q over several groups as one process would:
// BM25 everywhere, the vector query expanded from the merged top BM25 hits,
// then the vector search everywhere. It returns each group's two lists.
func hybridRounds(ctx context.Context, searcher Searcher, c tenant.Caller, gs []ShardGroup, q GroupQuery) ([]GroupResult, error) {
	rq := q.query()
	bq := q
	bq.Mode, bq.K = retrieval.ModeBM25, rq.Depth()
	results, err := searchRound(ctx, searcher, c, gs, bq)
	if err != nil {
		return nil, err
	}
	owner := map[string]int{} // chunk id -> the group whose list holds it
	parts := make([]retrieval.Lists, len(results))
	for i, r := range results {
		parts[i] = retrieval.Lists{BM25: r.Lists.BM25}
		for _, h := range r.Lists.BM25 {
			owner[h.ChunkID] = i
		}
	}
	top := retrieval.Combine(bq.query(), parts...)
	n := retrieval.DefaultFeedback
	if q.Tuning != nil && q.Tuning.Feedback != 0 {
		n = max(q.Tuning.Feedback, 0)
	}
	top = top[:min(n, len(top))]
	// Each top hit's vector comes from its group, one call per group: merged
	// hits keep the Segment and Index of the list they came from.
	byGroup := make([][]int, len(gs)) // group -> indexes into top
	for i, h := range top {
		g := owner[h.ChunkID]
		byGroup[g] = append(byGroup[g], i)
	}
	vecs := make([][]float32, len(top))
	if err := each(ctx, len(gs), func(ctx context.Context, g int) error {
		if len(byGroup[g]) == 0 {
			return nil
		}
		hits := make([]retrieval.Hit, len(byGroup[g]))
		for j, i := range byGroup[g] {
			hits[j] = top[i]
		}
		v, err := searcher.Vectors(ctx, c, gs[g], hits)
		if err != nil {
			return err
		}
		if len(v) != len(hits) {
			return fmt.Errorf("vector: %d vectors for %d hits", len(v), len(hits))
		}
		for j, i := range byGroup[g] {
			vecs[i] = v[j]
		}
		return nil
	}); err != nil {
		return nil, err
	}
	vq := q
	vq.Mode, vq.K, vq.Vector = retrieval.ModeVector, rq.Depth(), retrieval.ExpandVector(rq, vecs)
	vres, err := searchRound(ctx, searcher, c, gs, vq)
	if err != nil {
		return nil, err
	}
	for i := range results {
		results[i].Lists.Vector = vres[i].Lists.Vector
		maps.Copy(results[i].Chunks, vres[i].Chunks)
	}
	return results, nil
}

// each runs fn for 0..n-1 in parallel and returns the first error; the
// others are cancelled.
func each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if errs[i] = fn(ctx, i); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
		case !errors.Is(err, context.Canceled):
			return err // the cause, not one of the cancellations it set off
		case first == nil:
			first = err
		}
	}
	return first
}
