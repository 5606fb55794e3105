package colbert

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
)

// Defaults and bounds of [IndexOptions] and [SearchOptions].
const (
	// DefaultMaxBytes bounds an index's memory when IndexOptions names none:
	// 8 million tokens at 128 dimensions and 2 bits.
	DefaultMaxBytes = 256 << 20
	// DefaultK is how many hits a search returns.
	DefaultK = 10
	// DefaultProbe is how many centroids each query token selects (PLAID's ncells).
	DefaultProbe = 4
	// DefaultCandidates is how many chunks, ranked by their centroids alone,
	// are scored exactly (PLAID's ndocs).
	DefaultCandidates = 256
	// MaxK bounds K, Probe·query tokens and Candidates.
	MaxK = 4096
)

// IndexOptions configure an [Index]. A nil *IndexOptions is the zero value.
type IndexOptions struct {
	// MaxBytes bounds the memory the index holds ([Index.Bytes]); Add refuses
	// a shard past it. If zero, [DefaultMaxBytes].
	MaxBytes int64
}

// Index holds compressed token vectors of chunks in memory and answers
// late-interaction searches over them: candidates by centroid (PLAID,
// Santhanam et al., 2022) or given, then exact MaxSim (ColBERT, Khattab and
// Zaharia, 2020) over decompressed vectors. Add must not run concurrently
// with anything else; searches may run concurrently with each other.
type Index struct {
	c        *Codec
	ids      []string
	docs     []Tokens
	byID     map[string]int
	lists    [][]int32 // centroid -> chunks holding it, each once, increasing
	tokens   int64
	bytes    int64
	maxBytes int64
}

// NewIndex returns an empty index of chunks compressed with c.
func NewIndex(c *Codec, opts *IndexOptions) *Index {
	x := &Index{c: c, byID: map[string]int{}, lists: make([][]int32, c.Centroids()), maxBytes: DefaultMaxBytes}
	if opts != nil && opts.MaxBytes > 0 {
		x.maxBytes = opts.MaxBytes
	}
	x.bytes = int64(c.Centroids()) * int64(5*c.dims+4) // float32 centroids, their int8 copies and scales
	return x
}

// chunkOverhead approximates what a chunk costs beside its token data: its
// id's string and map entry, its slices, its posting entries.
const chunkOverhead = 128

// Add adds a shard's chunks, accounting their memory first: a shard that
// would take the index past its bound is refused whole, with a
// [fault.QuotaExceeded] error, and nothing is added. A chunk id already in
// the index is refused too.
func (x *Index) Add(s Shard) error {
	var need int64
	for i, t := range s.Tokens {
		if _, dup := x.byID[s.IDs[i]]; dup {
			return fmt.Errorf("colbert: add shard: chunk %s is already in the index", s.IDs[i])
		}
		need += int64(len(s.IDs[i]) + t.Len()*(x.c.TokenBytes()+4) + chunkOverhead)
	}
	if x.bytes+need > x.maxBytes {
		return fault.QuotaExceeded("colbert: add shard: the index would hold %d bytes, more than its %d", x.bytes+need, x.maxBytes)
	}
	for i, t := range s.Tokens {
		d := int32(len(x.ids))
		x.ids = append(x.ids, s.IDs[i])
		x.docs = append(x.docs, t)
		x.byID[s.IDs[i]] = int(d)
		for _, a := range t.Codes {
			if l := x.lists[a]; len(l) == 0 || l[len(l)-1] != d {
				x.lists[a] = append(l, d)
			}
		}
		x.tokens += int64(t.Len())
	}
	x.bytes += need
	return nil
}

// Len returns the number of chunks.
func (x *Index) Len() int { return len(x.ids) }

// Tokens returns the number of token vectors.
func (x *Index) Tokens() int64 { return x.tokens }

// Bytes returns the memory the index accounts for: centroids, token data,
// posting lists and per-chunk bookkeeping.
func (x *Index) Bytes() int64 { return x.bytes }

// CompressionRatio returns the size of the index's token vectors as float32
// over their compressed size (centroid ids and residuals); 0 when empty.
func (x *Index) CompressionRatio() float64 {
	if x.tokens == 0 {
		return 0
	}
	return float64(x.c.dims*4) / float64(x.c.TokenBytes())
}

// SearchOptions configure [Index.Search] and [Index.Rerank]. A nil
// *SearchOptions is the zero value.
type SearchOptions struct {
	// K is how many hits to return. If zero, [DefaultK].
	K int
	// Probe is how many nearest centroids of each query token select
	// candidates (Search only). If zero, [DefaultProbe].
	Probe int
	// Candidates is how many chunks, ranked by centroid interaction, are
	// scored exactly (Search only). If zero, [DefaultCandidates].
	Candidates int
	// Threshold is seed 002's interaction_threshold: a query token whose best
	// similarity in a chunk is below it adds nothing to the chunk's score.
	// If zero, every query token adds its best similarity (plain MaxSim).
	Threshold float32
}

func (o *SearchOptions) withDefaults() (SearchOptions, error) {
	var v SearchOptions
	if o != nil {
		v = *o
	}
	v.K, v.Probe, v.Candidates = cmpOr(v.K, DefaultK), cmpOr(v.Probe, DefaultProbe), cmpOr(v.Candidates, DefaultCandidates)
	switch {
	case v.K > MaxK:
		return v, fault.Invalid("top_k", "top_k %d is above %d", v.K, MaxK)
	case v.Probe > MaxK || v.Candidates > MaxK:
		return v, fault.Invalid("parameters", "probe %d or candidates %d is above %d", v.Probe, v.Candidates, MaxK)
	case v.Threshold < 0 || v.Threshold > 1 || math.IsNaN(float64(v.Threshold)):
		return v, fault.Invalid("interaction_threshold", "interaction_threshold %v is outside 0..1", v.Threshold)
	}
	return v, nil
}

// Hit is one chunk found, with its MaxSim score.
type Hit struct {
	ID    string
	Score float32
}

// Result is a search's answer: Hits, best first (ties by id), and what it
// cost: Candidates chunks scored exactly, TokenInteractions query-token ×
// chunk-token similarities computed for them (seed 002's token_interactions).
type Result struct {
	Hits              []Hit
	Candidates        int
	TokenInteractions int64
}

// checkQuery refuses a query of no tokens, too many, or another dimension count.
func (x *Index) checkQuery(query [][]float32) error {
	if len(query) == 0 || len(query) > multivector.MaxQueryTokens {
		return fault.Invalid("query", "the query has %d tokens: want 1..%d", len(query), multivector.MaxQueryTokens)
	}
	for i, q := range query {
		if len(q) != x.c.dims {
			return fault.Invalid("query", "query token %d has %d dimensions, the index %d", i, len(q), x.c.dims)
		}
	}
	return nil
}

// Search returns the chunks best matching query (token vectors of the
// index's embedder and dimensions). Each query token selects the chunks
// holding one of its Probe nearest centroids; those are ranked by centroid
// interaction (MaxSim with each token replaced by its centroid), and the
// best Candidates are scored by exact MaxSim over their decompressed
// vectors. Beside the index it holds query tokens × centroids similarities
// (at most 32 × 2,048 × 4 bytes), one bit per chunk, and one decompressed
// chunk (at most 512 × dims × 4 bytes). It checks ctx every 64 chunks.
func (x *Index) Search(ctx context.Context, query [][]float32, opts *SearchOptions) (Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := x.checkQuery(query); err != nil {
		return Result{}, err
	}
	k := x.c.Centroids()
	sims := make([]float32, len(query)*k)
	seen := make([]uint64, (len(x.ids)+63)/64)
	var cands []int32
	order := make([]int, k)
	for qi, q := range query {
		row := sims[qi*k : (qi+1)*k]
		for a := range k {
			row[a] = dot(q, x.c.centroid(a))
			order[a] = a
		}
		probe := min(o.Probe, k)
		slices.SortFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(row[b], row[a]), cmp.Compare(a, b)) })
		for _, a := range order[:probe] {
			for _, d := range x.lists[a] {
				if seen[d/64]&(1<<(d%64)) == 0 {
					seen[d/64] |= 1 << (d % 64)
					cands = append(cands, d)
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("colbert: search: %w", err)
	}
	if len(cands) > o.Candidates {
		approx := make([]float32, len(x.ids))
		for i, d := range cands {
			if i%64 == 0 && ctx.Err() != nil {
				return Result{}, fmt.Errorf("colbert: search: %w", ctx.Err())
			}
			approx[d] = x.centroidScore(sims, len(query), x.docs[d].Codes, o.Threshold)
		}
		slices.SortFunc(cands, func(a, b int32) int { return cmp.Or(cmp.Compare(approx[b], approx[a]), cmp.Compare(a, b)) })
		cands = cands[:o.Candidates]
	}
	return x.score(ctx, query, cands, o)
}

// centroidScore is MaxSim with each chunk token replaced by its centroid,
// read from sims (query tokens × centroids).
func (x *Index) centroidScore(sims []float32, nq int, codes []uint16, threshold float32) float32 {
	k := x.c.Centroids()
	var total float32
	for qi := range nq {
		row := sims[qi*k : (qi+1)*k]
		best := float32(math.Inf(-1))
		for _, a := range codes {
			best = max(best, row[a])
		}
		total += clip(best, threshold)
	}
	return total
}

// clip returns a query token's contribution to a score: its best similarity,
// or nothing if none, or below a positive threshold.
func clip(best, threshold float32) float32 {
	if math.IsInf(float64(best), -1) || (threshold > 0 && best < threshold) {
		return 0
	}
	return best
}

// Rerank scores the chunks ids by exact MaxSim with query and returns the
// best K: late interaction over candidates another retriever found (the
// hybrid top-k). Ids the index does not hold are skipped. It holds one
// decompressed chunk beside the index and checks ctx every 64 chunks.
func (x *Index) Rerank(ctx context.Context, query [][]float32, ids []string, opts *SearchOptions) (Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := x.checkQuery(query); err != nil {
		return Result{}, err
	}
	cands := make([]int32, 0, len(ids))
	for _, id := range ids {
		if d, ok := x.byID[id]; ok {
			cands = append(cands, int32(d))
		}
	}
	return x.score(ctx, query, cands, o)
}

// score computes exact MaxSim of query with each candidate and keeps the best K.
func (x *Index) score(ctx context.Context, query [][]float32, cands []int32, o SearchOptions) (Result, error) {
	res := Result{Hits: make([]Hit, 0, len(cands)), Candidates: len(cands)}
	buf := make([]float32, 0, multivector.MaxDocumentTokens*x.c.dims)
	for i, d := range cands {
		if i%64 == 0 && ctx.Err() != nil {
			return Result{}, fmt.Errorf("colbert: search: %w", ctx.Err())
		}
		buf = x.c.Decompress(buf[:0], x.docs[d])
		res.Hits = append(res.Hits, Hit{ID: x.ids[d], Score: maxSim(query, buf, x.c.dims, o.Threshold)})
		res.TokenInteractions += int64(len(query) * x.docs[d].Len())
	}
	slices.SortFunc(res.Hits, func(a, b Hit) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) })
	res.Hits = res.Hits[:min(len(res.Hits), o.K)]
	return res, nil
}

// maxSim returns Σ over query tokens of the best dot product with a row of
// doc (rows of dims values), each clipped by threshold.
func maxSim(query [][]float32, doc []float32, dims int, threshold float32) float32 {
	var total float32
	for _, q := range query {
		best := float32(math.Inf(-1))
		for r := 0; r+dims <= len(doc); r += dims {
			best = max(best, dot(q, doc[r:r+dims]))
		}
		total += clip(best, threshold)
	}
	return total
}

// MaxSim returns the late-interaction score of a chunk's token vectors for a
// query's: the sum over query tokens of the best dot product with any chunk
// token (ColBERT's relevance score). It is what [Index.Rerank] computes over
// decompressed vectors, here over the originals.
func MaxSim(query, doc [][]float32) float32 {
	var total float32
	for _, q := range query {
		best := float32(math.Inf(-1))
		for _, d := range doc {
			best = max(best, dot(q, d))
		}
		total += clip(best, 0)
	}
	return total
}
