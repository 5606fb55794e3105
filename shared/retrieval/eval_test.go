//go:build eval

package retrieval_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
)

// The in-memory quality harness (the real one, through ingestion, is the
// vector stream's scripts/retrieval-eval):
//
//	go test -tags eval -run 'TestBEIR$' -v ./shared/retrieval/ -args -data /work/shared/eval/scifact -split train
//
// With no tuning flags it searches exactly as a zero Query.Tuning does, over
// text.DefaultPassageOptions passages of title + "\n\n" + text.
var (
	evalData  = flag.String("data", "/work/shared/eval/scifact", "BEIR folder")
	evalSplit = flag.String("split", "train", "qrels split")
	evalChunk = flag.Int("chunk", 0, "split documents into chunks of about this many runes (0: one chunk per document)")
	evalDims  = flag.Int("dims", offline.DefaultDims, "embedder dimensions")
	evalK1    = flag.Float64("k1", 0, "BM25 k1 (0: default)")
	evalB     = flag.Float64("b", 0, "BM25 b (0: default)")
	evalRRF   = flag.Float64("rrf", 0, "RRF constant (0: default)")
	evalDepth = flag.Int("depth", 0, "hybrid depth (0: default)")
	evalVW    = flag.Float64("vw", 0, "vector weight (0: default)")
	evalBW    = flag.Float64("bw", 0, "bm25 weight (0: default)")
	evalFB    = flag.Int("feedback", 0, "hybrid feedback hits (0: default, -1: off)")
	evalQW    = flag.Float64("qw", 0, "query vector weight in feedback (0: default)")
)

// chunkText cuts s into pieces of about size runes at spaces: a stand-in for
// text.Passages (another stream's) to see how chunking moves the figures.
func chunkText(s string, size int) []string {
	if size <= 0 || utf8.RuneCountInString(s) <= size {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		cut, runes := len(s), 0
		for i := range s {
			if runes == size {
				cut = i
				for j := i; j > 0; j-- {
					if s[j] == ' ' {
						cut = j
						break
					}
				}
				break
			}
			runes++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func TestBEIR(t *testing.T) {
	ds, err := beir.Load(*evalData, *evalSplit)
	if err != nil {
		t.Fatal(err)
	}
	emb := offline.NewEmbedder(*evalDims)
	ctx := context.Background()
	start := time.Now()
	var seg *retrieval.Segment
	if *evalChunk == 0 {
		// Default ingestion: text.DefaultPassageOptions passages.
		seg = passageSegment(t, ds, emb)
	} else {
		var chunks []retrieval.Chunk
		for _, d := range ds.Corpus {
			for i, c := range chunkText(d.Title+" "+d.Text, *evalChunk) {
				chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprintf("%s#%d", d.ID, i), DocID: d.ID, Text: c})
			}
		}
		texts := make([]string, len(chunks))
		for i := range chunks {
			texts[i] = chunks[i].Text
		}
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
		if err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			chunks[i].Vector = e.Vectors[i]
		}
		if seg, err = retrieval.NewSegment(chunks, *evalDims); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d docs, %d chunks, indexed in %v", len(ds.Corpus), seg.Len(), time.Since(start).Round(time.Millisecond))
	tuning := &retrieval.Tuning{K1: *evalK1, B: *evalB, RRFConstant: *evalRRF, Depth: *evalDepth, VectorWeight: *evalVW, BM25Weight: *evalBW, Feedback: *evalFB, QueryWeight: *evalQW}
	if *tuning == (retrieval.Tuning{}) {
		tuning = retrieval.TuningFor("offline") // exactly what default search does
	}
	for _, mode := range []retrieval.Mode{retrieval.ModeBM25, retrieval.ModeVector, retrieval.ModeHybrid} {
		run := beir.Run{}
		var took []time.Duration
		for _, q := range ds.Queries {
			qe, err := emb.Embed(ctx, provider.EmbedRequest{Texts: []string{q.Text}, Purpose: provider.ForQuery})
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			hits, err := retrieval.Search([]*retrieval.Segment{seg}, retrieval.Query{
				Text: q.Text, Vector: qe.Vectors[0], Mode: mode, K: 100, PerDoc: true, Tuning: tuning})
			took = append(took, time.Since(t0))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				run[q.ID] = append(run[q.ID], h.DocID)
			}
		}
		slices.Sort(took)
		fmt.Printf("split=%s mode=%-6s search p50 %v\n", *evalSplit, mode, took[len(took)/2])
		fmt.Printf("split=%s mode=%-6s ndcg@10=%.4f recall@100=%.4f (chunk=%d dims=%d tuning %+v)\n", *evalSplit, mode,
			beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, 100), *evalChunk, *evalDims, tuning)
	}
}
