package vector

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Fan-out. A search runs as a coordinator and workers. The coordinator
// splits the shards to search into groups of at most [Options.GroupBytes]
// (what one worker can hold in memory), then, when there is more than one
// group, runs two phases:
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
// every shard would return. With one group, phase 1 is skipped.
//
// [LocalSearcher], the workers of a single process (one goroutine per group,
// all sharing the warm cache), is what runs today. On AWS a store too large
// for one function's memory would use a Searcher that invokes an internal
// search function per group with the same [ShardGroup] and [GroupQuery] as
// JSON, each warm instance keeping its group's shards cached.

// DefaultGroupBytes bounds the encoded shard bytes of one group when
// [Options.GroupBytes] is zero: decoded, about twice that, which fits a
// 2 GB function with room for the rest.
const DefaultGroupBytes = 768 << 20

// GroupShard is one shard of a [ShardGroup].
type GroupShard struct {
	Store  string `json:"store"`
	Key    string `json:"key"`
	ETag   string `json:"etag"`
	Size   int64  `json:"size"`
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
func (l *LocalSearcher) Search(ctx context.Context, _ tenant.Caller, g ShardGroup, q GroupQuery) (GroupResult, error) {
	segs, err := l.segments(ctx, g)
	if err != nil {
		return GroupResult{}, err
	}
	lists, err := retrieval.SearchLists(segs, q.query(), q.Stats)
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

// fanOut runs a search over shards as described above: the groups in
// parallel through searcher, two phases when there are several.
func fanOut(ctx context.Context, searcher Searcher, c tenant.Caller, shards []GroupShard, maxBytes int64, q GroupQuery) ([]ScoredChunk, error) {
	gs := groups(shards, maxBytes)
	if len(gs) == 0 {
		return nil, nil
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
		var total retrieval.Stats
		for _, st := range stats {
			total.Add(st)
		}
		q.Stats = &total
	}
	results := make([]GroupResult, len(gs))
	if err := each(ctx, len(gs), func(ctx context.Context, i int) (err error) {
		results[i], err = searcher.Search(ctx, c, gs[i], q)
		return err
	}); err != nil {
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
