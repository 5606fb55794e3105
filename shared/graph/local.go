package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// LocalOptions configure [Graph.Local]. The zero value of a field means its
// default in [DefaultLocalOptions], except Depth, for which 0 is meaningful.
type LocalOptions struct {
	// Depth is graph_traversal_depth: how many relations from the matched
	// entities the walk may go (0: the matched entities and their chunks).
	Depth int
	// K is how many chunks the ranking lists.
	K int
	// Damping is the probability that the walk follows an edge rather than
	// restarting at the matched entities.
	Damping float64
	// Tolerance ends the power iteration when an iteration changes the
	// scores by less than this (L1).
	Tolerance float64
	// MaxIterations bounds the power iteration.
	MaxIterations int
	// MaxSeeds bounds the matched entities, the most specific kept.
	MaxSeeds int
	// MaxNodes bounds the entities the walk reaches; expansion stops at the
	// depth that would pass it.
	MaxNodes int
	// Embedder, when it is the one the graph's entity vectors come from,
	// also matches entities whose names are close in meaning to the
	// question ([MinSimilarity]).
	Embedder provider.Embedder
}

// DefaultLocalOptions are HippoRAG's choices (damping 0.85) with bounds on
// the walk: the error of the power iteration shrinks by the damping each
// step, so 100 iterations reach 1e-6 from any start (0.85^100 < 1e-7); 4,000
// entities bound one query's work (on SciFact's graph, 93k entities and 1.2M
// relations, depth 2 would otherwise reach most of it).
var DefaultLocalOptions = LocalOptions{
	Depth: 2, K: 100, Damping: 0.85, Tolerance: 1e-6, MaxIterations: 100, MaxSeeds: 16, MaxNodes: 4000,
}

// MaxDepth is the deepest graph_traversal_depth [Graph.Local] accepts.
const MaxDepth = 5

// MinSimilarity is the cosine similarity from which an entity's name matches
// a question by meaning; [MaxVectorSeeds] of the closest do.
const MinSimilarity = 0.5

// MaxVectorSeeds bounds the entities matched by meaning.
const MaxVectorSeeds = 8

// Seed is an entity matched to a question.
type Seed struct {
	Key, Name string
	// Weight is its share of the walk's restarts.
	Weight float64
	// By says how it matched: "terms" or "embedding".
	By string
}

// LocalResult is the graph's ranking of chunks for a question.
type LocalResult struct {
	// Hits rank chunks by Personalized PageRank, best first (Segment and
	// Index are -1: the graph knows chunks by id only).
	Hits  []retrieval.Hit
	Seeds []Seed
	// Depth is the traversal depth used; Entities how many entities the
	// walk reached; Iterations how many power iterations ran, and Converged
	// whether they met the tolerance.
	Depth, Entities, Iterations int
	Converged                   bool
}

func (o LocalOptions) withDefaults() LocalOptions {
	d := DefaultLocalOptions
	o.K = cmp.Or(max(o.K, 0), d.K)
	o.Damping = cmp.Or(o.Damping, d.Damping)
	o.Tolerance = cmp.Or(o.Tolerance, d.Tolerance)
	o.MaxIterations = cmp.Or(max(o.MaxIterations, 0), d.MaxIterations)
	o.MaxSeeds = cmp.Or(max(o.MaxSeeds, 0), d.MaxSeeds)
	o.MaxNodes = cmp.Or(max(o.MaxNodes, 0), d.MaxNodes)
	return o
}

// Local ranks g's chunks for question as HippoRAG does: the entities the
// question names are matched ([Graph.Match]), the graph is expanded from them
// to o.Depth relations, and a Personalized PageRank walk over that part of
// the entity-chunk graph, restarting at the matched entities in proportion
// to their specificity, scores the chunks it reaches. From an entity the
// walk goes half to its related entities (by relation weight) and half to
// the chunks mentioning it (by mentions); from a chunk, to its entities by
// mentions times specificity. The ranking is deterministic. A question that
// matches no entity gets no hits.
func (g *Graph) Local(ctx context.Context, question string, o LocalOptions) (LocalResult, error) {
	if o.Depth < 0 || o.Depth > MaxDepth {
		return LocalResult{}, fmt.Errorf("graph: graph_traversal_depth must be between 0 and %d, not %d", MaxDepth, o.Depth)
	}
	o = o.withDefaults()
	if !(o.Damping > 0 && o.Damping < 1) {
		return LocalResult{}, fmt.Errorf("graph: damping must be between 0 and 1, not %g", o.Damping)
	}
	seeds, err := g.Match(ctx, question, o.Embedder, o.MaxSeeds)
	if err != nil {
		return LocalResult{}, err
	}
	res := LocalResult{Seeds: seeds, Depth: o.Depth, Hits: []retrieval.Hit{}}
	if len(seeds) == 0 {
		return res, nil
	}
	w := g.walk(seeds, o)
	res.Entities = len(w.entities)
	res.Iterations, res.Converged = w.iterate(o)
	res.Hits = w.ranking(o.K)
	return res, ctx.Err()
}

// Match returns the entities question names, at most maxSeeds, weighted by
// specificity (their inverse chunk frequency in g) and normalised to sum to
// 1, heaviest first (ties by key). An entity matches by terms when every
// term of its key is one of the question's ([text.QueryTerms]); when emb is
// the embedder of g's entity vectors, up to [MaxVectorSeeds] entities whose
// names have a cosine similarity of at least [MinSimilarity] with the
// question match too, weighted also by similarity.
func (g *Graph) Match(ctx context.Context, question string, emb provider.Embedder, maxSeeds int) ([]Seed, error) {
	q := map[string]bool{}
	for _, t := range text.QueryTerms(question) {
		q[t] = true
	}
	weight := map[int32]float64{}
	by := map[int32]string{}
	for t := range q {
		for _, e := range g.byTerm[t] {
			if _, done := weight[e]; done {
				continue
			}
			all := true
			for _, kt := range strings.Fields(g.keys[e]) {
				all = all && q[kt]
			}
			if all {
				weight[e], by[e] = g.idf[e], "terms"
			}
		}
	}
	if emb != nil && g.embedder != "" && EmbedderName(emb) == g.embedder && emb.Dims() == g.dims {
		out, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{question}, Purpose: provider.ForQuery})
		if err != nil {
			return nil, fmt.Errorf("graph: embed question: %w", err)
		}
		if len(out.Vectors) != 1 || len(out.Vectors[0]) != g.dims {
			return nil, fmt.Errorf("graph: embed question: want one vector of %d dimensions", g.dims)
		}
		for _, m := range g.nearest(out.Vectors[0]) {
			if _, done := weight[m.e]; !done {
				weight[m.e], by[m.e] = g.idf[m.e]*m.sim, "embedding"
			}
		}
	}
	seeds := make([]Seed, 0, len(weight))
	for e, w := range weight {
		seeds = append(seeds, Seed{Key: g.keys[e], Name: g.names[e], Weight: w, By: by[e]})
	}
	slices.SortFunc(seeds, func(a, b Seed) int { return cmp.Or(cmp.Compare(b.Weight, a.Weight), strings.Compare(a.Key, b.Key)) })
	seeds = seeds[:min(len(seeds), max(maxSeeds, 0))]
	var sum float64
	for _, s := range seeds {
		sum += s.Weight
	}
	for i := range seeds {
		seeds[i].Weight /= sum
	}
	return seeds, nil
}

type match struct {
	e   int32
	sim float64
}

// nearest returns the entities closest to v, at least MinSimilarity, at
// most MaxVectorSeeds, closest first.
func (g *Graph) nearest(v []float32) []match {
	var out []match
	for e := range g.keys {
		u := g.vecs[e*g.dims:][:g.dims]
		var dot, nu float64
		for i, x := range u {
			dot += float64(x) * float64(v[i])
			nu += float64(x) * float64(x)
		}
		if nu == 0 {
			continue
		}
		if sim := dot / math.Sqrt(nu); sim >= MinSimilarity {
			out = append(out, match{int32(e), sim})
		}
	}
	slices.SortFunc(out, func(a, b match) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.e, b.e)) })
	return out[:min(len(out), MaxVectorSeeds)]
}

// walk is the part of the entity-chunk graph a query reaches: local node
// i < len(entities) is entity entities[i], node len(entities)+j is chunk
// chunks[j]; out-edges in compressed sparse rows with probabilities.
type walk struct {
	g        *Graph
	entities []int32
	chunks   []int32
	start    []int
	to       []int32
	p        []float64
	restart  []float64
	score    []float64
}

func (g *Graph) walk(seeds []Seed, o LocalOptions) *walk {
	w := &walk{g: g}
	local := map[int32]int32{}
	frontier := []int32{}
	for _, s := range seeds {
		e, _ := slices.BinarySearch(g.keys, s.Key)
		local[int32(e)] = int32(len(w.entities))
		w.entities = append(w.entities, int32(e))
		frontier = append(frontier, int32(e))
	}
	for depth := 0; depth < o.Depth && len(frontier) > 0; depth++ {
		var next []int32
		found := map[int32]bool{}
		for _, e := range frontier {
			for j := g.adjStart[e]; j < g.adjStart[e+1]; j++ {
				if _, ok := local[g.adjTo[j]]; !ok && !found[g.adjTo[j]] {
					found[g.adjTo[j]] = true
					next = append(next, g.adjTo[j])
				}
			}
		}
		if len(w.entities)+len(next) > o.MaxNodes {
			break
		}
		slices.Sort(next)
		for _, e := range next {
			local[e] = int32(len(w.entities))
			w.entities = append(w.entities, e)
		}
		frontier = next
	}
	chunkLocal := map[int32]int32{}
	for _, e := range w.entities {
		for j := g.linkStart[e]; j < g.linkStart[e+1]; j++ {
			if _, ok := chunkLocal[g.linkTo[j]]; !ok {
				chunkLocal[g.linkTo[j]] = int32(len(w.chunks))
				w.chunks = append(w.chunks, g.linkTo[j])
			}
		}
	}
	ne := len(w.entities)
	n := ne + len(w.chunks)
	w.start = make([]int, n+1)
	add := func(to int32, p float64) {
		w.to = append(w.to, to)
		w.p = append(w.p, p)
	}
	for i, e := range w.entities {
		var relW, linkW float64
		for j := g.adjStart[e]; j < g.adjStart[e+1]; j++ {
			if _, ok := local[g.adjTo[j]]; ok {
				relW += g.adjW[j]
			}
		}
		for j := g.linkStart[e]; j < g.linkStart[e+1]; j++ {
			linkW += g.linkN[j]
		}
		relShare, linkShare := 0.5, 0.5
		switch {
		case relW == 0 && linkW == 0:
			relShare, linkShare = 0, 0
		case relW == 0:
			relShare, linkShare = 0, 1
		case linkW == 0:
			relShare, linkShare = 1, 0
		}
		for j := g.adjStart[e]; j < g.adjStart[e+1]; j++ {
			if l, ok := local[g.adjTo[j]]; ok {
				add(l, relShare*g.adjW[j]/relW)
			}
		}
		for j := g.linkStart[e]; j < g.linkStart[e+1]; j++ {
			add(int32(ne)+chunkLocal[g.linkTo[j]], linkShare*g.linkN[j]/linkW)
		}
		w.start[i+1] = len(w.to)
	}
	for i, c := range w.chunks {
		var sum float64
		for j := g.revStart[c]; j < g.revStart[c+1]; j++ {
			if _, ok := local[g.revTo[j]]; ok {
				sum += g.revN[j] * g.idf[g.revTo[j]]
			}
		}
		for j := g.revStart[c]; j < g.revStart[c+1]; j++ {
			if l, ok := local[g.revTo[j]]; ok && sum > 0 {
				add(l, g.revN[j]*g.idf[g.revTo[j]]/sum)
			}
		}
		w.start[ne+i+1] = len(w.to)
	}
	w.restart = make([]float64, n)
	for i, s := range seeds {
		w.restart[i] = s.Weight
	}
	return w
}

// iterate runs the power iteration: score = (1-d)·restart + d·Pᵀ·score, the
// mass of nodes without out-edges returning to the restart distribution.
func (w *walk) iterate(o LocalOptions) (int, bool) {
	n := len(w.restart)
	w.score = slices.Clone(w.restart)
	next := make([]float64, n)
	d := o.Damping
	for it := 1; it <= o.MaxIterations; it++ {
		clear(next)
		var dangling float64
		for i := range n {
			s := w.score[i]
			if w.start[i] == w.start[i+1] {
				dangling += s
				continue
			}
			for j := w.start[i]; j < w.start[i+1]; j++ {
				next[w.to[j]] += s * w.p[j]
			}
		}
		var delta float64
		for i := range n {
			v := (1-d+d*dangling)*w.restart[i] + d*next[i]
			delta += math.Abs(v - w.score[i])
			next[i], w.score[i] = w.score[i], v
		}
		if delta < o.Tolerance {
			return it, true
		}
	}
	return o.MaxIterations, false
}

// ranking lists the walk's chunks by score, best first, ties by chunk id.
func (w *walk) ranking(k int) []retrieval.Hit {
	ne := len(w.entities)
	hits := make([]retrieval.Hit, 0, len(w.chunks))
	for i, c := range w.chunks {
		if s := w.score[ne+i]; s > 0 {
			hits = append(hits, retrieval.Hit{ChunkID: w.g.chunkIDs[c], DocID: w.g.chunkDocs[c], Score: s, Segment: -1, Index: -1})
		}
	}
	slices.SortFunc(hits, func(a, b retrieval.Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ChunkID, b.ChunkID))
	})
	return hits[:min(len(hits), k)]
}

// RRFConstant is the reciprocal rank fusion constant of [Fuse]: 60, as
// Cormack et al. and HippoRAG's hybrid baselines use.
const RRFConstant = 60

// Fuse combines the hybrid ranking and the graph's ([LocalResult.Hits]) by
// reciprocal rank fusion with constant [RRFConstant], the graph's ranks
// weighted by graphWeight against hybrid's 1 ([retrieval.FuseWeighted]),
// returning at most k hits, best first; each hit's Score is its rrf_score. A
// chunk the hybrid ranking holds keeps its Segment and Index; one only the
// graph found has -1 for both, and its text must be fetched by id.
func Fuse(k int, graphWeight float64, hybrid, graph []retrieval.Hit) []retrieval.Hit {
	return retrieval.FuseWeighted(k, RRFConstant, []float64{1, graphWeight}, hybrid, graph)
}
