//go:build eval

package retrieval_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
)

// TestFusionGrid prints nDCG@10 and recall@100 of other fusions of the same
// BM25 and vector rankings: score interpolation (min-max normalised, alpha
// on BM25) and weighted RRF over constants, vector weights and depths. It is
// how the hybrid defaults were chosen (on train only):
//
//	go test -tags eval -run TestFusionGrid -v ./shared/retrieval/ -args -split train
func TestFusionGrid(t *testing.T) {
	ds, err := beir.Load(*evalData, *evalSplit)
	if err != nil {
		t.Fatal(err)
	}
	emb := offline.NewEmbedder(*evalDims)
	ctx := context.Background()
	var chunks []retrieval.Chunk
	for _, d := range ds.Corpus {
		v, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{d.Title + " " + d.Text}})
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, retrieval.Chunk{ID: d.ID, DocID: d.ID, Text: d.Title + " " + d.Text, Vector: v.Vectors[0]})
	}
	seg, err := retrieval.NewSegment(chunks, *evalDims)
	if err != nil {
		t.Fatal(err)
	}
	type ql struct {
		id string
		l  retrieval.Lists
	}
	var all []ql
	for _, q := range ds.Queries {
		qe, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{q.Text}})
		if err != nil {
			t.Fatal(err)
		}
		l, err := retrieval.SearchLists([]*retrieval.Segment{seg}, retrieval.Query{Text: q.Text, Vector: qe.Vectors[0], K: 100, PerDoc: true, Tuning: &retrieval.Tuning{Depth: 1000}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ql{q.ID, l})
	}
	norm := func(h []retrieval.Hit) map[string]float64 {
		m := map[string]float64{}
		if len(h) == 0 {
			return m
		}
		hi, lo := h[0].Score, h[len(h)-1].Score
		for _, x := range h {
			if hi > lo {
				m[x.DocID] = (x.Score - lo) / (hi - lo)
			}
		}
		return m
	}
	for _, alpha := range []float64{1, 0.9, 0.8, 0.7, 0.6, 0.5} {
		run := beir.Run{}
		for _, x := range all {
			b, v := norm(x.l.BM25), norm(x.l.Vector)
			sc := map[string]float64{}
			for d, s := range b {
				sc[d] += alpha * s
			}
			for d, s := range v {
				sc[d] += (1 - alpha) * s
			}
			var ids []string
			for d := range sc {
				ids = append(ids, d)
			}
			sort.Slice(ids, func(i, j int) bool { return sc[ids[i]] > sc[ids[j]] || sc[ids[i]] == sc[ids[j]] && ids[i] < ids[j] })
			run[x.id] = ids
		}
		fmt.Printf("convex alpha=%.1f ndcg@10=%.4f recall@100=%.4f\n", alpha, beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100))
	}
	for _, c := range []float64{5, 20, 60} {
		for _, vw := range []float64{0.1, 0.2, 0.4} {
			for _, depth := range []int{100, 1000} {
				run := beir.Run{}
				for _, x := range all {
					b, v := x.l.BM25, x.l.Vector
					if len(b) > depth {
						b = b[:depth]
					}
					if len(v) > depth {
						v = v[:depth]
					}
					for _, h := range retrieval.FuseWeighted(100, c, []float64{1, vw}, b, v) {
						run[x.id] = append(run[x.id], h.DocID)
					}
				}
				fmt.Printf("rrf c=%g vw=%.1f depth=%d ndcg@10=%.4f recall@100=%.4f\n", c, vw, depth, beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100))
			}
		}
	}
}
