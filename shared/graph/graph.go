package graph

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Graph is a store's entity graph: the union of its live documents' shards
// ([Build]). Entities are nodes, related by weighted edges, and linked to the
// chunks that mention them. A Graph is immutable and safe for concurrent use.
type Graph struct {
	keys, names []string
	contexts    []int // contexts mentioning each entity, summed over documents
	total       int   // contexts read, summed over documents
	idf         []float64

	chunkIDs, chunkDocs []string

	// Entity -> chunk links, chunk -> entity links, and entity adjacency, in
	// compressed sparse rows: row i spans start[i]:start[i+1].
	linkStart []int
	linkTo    []int32
	linkN     []float64
	revStart  []int
	revTo     []int32
	revN      []float64
	adjStart  []int
	adjTo     []int32
	adjW      []float64

	byTerm map[string][]int32 // term -> entities whose key holds it

	embedder string
	dims     int
	vecs     []float32
}

// MaxGraphEntities bounds the entities (before merging) a graph is built
// from, checked before anything is allocated: 4 million entities, about 1
// GiB of graph, is past what one search process holds with its shards.
const MaxGraphEntities = 4 << 20

// ErrTooLarge is [Build]'s error for shards past [MaxGraphEntities].
var ErrTooLarge = fmt.Errorf("graph: too large")

// Build returns the union of shards, one per live document: entities with
// the same key (after aliases, which the documents that define them vote
// for) merge, their links and relation counts add up, and each relation is
// weighted by its normalised pointwise mutual information over all the
// documents' contexts, (1+NPMI)/2, so it lies in (0, 1]: pairs that occur
// together more than chance weigh more. The result does not depend on the
// order of shards. Two shards of one document are an error.
func Build(shards []*Shard) (*Graph, error) {
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b *Shard) int { return strings.Compare(a.DocID, b.DocID) })
	entities, links := 0, 0
	for i, s := range shards {
		if i > 0 && s.DocID == shards[i-1].DocID {
			return nil, fmt.Errorf("graph: build: two shards of document %s", s.DocID)
		}
		entities += len(s.Entities)
		for _, e := range s.Entities {
			links += len(e.Links)
		}
	}
	if entities > MaxGraphEntities {
		return nil, fmt.Errorf("%w: %d entities, the most is %d", ErrTooLarge, entities, MaxGraphEntities)
	}
	resolve := resolver(shards)

	g := &Graph{}
	ids := map[string]int32{}
	for _, s := range shards {
		for _, e := range s.Entities {
			ids[resolve(e.Key)] = -1
		}
	}
	for k := range ids {
		g.keys = append(g.keys, k)
	}
	slices.Sort(g.keys)
	n := len(g.keys)
	for i, k := range g.keys {
		ids[k] = int32(i)
	}
	g.names = make([]string, n)
	g.contexts = make([]int, n)
	g.vecs, g.dims, g.embedder = nil, 0, commonEmbedder(shards)
	if g.embedder != "" {
		g.dims = shards[0].Dims
		g.vecs = make([]float32, n*g.dims)
	}
	// An entity's name is the one of its most frequent occurrence under its
	// own key (not an alias), ties by the first name in byte order.
	type rank struct {
		own      bool
		contexts int
	}
	named := make([]rank, n)
	type link struct {
		e, c int32
		n    float64
	}
	all := make([]link, 0, links)
	pairs := map[[2]int32]int{}
	for _, s := range shards {
		base := int32(len(g.chunkIDs))
		for _, c := range s.Chunks {
			g.chunkIDs = append(g.chunkIDs, c)
			g.chunkDocs = append(g.chunkDocs, s.DocID)
		}
		local := make([]int32, len(s.Entities))
		for i, e := range s.Entities {
			id := ids[resolve(e.Key)]
			local[i] = id
			g.contexts[id] += e.Contexts
			r, best := rank{e.Key == g.keys[id], e.Contexts}, named[id]
			if g.names[id] == "" || r.own && !best.own || r.own == best.own && (r.contexts > best.contexts || r.contexts == best.contexts && e.Name < g.names[id]) {
				g.names[id], named[id] = e.Name, r
			}
			if g.dims > 0 && e.Key == g.keys[id] && allZero(g.vecs[int(id)*g.dims:][:g.dims]) {
				copy(g.vecs[int(id)*g.dims:], s.Vectors[i*g.dims:][:g.dims])
			}
			for _, l := range e.Links {
				all = append(all, link{e: id, c: base + int32(l.Chunk), n: float64(l.Count)})
			}
		}
		for _, e := range s.Edges {
			a, b := local[e.A], local[e.B]
			if a != b {
				pairs[[2]int32{min(a, b), max(a, b)}] += e.Count
			}
		}
		g.total += s.Contexts
	}

	slices.SortFunc(all, func(x, y link) int { return cmp.Or(cmp.Compare(x.e, y.e), cmp.Compare(x.c, y.c)) })
	g.linkStart = make([]int, n+1)
	for _, l := range all {
		g.linkStart[l.e+1]++
		g.linkTo = append(g.linkTo, l.c)
		g.linkN = append(g.linkN, l.n)
	}
	prefix(g.linkStart)
	g.revStart = make([]int, len(g.chunkIDs)+1)
	slices.SortFunc(all, func(x, y link) int { return cmp.Or(cmp.Compare(x.c, y.c), cmp.Compare(x.e, y.e)) })
	for _, l := range all {
		g.revStart[l.c+1]++
		g.revTo = append(g.revTo, l.e)
		g.revN = append(g.revN, l.n)
	}
	prefix(g.revStart)

	g.idf = make([]float64, n)
	for i := range n {
		df := 0
		for j := g.linkStart[i]; j < g.linkStart[i+1]; j++ {
			if j == g.linkStart[i] || g.linkTo[j] != g.linkTo[j-1] {
				df++
			}
		}
		g.idf[i] = math.Log(1 + float64(len(g.chunkIDs))/float64(max(df, 1)))
	}
	g.weighEdges(pairs)
	g.byTerm = map[string][]int32{}
	for i, k := range g.keys {
		for _, t := range distinctFields(k) {
			g.byTerm[t] = append(g.byTerm[t], int32(i))
		}
	}
	return g, nil
}

// resolver returns the function that maps an entity key to the key it is an
// alias of: the expansion most documents give it (ties: the first key),
// unless that expansion is an alias itself.
func resolver(shards []*Shard) func(string) string {
	votes := map[string]map[string]int{}
	for _, s := range shards {
		for _, a := range s.Aliases {
			if votes[a.Short] == nil {
				votes[a.Short] = map[string]int{}
			}
			votes[a.Short][a.Long]++
		}
	}
	to := map[string]string{}
	for short, longs := range votes {
		best, n := "", 0
		for long, v := range longs {
			if v > n || v == n && long < best {
				best, n = long, v
			}
		}
		to[short] = best
	}
	return func(k string) string {
		if long, ok := to[k]; ok {
			if _, chained := to[long]; !chained {
				return long
			}
		}
		return k
	}
}

// commonEmbedder is the embedder every shard's vectors come from, or "" when
// some shard has none or another.
func commonEmbedder(shards []*Shard) string {
	if len(shards) == 0 || shards[0].Embedder == "" {
		return ""
	}
	for _, s := range shards {
		if s.Embedder != shards[0].Embedder || s.Dims != shards[0].Dims {
			return ""
		}
	}
	return shards[0].Embedder
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func prefix(start []int) {
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
}

func distinctFields(s string) []string {
	fs := strings.Fields(s)
	slices.Sort(fs)
	return slices.Compact(fs)
}

// weighEdges lays out the symmetric adjacency with NPMI weights.
func (g *Graph) weighEdges(pairs map[[2]int32]int) {
	type half struct {
		from, to int32
		w        float64
	}
	halves := make([]half, 0, 2*len(pairs))
	n := float64(max(g.total, 1))
	for p, c := range pairs {
		pab := min(float64(c)/n, 1)
		pa, pb := float64(max(g.contexts[p[0]], c))/n, float64(max(g.contexts[p[1]], c))/n
		npmi := 1.0
		if pab < 1 {
			npmi = max(-1, min(1, math.Log(pab/(pa*pb))/-math.Log(pab)))
		}
		w := (1 + npmi) / 2
		if w <= 0 {
			w = math.SmallestNonzeroFloat32
		}
		halves = append(halves, half{p[0], p[1], w}, half{p[1], p[0], w})
	}
	slices.SortFunc(halves, func(x, y half) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to)) })
	g.adjStart = make([]int, len(g.keys)+1)
	g.adjTo = make([]int32, len(halves))
	g.adjW = make([]float64, len(halves))
	for i, h := range halves {
		g.adjStart[h.from+1]++
		g.adjTo[i], g.adjW[i] = h.to, h.w
	}
	prefix(g.adjStart)
}

// Entities returns how many entities g has.
func (g *Graph) Entities() int { return len(g.keys) }

// Edges returns how many relations g has.
func (g *Graph) Edges() int { return len(g.adjTo) / 2 }

// Chunks returns how many chunks g links entities to.
func (g *Graph) Chunks() int { return len(g.chunkIDs) }

// Embedder names the embedder of g's entity vectors ([EmbedderName]), "" if
// it has none.
func (g *Graph) Embedder() string { return g.embedder }

// Index returns the index of the entity keyed key ([Key]) in g, by which
// [Communities] name it, and false if g has none.
func (g *Graph) Index(key string) (int, bool) { return slices.BinarySearch(g.keys, key) }

// Key returns the key of g's entity i.
func (g *Graph) Key(i int) string { return g.keys[i] }

// EntityInfo describes one entity of a graph.
type EntityInfo struct {
	Key, Name string
	// Chunks are the ids of the chunks that mention it, in the graph's order.
	Chunks []string
	// Related are the keys of the entities related to it with their weights.
	Related map[string]float64
}

// Entity returns what g knows of the entity keyed key ([Key]), and false if
// it has none.
func (g *Graph) Entity(key string) (EntityInfo, bool) {
	i, ok := slices.BinarySearch(g.keys, key)
	if !ok {
		return EntityInfo{}, false
	}
	info := EntityInfo{Key: key, Name: g.names[i], Related: map[string]float64{}}
	for j := g.linkStart[i]; j < g.linkStart[i+1]; j++ {
		info.Chunks = append(info.Chunks, g.chunkIDs[g.linkTo[j]])
	}
	for j := g.adjStart[i]; j < g.adjStart[i+1]; j++ {
		info.Related[g.keys[g.adjTo[j]]] = g.adjW[j]
	}
	return info, true
}
