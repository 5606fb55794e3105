package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// Chunk is one passage of a document, as the vector store keeps it.
type Chunk struct {
	ID   string
	Text string
}

// Document is what a shard is built from: a document's id and its chunks.
type Document struct {
	ID     string
	Chunks []Chunk
}

// Context is one span in which an extractor found entities together: a
// sentence for [Heuristic], a chunk for [Prompted].
type Context struct {
	// Chunk indexes the document's chunks.
	Chunk int
	// Entities are surface names, as the text writes them.
	Entities []string
	// Relations are pairs of indexes into Entities that the context relates.
	Relations [][2]int
}

// Extraction is what an [Extractor] found in a document.
type Extraction struct {
	Contexts []Context
	// Aliases maps a short form to the name it abbreviates ("PPR" to
	// "Personalized PageRank"), as the document defines it.
	Aliases map[string]string
	// Fallbacks counts the chunks a [Prompted] extractor's fallback
	// extracted instead of its generator.
	Fallbacks int
}

// Extractor finds entities and their relations in a document's chunks.
// Implementations are safe for concurrent use and deterministic for a given
// model: the same document gives the same extraction.
type Extractor interface {
	// Name names the method, recorded in every shard ("heuristic-v1",
	// "openai/gpt-4o-mini").
	Name() string
	Extract(ctx context.Context, doc Document) (Extraction, error)
}

// Limits bound what a document's shard holds, whatever its extractor found.
// The zero value of a field means its default in [DefaultLimits].
type Limits struct {
	// MaxEntities is the most entities a document keeps: the most frequent
	// (contexts mentioning them), ties by key.
	MaxEntities int
	// MaxEntitiesPerChunk is the most entities one chunk links to: those it
	// mentions most often, ties by specificity ([text.IDF]) and key.
	MaxEntitiesPerChunk int
	// MaxEdgesPerEntity is how many of its strongest relations (contexts
	// relating the pair) an entity keeps; an edge stays when either of its
	// entities keeps it.
	MaxEdgesPerEntity int
	// MaxEdges is the most edges a document keeps, the strongest.
	MaxEdges int
}

// DefaultLimits are the bounds of a shard: a 20,000-chunk document (the
// vector store's largest) of dense technical text keeps its 4,096 most
// frequent entities, at most ~64 KiB of keys and names each, so a shard
// stays in the low megabytes.
var DefaultLimits = Limits{MaxEntities: 4096, MaxEntitiesPerChunk: 48, MaxEdgesPerEntity: 24, MaxEdges: 32768}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	return Limits{
		MaxEntities:         cmp.Or(max(l.MaxEntities, 0), d.MaxEntities),
		MaxEntitiesPerChunk: cmp.Or(max(l.MaxEntitiesPerChunk, 0), d.MaxEntitiesPerChunk),
		MaxEdgesPerEntity:   cmp.Or(max(l.MaxEdgesPerEntity, 0), d.MaxEdgesPerEntity),
		MaxEdges:            cmp.Or(max(l.MaxEdges, 0), d.MaxEdges),
	}
}

// Bounds of what an extraction may hold before it is counted: past them a
// document is refused rather than counted in memory it would not fit.
const (
	// MaxNameBytes bounds an entity's surface name; longer ones are dropped.
	MaxNameBytes = 120
	// MaxKeyTerms bounds the terms of an entity's key; longer ones are dropped.
	MaxKeyTerms = 6
	// maxDistinct is how many distinct keys, and pairs, per kept entity and
	// edge a document may propose: more are ignored (the earliest are
	// counted), so counting a hostile extraction stays bounded.
	maxDistinct = 4
)

// ErrBadExtraction is wrapped by errors for an extraction that breaks its
// contract (a context naming a chunk the document lacks).
var ErrBadExtraction = errors.New("bad extraction")

// Key returns the normalised form of an entity name under which mentions
// merge: its index terms ([text.Terms]: lowercased, stemmed, stop words
// dropped) joined by spaces, so "Knowledge Graphs" and "knowledge graph" are
// one entity. It is "" for a name without terms.
func Key(name string) string { return strings.Join(text.Terms(name), " ") }

// NewShard extracts doc's entities with ex, counts them, bounds the result by
// lim and, when emb is not nil, embeds each entity's name, so questions can
// match entities by meaning. The shard is deterministic: the same document,
// extractor, embedder and limits give the same bytes.
func NewShard(ctx context.Context, doc Document, ex Extractor, emb provider.Embedder, lim Limits) (*Shard, error) {
	if doc.ID == "" {
		return nil, fmt.Errorf("graph: new shard: the document id is empty")
	}
	x, err := ex.Extract(ctx, doc)
	if err != nil {
		return nil, fmt.Errorf("graph: extract %s: %w", doc.ID, err)
	}
	s, err := count(doc, ex.Name(), x, lim.withDefaults())
	if err != nil {
		return nil, err
	}
	if emb != nil {
		if err := s.embed(ctx, emb); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// tally is one entity while a document is counted.
type tally struct {
	key      string
	names    map[string]int
	contexts int
	links    map[int]int // chunk -> mentions
	idf      float64     // mean text.IDF of the key's terms
}

// count turns an extraction into a bounded shard.
func count(doc Document, extractor string, x Extraction, lim Limits) (*Shard, error) {
	aliases := map[string]string{}   // short key -> long key
	longNames := map[string]string{} // short key -> long name
	for short, long := range x.Aliases {
		ks, kl := Key(short), Key(long)
		if ks != "" && kl != "" && ks != kl && len(short) <= MaxNameBytes && len(long) <= MaxNameBytes {
			aliases[ks], longNames[ks] = kl, strings.Join(strings.Fields(long), " ")
		}
	}
	maxKeys, maxPairs := maxDistinct*lim.MaxEntities, maxDistinct*lim.MaxEdges
	tallies := map[string]*tally{}
	pairs := map[[2]string]int{}
	for ci, c := range x.Contexts {
		if c.Chunk < 0 || c.Chunk >= len(doc.Chunks) {
			return nil, fmt.Errorf("graph: extract %s: %w: context %d names chunk %d of %d", doc.ID, ErrBadExtraction, ci, c.Chunk, len(doc.Chunks))
		}
		keys := make([]string, len(c.Entities))
		seen := map[string]bool{}
		for i, name := range c.Entities {
			name = strings.Join(strings.Fields(name), " ")
			if name == "" || len(name) > MaxNameBytes {
				continue
			}
			terms := text.Terms(name)
			if len(terms) == 0 || len(terms) > MaxKeyTerms {
				continue
			}
			k := strings.Join(terms, " ")
			if long, ok := aliases[k]; ok {
				k, name = long, longNames[k] // the name it abbreviates is the entity's name
			}
			t := tallies[k]
			if t == nil {
				if len(tallies) >= maxKeys {
					continue
				}
				t = &tally{key: k, names: map[string]int{}, links: map[int]int{}, idf: meanIDF(strings.Fields(k))}
				tallies[k] = t
			}
			keys[i] = k
			t.names[name]++
			t.links[c.Chunk]++
			if !seen[k] {
				seen[k] = true
				t.contexts++
			}
		}
		related := map[[2]string]bool{}
		for _, r := range c.Relations {
			if r[0] < 0 || r[1] < 0 || r[0] >= len(keys) || r[1] >= len(keys) {
				return nil, fmt.Errorf("graph: extract %s: %w: context %d relates entity %v of %d", doc.ID, ErrBadExtraction, ci, r, len(keys))
			}
			a, b := keys[r[0]], keys[r[1]]
			if a == "" || b == "" || a == b {
				continue
			}
			p := [2]string{min(a, b), max(a, b)}
			if related[p] {
				continue
			}
			related[p] = true
			if _, ok := pairs[p]; ok || len(pairs) < maxPairs {
				pairs[p]++
			}
		}
	}
	s := bound(doc, extractor, len(x.Contexts), tallies, pairs, aliases, lim)
	s.Fallbacks = max(x.Fallbacks, 0)
	return s, nil
}

func meanIDF(terms []string) float64 {
	var s float64
	for _, t := range terms {
		s += text.IDF(t)
	}
	return s / float64(max(len(terms), 1))
}

// bound keeps what lim allows of the counted entities and pairs and lays
// them out as a shard.
func bound(doc Document, extractor string, contexts int, tallies map[string]*tally, pairs map[[2]string]int, aliases map[string]string, lim Limits) *Shard {
	// Each chunk keeps its most mentioned entities.
	perChunk := map[int][]*tally{}
	for _, t := range tallies {
		for c := range t.links {
			perChunk[c] = append(perChunk[c], t)
		}
	}
	for c, ts := range perChunk {
		if len(ts) <= lim.MaxEntitiesPerChunk {
			continue
		}
		slices.SortFunc(ts, func(a, b *tally) int {
			return cmp.Or(cmp.Compare(b.links[c], a.links[c]), cmp.Compare(b.idf, a.idf), strings.Compare(a.key, b.key))
		})
		for _, t := range ts[lim.MaxEntitiesPerChunk:] {
			delete(t.links, c)
		}
	}
	all := make([]*tally, 0, len(tallies))
	for _, t := range tallies {
		if len(t.links) > 0 {
			all = append(all, t)
		}
	}
	slices.SortFunc(all, func(a, b *tally) int {
		return cmp.Or(cmp.Compare(b.contexts, a.contexts), strings.Compare(a.key, b.key))
	})
	all = all[:min(len(all), lim.MaxEntities)]
	slices.SortFunc(all, func(a, b *tally) int { return strings.Compare(a.key, b.key) })

	s := &Shard{DocID: doc.ID, Extractor: extractor, Contexts: contexts}
	index := make(map[string]int, len(all))
	chunkUsed := make([]bool, len(doc.Chunks))
	for i, t := range all {
		index[t.key] = i
		for c := range t.links {
			chunkUsed[c] = true
		}
	}
	chunkIndex := make([]int, len(doc.Chunks))
	for c, used := range chunkUsed {
		chunkIndex[c] = -1
		if used {
			chunkIndex[c] = len(s.Chunks)
			s.Chunks = append(s.Chunks, doc.Chunks[c].ID)
		}
	}
	for _, t := range all {
		e := Entity{Key: t.key, Name: bestName(t), Contexts: t.contexts}
		for c, n := range t.links {
			e.Links = append(e.Links, Link{Chunk: chunkIndex[c], Count: n})
		}
		slices.SortFunc(e.Links, func(a, b Link) int { return cmp.Compare(a.Chunk, b.Chunk) })
		s.Entities = append(s.Entities, e)
	}
	s.Edges = boundEdges(pairs, index, lim)
	for short, long := range aliases {
		if _, ok := index[long]; ok {
			s.Aliases = append(s.Aliases, Alias{Short: short, Long: long})
		}
	}
	slices.SortFunc(s.Aliases, func(a, b Alias) int { return strings.Compare(a.Short, b.Short) })
	return s
}

// bestName is the name an entity is written with most often; of equally
// frequent ones, the first in byte order (capitalised before lowercase).
func bestName(t *tally) string {
	best, n := "", 0
	for name, c := range t.names {
		if c > n || c == n && name < best {
			best, n = name, c
		}
	}
	return best
}

// boundEdges keeps each entity's strongest edges, then the strongest overall.
func boundEdges(pairs map[[2]string]int, index map[string]int, lim Limits) []Edge {
	var edges []Edge
	for p, n := range pairs {
		a, okA := index[p[0]]
		b, okB := index[p[1]]
		if okA && okB {
			edges = append(edges, Edge{A: min(a, b), B: max(a, b), Count: n})
		}
	}
	stronger := func(x, y Edge) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	}
	slices.SortFunc(edges, stronger)
	kept := make([]int, len(index))
	out := edges[:0]
	for _, e := range edges {
		// Sorted strongest first, so an entity's first edges are its strongest.
		keepA, keepB := kept[e.A] < lim.MaxEdgesPerEntity, kept[e.B] < lim.MaxEdgesPerEntity
		if keepA || keepB {
			kept[e.A]++
			kept[e.B]++
			out = append(out, e)
		}
	}
	out = out[:min(len(out), lim.MaxEdges)]
	slices.SortFunc(out, func(x, y Edge) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return out
}
