package career

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// lexicalIndex ranks documents against a query by their words. Matching is
// written against it so that the BM25 behind it can change (to the shared
// retrieval package's) without touching the strategies.
type lexicalIndex interface {
	// search returns up to k documents with a positive score, best first,
	// ties broken by document position.
	search(query string, k int) []hit
}

// hit is a ranked document: its position in the indexed slice and score.
type hit struct {
	doc   int
	score float64
}

// terms splits s into the lowercase words matching compares: letters and
// digits, without English stop words.
func terms(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '+' && r != '#'
	}) {
		w = strings.Trim(w, "+#")
		if w == "" && len(w) == 0 {
			continue
		}
		if _, stop := stopWords[w]; !stop {
			out = append(out, w)
		}
	}
	return out
}

var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have in into is it its of on or
		that the their this to was were will with we our you your i me my he she they them than then there these those
		which who whom what when where why how all any both each few more most other some such no nor not only own same
		so too very can just also using used use`) {
		m[w] = struct{}{}
	}
	return m
}()

// bm25 is an in-memory BM25 index (k1 1.2, b 0.75) over a fixed set of documents.
type bm25 struct {
	docs  []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	k1, b float64
}

func newBM25(texts []string) *bm25 {
	ix := &bm25{docs: make([]map[string]int, len(texts)), lens: make([]int, len(texts)), df: map[string]int{}, k1: 1.2, b: 0.75}
	total := 0
	for i, t := range texts {
		tf := map[string]int{}
		ts := terms(t)
		for _, w := range ts {
			tf[w]++
		}
		for w := range tf {
			ix.df[w]++
		}
		ix.docs[i], ix.lens[i] = tf, len(ts)
		total += len(ts)
	}
	if len(texts) > 0 {
		ix.avg = float64(total) / float64(len(texts))
	}
	return ix
}

func (ix *bm25) search(query string, k int) []hit {
	qs := unique(terms(query))
	n := float64(len(ix.docs))
	var hits []hit
	for i, tf := range ix.docs {
		score := 0.0
		for _, w := range qs {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(ix.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := ix.k1 * (1 - ix.b + ix.b*float64(ix.lens[i])/math.Max(ix.avg, 1))
			score += idf * f * (ix.k1 + 1) / (f + norm)
		}
		if score > 0 {
			hits = append(hits, hit{doc: i, score: score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// unique returns s without repeats, in first-seen order.
func unique(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, w := range s {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
