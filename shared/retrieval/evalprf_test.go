//go:build eval

package retrieval_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// passageSegment indexes ds as default ingestion does: title + "\n\n" + text
// cut by text.DefaultPassageOptions, one chunk per passage.
func passageSegment(t *testing.T, ds *beir.Dataset, emb provider.Embedder) *retrieval.Segment {
	t.Helper()
	var chunks []retrieval.Chunk
	for _, d := range ds.Corpus {
		ps, err := text.Passages(d.Title+"\n\n"+d.Text, text.DefaultPassageOptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprintf("%s#%d", d.ID, p.Index), DocID: d.ID, Text: p.Text})
		}
	}
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = chunks[i].Text
	}
	e, err := emb.Embed(context.Background(), provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		chunks[i].Vector = e.Vectors[i]
	}
	seg, err := retrieval.NewSegment(chunks, len(chunks[0].Vector))
	if err != nil {
		t.Fatal(err)
	}
	return seg
}

// TestPRFGrid: BM25 k1/b, then Rocchio feedback of the query vector from the
// top-N BM25 chunks, fused by weighted RRF; train only.
//
//	go test -tags eval -run TestPRFGrid -v ./shared/retrieval/ -args -split train
func TestPRFGrid(t *testing.T) {
	ds, err := beir.Load(*evalData, *evalSplit)
	if err != nil {
		t.Fatal(err)
	}
	emb := offline.NewEmbedder(*evalDims)
	seg := passageSegment(t, ds, emb)
	segs := []*retrieval.Segment{seg}
	ctx := context.Background()
	qv := map[string][]float32{}
	for _, q := range ds.Queries {
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{q.Text}, Purpose: provider.ForQuery})
		if err != nil {
			t.Fatal(err)
		}
		qv[q.ID] = e.Vectors[0]
	}
	docs := func(h []retrieval.Hit) []string {
		var out []string
		for _, x := range h {
			out = append(out, x.DocID)
		}
		return out
	}
	for _, kb := range [][2]float64{{1.0, 0.4}, {1.1, 0.35}, {1.1, 0.45}, {1.2, 0.4}, {1.3, 0.4}, {1.1, 0.4}} {
		run := beir.Run{}
		for _, q := range ds.Queries {
			h, _ := retrieval.Search(segs, retrieval.Query{Text: q.Text, Mode: retrieval.ModeBM25, K: 100, PerDoc: true, Tuning: &retrieval.Tuning{K1: kb[0], B: kb[1]}})
			run[q.ID] = docs(h)
		}
		fmt.Printf("bm25 k1=%.2f b=%.2f ndcg@10=%.4f recall@100=%.4f\n", kb[0], kb[1], beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100))
	}
	bm := map[string][]retrieval.Hit{}
	vec := map[string][]retrieval.Hit{}
	for _, q := range ds.Queries {
		bm[q.ID], _ = retrieval.Search(segs, retrieval.Query{Text: q.Text, Mode: retrieval.ModeBM25, K: 1000, PerDoc: true, Tuning: &retrieval.Tuning{K1: *evalK1, B: *evalB}})
		vec[q.ID], _ = retrieval.Search(segs, retrieval.Query{Vector: qv[q.ID], Mode: retrieval.ModeVector, K: 1000, PerDoc: true})
		byDocID(bm[q.ID])
		byDocID(vec[q.ID])
	}
	fuseRun := func(v map[string][]retrieval.Hit, c, vw float64, depth int) beir.Run {
		run := beir.Run{}
		for _, q := range ds.Queries {
			b, vv := bm[q.ID], v[q.ID]
			b, vv = b[:min(depth, len(b))], vv[:min(depth, len(vv))]
			run[q.ID] = docs(retrieval.FuseWeighted(100, c, []float64{1, vw}, b, vv))
		}
		return run
	}
	grid := func(name string, v map[string][]retrieval.Hit) {
		run := beir.Run{}
		for _, q := range ds.Queries {
			run[q.ID] = docs(v[q.ID][:min(100, len(v[q.ID]))])
		}
		fmt.Printf("%s vector ndcg@10=%.4f recall@100=%.4f\n", name, beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100))
		for _, c := range []float64{3, 5, 10, 20} {
			for _, vw := range []float64{0.2, 0.3, 0.4, 0.5, 0.7} {
				for _, depth := range []int{100} {
					r := fuseRun(v, c, vw, depth)
					fmt.Printf("%s rrf c=%g vw=%.1f depth=%d ndcg@10=%.4f recall@100=%.4f\n", name, c, vw, depth, beir.MeanNDCG(r, ds.Qrels, 10), beir.MeanRecall(r, ds.Qrels, 100))
				}
			}
		}
	}
	grid("base", vec)
	for _, n := range []int{2, 3, 4} {
		for _, a := range []float64{0.3, 0.4} {
			pv := map[string][]retrieval.Hit{}
			for _, q := range ds.Queries {
				x := make([]float64, len(qv[q.ID]))
				for i, f := range qv[q.ID] {
					x[i] = a * float64(f)
				}
				top := bm[q.ID][:min(n, len(bm[q.ID]))]
				for _, h := range top {
					for i, f := range seg.Chunk(h.Index).Vector {
						x[i] += (1 - a) / float64(len(top)) * float64(f)
					}
				}
				var ss float64
				for _, f := range x {
					ss += f * f
				}
				out := make([]float32, len(x))
				if ss > 0 {
					for i := range x {
						out[i] = float32(x[i] / math.Sqrt(ss))
					}
				}
				pv[q.ID], _ = retrieval.Search(segs, retrieval.Query{Vector: out, Mode: retrieval.ModeVector, K: 1000, PerDoc: true})
				byDocID(pv[q.ID])
			}
			grid(fmt.Sprintf("prf n=%d a=%.1f", n, a), pv)
		}
	}
}

// byDocID makes fusion identify hits by document, as Combine does with PerDoc.
func byDocID(h []retrieval.Hit) {
	for i := range h {
		h[i].ChunkID = h[i].DocID
	}
}
