package retrieval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ChunkID)
	}
	return out
}

func TestSearchBM25RanksByStemmedTerms(t *testing.T) {
	s := zooSegment(t, 0)
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"stems match across forms", Query{Text: "fox running", Mode: ModeBM25}, []string{"a#1", "a#0"}},
		{"hyphenated tokens match", Query{Text: "il-6", Mode: ModeBM25}, []string{"b#0"}},
		{"stop words alone match nothing", Query{Text: "the and of", Mode: ModeBM25}, nil},
		{"filter keeps matching metadata", Query{Text: "fox", Mode: ModeBM25, Filter: Filter{"kind": {"story", "paper"}}}, []string{"a#0"}},
		{"filter on a missing key keeps nothing", Query{Text: "fox", Mode: ModeBM25, Filter: Filter{"year": {"2020"}}}, nil},
		{"exclude drops documents", Query{Text: "fox dog", Mode: ModeBM25, Exclude: func(_, doc string) bool { return doc == "a" }}, nil},
		{"per document keeps the best chunk", Query{Text: "fox running", Mode: ModeBM25, PerDoc: true}, []string{"a#1"}},
		{"K bounds the hits", Query{Text: "fox", Mode: ModeBM25, K: 1}, []string{"a#1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := Search([]*Segment{s}, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(hits)); diff != "" {
				t.Errorf("hits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSearchRejectsBadQueries(t *testing.T) {
	s := zooSegment(t, 4)
	tests := []struct {
		name string
		q    Query
		want error
	}{
		{"vector mode without a vector", Query{Mode: ModeVector}, ErrNoVector},
		{"hybrid (the default) without a vector", Query{Text: "fox"}, ErrNoVector},
		{"a vector of other dimensions", Query{Mode: ModeVector, Vector: []float32{1, 0}}, ErrDims},
		{"an unknown mode", Query{Mode: "magic"}, ErrMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Search([]*Segment{s}, tt.q); !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

// randomChunks builds n chunks over a small vocabulary, 1-3 chunks per doc.
func randomChunks(rng *rand.Rand, n, dims int) []Chunk {
	words := []string{"cell", "protein", "gene", "cancer", "mouse", "brain", "immune", "virus", "drug", "trial",
		"dose", "risk", "blood", "heart", "liver", "tumor", "signal", "growth", "factor", "receptor"}
	var chunks []Chunk
	doc := 0
	for len(chunks) < n {
		per := 1 + rng.IntN(3)
		for j := 0; j < per && len(chunks) < n; j++ {
			var txt []byte
			for w := 0; w < 3+rng.IntN(20); w++ {
				txt = append(txt, words[rng.IntN(len(words))]...)
				txt = append(txt, ' ')
			}
			c := Chunk{
				ID: fmt.Sprintf("d%03d#%d", doc, j), DocID: fmt.Sprintf("d%03d", doc), Text: string(txt),
				Metadata: map[string]string{"parity": fmt.Sprint(doc % 2)}}
			if dims > 0 {
				c.Vector = unit(rng, dims)
			}
			chunks = append(chunks, c)
		}
		doc++
	}
	return chunks
}

func TestSearchIsTheSameWhetherSegmentsAreOneOrFannedOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dims = 24
	chunks := randomChunks(rng, 600, dims)
	whole, _ := NewSegment(chunks, dims)
	var shards []*Segment
	for lo := 0; lo < len(chunks); lo += 170 {
		s, err := NewSegment(chunks[lo:min(lo+170, len(chunks))], dims)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, s)
	}
	ignore := cmpopts.IgnoreFields(Hit{}, "Segment", "Index")
	for _, mode := range []Mode{ModeBM25, ModeVector, ModeHybrid} {
		for _, perDoc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, per document %v", mode, perDoc), func(t *testing.T) {
				q := Query{Text: "protein cancer growth receptor", Vector: unit(rng, dims), Mode: mode, K: 15, PerDoc: perDoc,
					Filter: Filter{"parity": {"0"}}}
				want, err := Search([]*Segment{whole}, q)
				if err != nil || len(want) != 15 {
					t.Fatalf("one segment: %d hits, %v", len(want), err)
				}
				if perDoc && len(ByDoc(want)) != len(want) {
					t.Errorf("per document search returned a document twice: %v", ids(want))
				}
				// In one process over several segments.
				got, _ := Search(shards, q)
				if diff := cmp.Diff(want, got, ignore, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
					t.Errorf("several segments mismatch (-want +got):\n%s", diff)
				}
				// Fanned out: global statistics first, then one SearchLists per
				// shard. In hybrid mode pseudo-relevance feedback needs the
				// global top BM25 hits: a BM25 round, then the expanded vector
				// (ExpandVector) in a vector round.
				if mode == ModeHybrid {
					terms := QueryTerms(q.Text)
					var st Stats
					for _, s := range shards {
						st.Add(s.TermStats(terms))
					}
					bq := q
					bq.Mode, bq.K = ModeBM25, q.Depth()
					var bms [][]Hit
					for i, s := range shards {
						l, err := SearchLists([]*Segment{s}, bq, &st)
						if err != nil {
							t.Fatal(err)
						}
						for j := range l.BM25 {
							l.BM25[j].Segment = i // the coordinator's numbering
						}
						bms = append(bms, l.BM25)
					}
					merged := Combine(bq, func() []Lists {
						var p []Lists
						for _, b := range bms {
							p = append(p, Lists{BM25: b})
						}
						return p
					}()...)
					var vecs [][]float32
					for _, h := range merged[:min(DefaultFeedback, len(merged))] {
						vecs = append(vecs, shards[h.Segment].Chunk(h.Index).Vector)
					}
					vq := q
					vq.Mode, vq.K, vq.Vector = ModeVector, q.Depth(), ExpandVector(q, vecs)
					var parts []Lists
					for i, s := range shards {
						l, err := SearchLists([]*Segment{s}, vq, nil)
						if err != nil {
							t.Fatal(err)
						}
						parts = append(parts, Lists{BM25: bms[i], Vector: l.Vector})
					}
					got = Combine(q, parts...)
					if diff := cmp.Diff(want, got, ignore, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
						t.Errorf("fan-out with feedback mismatch (-want +got):\n%s", diff)
					}
					// One round, feedback off: also exact.
					q.Tuning = &Tuning{Feedback: -1}
					if want, err = Search([]*Segment{whole}, q); err != nil {
						t.Fatal(err)
					}
				}
				terms := QueryTerms(q.Text)
				var st Stats
				for _, s := range shards {
					st.Add(s.TermStats(terms))
				}
				var parts []Lists
				for _, s := range shards {
					l, err := SearchLists([]*Segment{s}, q, &st)
					if err != nil {
						t.Fatal(err)
					}
					parts = append(parts, l)
				}
				got = Combine(q, parts...)
				if diff := cmp.Diff(want, got, ignore, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
					t.Errorf("fan-out mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestSearchVectorMatchesFloat32BruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dims, n, k = 384, 3000, 10
	chunks := randomChunks(rng, n, dims)
	s, _ := NewSegment(chunks, dims)
	for trial := 0; trial < 20; trial++ {
		qv := unit(rng, dims)
		type scored struct {
			id    string
			score float32
		}
		var all []scored
		for _, c := range chunks {
			all = append(all, scored{c.ID, dotFloat(qv, c.Vector)})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].score > all[j].score })
		var want []string
		for _, x := range all[:k] {
			want = append(want, x.id)
		}
		hits, err := Search([]*Segment{s}, Query{Vector: qv, Mode: ModeVector, K: k})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ids(hits)); diff != "" {
			t.Fatalf("query %d: top-%d mismatch (-want +got):\n%s", trial, k, diff)
		}
	}
}

func TestFuseSumsReciprocalRanks(t *testing.T) {
	a := []Hit{{ChunkID: "x"}, {ChunkID: "y"}, {ChunkID: "z"}}
	b := []Hit{{ChunkID: "z"}, {ChunkID: "x"}}
	got := Fuse(10, a, b)
	want := []Hit{
		{ChunkID: "x", Score: 1.0/61 + 1.0/62},
		{ChunkID: "z", Score: 1.0/63 + 1.0/61},
		{ChunkID: "y", Score: 1.0 / 62},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("Fuse mismatch (-want +got):\n%s", diff)
	}
	if got := FuseWeighted(1, 60, []float64{0, 1}, a, b); got[0].ChunkID != "z" {
		t.Errorf("weighting the second list alone ranks %q first, want z", got[0].ChunkID)
	}
}

func TestMergeHitsKeepsTheBestOfEachChunkAndBreaksTiesByID(t *testing.T) {
	a := []Hit{{ChunkID: "b", Score: 2}, {ChunkID: "c", Score: 1}}
	b := []Hit{{ChunkID: "a", Score: 2}, {ChunkID: "c", Score: 1.5}}
	want := []string{"a", "b", "c"}
	if diff := cmp.Diff(want, ids(MergeHits(5, a, b))); diff != "" {
		t.Errorf("MergeHits mismatch (-want +got):\n%s", diff)
	}
	if got := MergeHits(5, a, b)[2].Score; got != 1.5 {
		t.Errorf("chunk c kept score %v, want its best, 1.5", got)
	}
}

func TestHybridPerDocFusesADocumentsChunksAsOne(t *testing.T) {
	// Document "a": BM25 prefers chunk a#0, the vector prefers a#1.
	chunks := []Chunk{
		{ID: "a#0", DocID: "a", Text: "vitamin vitamin fracture", Vector: []float32{0, 1}},
		{ID: "a#1", DocID: "a", Text: "unrelated words here", Vector: []float32{1, 0}},
		{ID: "b#0", DocID: "b", Text: "vitamin", Vector: []float32{0.6, 0.8}},
	}
	s, err := NewSegment(chunks, 2)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := Search([]*Segment{s}, Query{Text: "vitamin fracture", Vector: []float32{1, 0}, PerDoc: true})
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, h := range hits {
		docs = append(docs, h.DocID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, docs); diff != "" {
		t.Errorf("documents mismatch (-want +got):\n%s", diff)
	}
}

func TestHybridFeedbackExpandsTheVectorQuery(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dims = 24
	seg, _ := NewSegment(randomChunks(rng, 300, dims), dims)
	segs := []*Segment{seg}
	q := Query{Text: "protein cancer growth receptor", Vector: unit(rng, dims), K: 20, PerDoc: true}
	bm, _ := Search(segs, Query{Text: q.Text, Mode: ModeBM25, K: 100, PerDoc: true})
	if len(bm) < DefaultFeedback {
		t.Fatalf("%d BM25 hits", len(bm))
	}
	// The expanded query by hand: 0.4 q + 0.6 mean(top 3), normalised.
	x := make([]float64, dims)
	for i := range x {
		x[i] = DefaultQueryWeight * float64(q.Vector[i])
		for _, h := range bm[:DefaultFeedback] {
			x[i] += (1 - DefaultQueryWeight) / DefaultFeedback * float64(seg.Chunk(h.Index).Vector[i])
		}
	}
	var ss float64
	for _, f := range x {
		ss += f * f
	}
	ev := make([]float32, dims)
	for i := range x {
		ev[i] = float32(x[i] / math.Sqrt(ss))
	}
	l, err := SearchLists(segs, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantVec, _ := Search(segs, Query{Vector: ev, Mode: ModeVector, K: q.Depth(), PerDoc: true})
	if diff := cmp.Diff(wantVec, l.Vector, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("hybrid's vector list is not the expanded query's (-want +got):\n%s", diff)
	}
	// Feedback off: the plain query vector.
	q.Tuning = &Tuning{Feedback: -1}
	l, _ = SearchLists(segs, q, nil)
	plain, _ := Search(segs, Query{Vector: q.Vector, Mode: ModeVector, K: q.Depth(), PerDoc: true})
	if diff := cmp.Diff(plain, l.Vector); diff != "" {
		t.Errorf("feedback off changed the vector list (-want +got):\n%s", diff)
	}
	// Vector mode never uses feedback.
	got, _ := Search(segs, Query{Vector: q.Vector, Mode: ModeVector, K: q.Depth(), PerDoc: true, Tuning: &Tuning{Feedback: 5}})
	if diff := cmp.Diff(plain, got); diff != "" {
		t.Errorf("vector mode used feedback (-want +got):\n%s", diff)
	}
	if tu := TuningFor("bedrock"); tu.Feedback >= 0 {
		t.Errorf("hosted embedders get feedback %d; want off", tu.Feedback)
	}
}
