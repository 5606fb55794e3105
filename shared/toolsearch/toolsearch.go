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
	name := strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(d.Name)
	return strings.Join([]string{name, name, d.Title, d.Title, d.Description}, "\n")
}

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
	vectors  map[string][]float32 // a tool's text -> its embedding
}

// New returns a Searcher that embeds with e, or searches by BM25 alone if e
// is nil. Tools' embeddings are kept between searches (the last 4096
// texts), so a warm searcher embeds the query alone.
func New(e provider.Embedder) *Searcher {
	return &Searcher{embedder: e, vectors: map[string][]float32{}}
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
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.text()
	}
	lexical := bm25(text.QueryTerms(query), texts)
	if s.embedder == nil || len(docs) == 0 {
		return top(lexical, k), nil
	}
	semantic, err := s.cosines(ctx, query, texts)
	if err != nil {
		return nil, err
	}
	return top(fuse(lexical, semantic), k), nil
}

// bm25 scores each text for terms; texts sharing none are left out.
func bm25(terms []string, texts []string) []Hit {
	if len(terms) == 0 || len(texts) == 0 {
		return nil
	}
	tfs := make([]map[string]int, len(texts))
	lengths := make([]int, len(texts))
	df := map[string]int{}
	total := 0
	for i, t := range texts {
		tfs[i] = map[string]int{}
		for _, term := range text.Terms(t) {
			if tfs[i][term] == 0 {
				df[term]++
			}
			tfs[i][term]++
			lengths[i]++
		}
		total += lengths[i]
	}
	n := float64(len(texts))
	avgdl := max(float64(total)/n, 1)
	var hits []Hit
	for i := range texts {
		score := 0.0
		for _, term := range terms {
			tf := float64(tfs[i][term])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
			score += idf * tf / (tf + k1*(1-b+b*float64(lengths[i])/avgdl))
		}
		if score > 0 {
			hits = append(hits, Hit{Index: i, Score: score})
		}
	}
	return hits
}

// cosines scores every text by the cosine of its embedding and the
// query's, embedding only texts not embedded before.
func (s *Searcher) cosines(ctx context.Context, query string, texts []string) ([]Hit, error) {
	q, err := s.embedder.Embed(ctx, provider.EmbedRequest{Texts: []string{query}, Purpose: provider.ForQuery})
	if err != nil || len(q.Vectors) != 1 {
		return nil, fmt.Errorf("toolsearch: embedding the query: %v", cmp.Or(err, fmt.Errorf("%d vectors for one text", len(q.Vectors))))
	}
	s.mu.Lock()
	var missing []string
	for _, t := range texts {
		if _, ok := s.vectors[t]; !ok && !slices.Contains(missing, t) {
			missing = append(missing, t)
		}
	}
	s.mu.Unlock()
	if len(missing) > 0 {
		e, err := s.embedder.Embed(ctx, provider.EmbedRequest{Texts: missing, Purpose: provider.ForDocument})
		if err != nil || len(e.Vectors) != len(missing) {
			return nil, fmt.Errorf("toolsearch: embedding the tools: %v", cmp.Or(err, fmt.Errorf("%d vectors for %d texts", len(e.Vectors), len(missing))))
		}
		s.mu.Lock()
		if len(s.vectors)+len(missing) > maxCached {
			clear(s.vectors)
		}
		for i, t := range missing {
			s.vectors[t] = e.Vectors[i]
		}
		s.mu.Unlock()
	}
	hits := make([]Hit, len(texts))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range texts {
		v := s.vectors[t]
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
