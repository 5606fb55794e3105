// Package toolsearch finds tools by what they do, for hosts that cap how
// many tools they list: BM25 over each tool's name, title and description
// (analysed by package text, as the vector stores' BM25 is), fused by
// reciprocal rank with the cosine similarity of their embeddings when an
// embedder is given. The gateway searches the tools a caller may call and
// nothing else; this package knows nothing of who may call what.
//
//	s := toolsearch.New(nil) // BM25 only
//	hits, err := s.Search(ctx, "add a message to a conversation", docs, 5)
//	// docs[hits[0].Index] is memory_add_message's
package toolsearch

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// MaxK bounds how many tools one search returns.
const MaxK = 20

// MaxQueryBytes bounds a query.
const MaxQueryBytes = 1000

// Doc is what a tool is found by.
type Doc struct {
	Name, Title, Description string
}

// text returns what d is indexed and embedded as: its name's words (its
// underscores, hyphens and dots, which the analyser keeps inside a token,
// as spaces), its title and its description. Names and titles say most of
// what a tool does in few words, so they count twice.
func (d Doc) text() string {
	name := nameWords.Replace(d.Name)
	return strings.Join([]string{name, name, d.Title, d.Title, d.Description}, "\n")
}

var nameWords = strings.NewReplacer("_", " ", "-", " ", ".", " ")

// Hit is a tool found: its index in the docs searched and its score (BM25,
// or with embeddings the reciprocal rank fusion of both rankings).
type Hit struct {
	Index int
	Score float64
}

// BM25's parameters, those of the vector stores' BM25 (package retrieval).
const (
	k1 = 1.1
	b  = 0.4
)

// rrfK is the rank offset of reciprocal rank fusion (Cormack et al.'s 60).
const rrfK = 60

// maxCached bounds the embeddings of tools kept between searches.
const maxCached = 4096

// Searcher searches tools. It is safe for concurrent use.
type Searcher struct {
	embedder provider.Embedder
	mu       sync.Mutex
	vectors  map[Doc][]float32
	analysed map[Doc]analysed
}

// analysed is a text's terms: how often each occurs, and how many in all.
type analysed struct {
	tf     map[string]int
	length int
}

// New returns a Searcher that embeds with e, or searches by BM25 alone if e
// is nil. Tools' terms and embeddings are kept between searches (those of
// the last 4096 texts), so a warm searcher analyses and embeds the query
// alone.
func New(e provider.Embedder) *Searcher {
	return &Searcher{embedder: e, vectors: map[Doc][]float32{}, analysed: map[Doc]analysed{}}
}

// Search returns the docs that best match query, best first, at most k
// (1 to [MaxK]). By BM25 alone, a doc that shares no term with the query is
// never returned.
func (s *Searcher) Search(ctx context.Context, query string, docs []Doc, k int) ([]Hit, error) {
	switch {
	case strings.TrimSpace(query) == "":
		return nil, fault.Invalid("query", "say what the tool should do, in a few words")
	case len(query) > MaxQueryBytes:
		return nil, fault.Invalid("query", "%d bytes, at most %d", len(query), MaxQueryBytes)
	case k < 1 || k > MaxK:
		return nil, fault.Invalid("k", "%d, from 1 to %d", k, MaxK)
	}
	lexical := bm25(text.QueryTerms(query), s.analyse(docs))
	if s.embedder == nil || len(docs) == 0 {
		return top(lexical, k), nil
	}
	semantic, err := s.cosines(ctx, query, docs)
	if err != nil {
		return nil, err
	}
	return top(fuse(lexical, semantic), k), nil
}

// analyse returns the terms of each of docs, analysing only those not
// analysed before.
func (s *Searcher) analyse(docs []Doc) []analysed {
	out := make([]analysed, len(docs))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range docs {
		a, ok := s.analysed[d]
		if !ok {
			a = analysed{tf: map[string]int{}}
			for _, term := range text.Terms(d.text()) {
				a.tf[term]++
				a.length++
			}
			if len(s.analysed) >= maxCached {
				clear(s.analysed)
			}
			s.analysed[d] = a
		}
		out[i] = a
	}
	return out
}

// bm25 scores each doc for terms (a term the query repeats weighs more);
// docs sharing none are left out.
func bm25(terms []string, docs []analysed) []Hit {
	if len(terms) == 0 || len(docs) == 0 {
		return nil
	}
	uniq := slices.Compact(slices.Sorted(slices.Values(terms)))
	df := map[string]int{}
	total := 0
	for _, d := range docs {
		for _, term := range uniq {
			if d.tf[term] > 0 {
				df[term]++
			}
		}
		total += d.length
	}
	n := float64(len(docs))
	avgdl := max(float64(total)/n, 1)
	var hits []Hit
	for i, d := range docs {
		score := 0.0
		for _, term := range terms {
			tf := float64(d.tf[term])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
			score += idf * tf / (tf + k1*(1-b+b*float64(d.length)/avgdl))
		}
		if score > 0 {
			hits = append(hits, Hit{Index: i, Score: score})
		}
	}
	return hits
}

// cosines scores every doc by the cosine of its embedding and the
// query's, embedding only docs not embedded before.
func (s *Searcher) cosines(ctx context.Context, query string, docs []Doc) ([]Hit, error) {
	q, err := s.embedder.Embed(ctx, provider.EmbedRequest{Texts: []string{query}, Purpose: provider.ForQuery})
	if err != nil || len(q.Vectors) != 1 {
		return nil, fmt.Errorf("toolsearch: embedding the query: %v", cmp.Or(err, fmt.Errorf("%d vectors for one text", len(q.Vectors))))
	}
	s.mu.Lock()
	var missing []Doc
	for _, d := range docs {
		if _, ok := s.vectors[d]; !ok && !slices.Contains(missing, d) {
			missing = append(missing, d)
		}
	}
	s.mu.Unlock()
	if len(missing) > 0 {
		texts := make([]string, len(missing))
		for i, d := range missing {
			texts[i] = d.text()
		}
		e, err := s.embedder.Embed(ctx, provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
		if err != nil || len(e.Vectors) != len(missing) {
			return nil, fmt.Errorf("toolsearch: embedding the tools: %v", cmp.Or(err, fmt.Errorf("%d vectors for %d texts", len(e.Vectors), len(missing))))
		}
		s.mu.Lock()
		if len(s.vectors)+len(missing) > maxCached {
			clear(s.vectors)
		}
		for i, d := range missing {
			s.vectors[d] = e.Vectors[i]
		}
		s.mu.Unlock()
	}
	hits := make([]Hit, len(docs))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range docs {
		v := s.vectors[d]
		if v == nil { // cleared by a concurrent search: scored as unrelated
			hits[i] = Hit{Index: i}
			continue
		}
		hits[i] = Hit{Index: i, Score: cosine(q.Vectors[0], v)}
	}
	return hits, nil
}

// cosine returns the cosine of a and b, 0 if their lengths differ.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// fuse combines rankings by reciprocal rank: each hit scores the sum of
// 1/(rrfK + rank) over the rankings holding it.
func fuse(rankings ...[]Hit) []Hit {
	scores := map[int]float64{}
	for _, r := range rankings {
		for rank, h := range top(r, len(r)) {
			scores[h.Index] += 1 / float64(rrfK+rank+1)
		}
	}
	out := make([]Hit, 0, len(scores))
	for i, s := range scores {
		out = append(out, Hit{Index: i, Score: s})
	}
	return out
}

// top returns the best k of hits, best first; ties go to the earlier doc,
// so that a ranking never depends on map order.
func top(hits []Hit, k int) []Hit {
	hits = slices.Clone(hits)
	slices.SortFunc(hits, func(x, y Hit) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(x.Index, y.Index)
	})
	return hits[:min(k, len(hits))]
}
