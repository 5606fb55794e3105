package career

import (
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// lexicalIndex ranks documents against a query by their words. Matching is
// written against it, so the BM25 behind it can change without touching the
// strategies.
type lexicalIndex interface {
	// search returns up to k documents with a positive score, best first,
	// ties broken by document id.
	search(query string, k int) ([]hit, error)
}

// hit is a ranked document: its position in the indexed slice and score.
type hit struct {
	doc   int
	score float64
}

// terms are the words matching compares: [text.Terms], the analyser BM25 uses.
func terms(s string) []string { return text.Terms(s) }

// bm25 is a lexicalIndex on a BM25-only [retrieval.Segment].
type bm25 struct{ seg *retrieval.Segment }

// newBM25 indexes texts, identified by ids (unique).
func newBM25(ids, texts []string) (*bm25, error) {
	chunks := make([]retrieval.Chunk, len(texts))
	for i := range texts {
		chunks[i] = retrieval.Chunk{ID: ids[i], DocID: ids[i], Text: texts[i]}
	}
	seg, err := retrieval.NewSegment(chunks, 0)
	if err != nil {
		return nil, fmt.Errorf("career: indexing atoms: %w", err)
	}
	return &bm25{seg: seg}, nil
}

func (ix *bm25) search(query string, k int) ([]hit, error) {
	if ix.seg.Len() == 0 {
		return nil, nil
	}
	hs, err := retrieval.Search([]*retrieval.Segment{ix.seg}, retrieval.Query{Text: query, Mode: retrieval.ModeBM25, K: k})
	if err != nil {
		return nil, fmt.Errorf("career: searching atoms: %w", err)
	}
	out := make([]hit, 0, len(hs))
	for _, h := range hs {
		if h.Score > 0 {
			out = append(out, hit{doc: h.Index, score: h.Score})
		}
	}
	return out, nil
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

// set returns the strings of ws as a set.
func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
