package graph_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/graph/multihop"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
)

// testSeed is the multi-hop evaluation's test world, whose figures are
// reported; seed 1 is the development world, the only one looked at while
// the extractor and the walk were written (see multihop's package doc).
const testSeed = 2

// hopRecall is, over a world's questions, the share whose second-hop
// document is among the first k documents of each method's ranking.
type hopRecall struct {
	bm25, graph, fused float64
}

// measureHops indexes world as one chunk per document (title, a blank line,
// the text, as scripts/retrieval-eval ingests), ranks each question's chunks
// by BM25 alone, by the graph alone and by both fused, and reports
// second-hop recall at k.
func measureHops(t *testing.T, world multihop.Corpus, k int) hopRecall {
	t.Helper()
	ctx := context.Background()
	var chunks []retrieval.Chunk
	var shards []*graph.Shard
	for _, d := range world.Docs {
		body := d.Title + "\n\n" + d.Text
		chunks = append(chunks, retrieval.Chunk{ID: d.ID + "#0", DocID: d.ID, Text: body})
		s, err := graph.NewShard(ctx, graph.Document{ID: d.ID, Chunks: []graph.Chunk{{ID: d.ID + "#0", Text: body}}}, graph.Heuristic{}, nil, graph.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, s)
	}
	seg, err := retrieval.NewSegment(chunks, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Build(shards)
	if err != nil {
		t.Fatal(err)
	}
	found := func(hits []retrieval.Hit, doc string) float64 {
		for _, h := range hits[:min(k, len(hits))] {
			if h.DocID == doc {
				return 1
			}
		}
		return 0
	}
	var r hopRecall
	for _, q := range world.Questions {
		bm25, err := retrieval.Search([]*retrieval.Segment{seg}, retrieval.Query{Text: q.Text, Mode: retrieval.ModeBM25, K: 100})
		if err != nil {
			t.Fatal(err)
		}
		local, err := g.Local(ctx, q.Text, graph.DefaultLocalOptions)
		if err != nil {
			t.Fatal(err)
		}
		r.bm25 += found(bm25, q.Second)
		r.graph += found(local.Hits, q.Second)
		r.fused += found(graph.Fuse(100, 1, bm25, local.Hits), q.Second)
	}
	n := float64(len(world.Questions))
	return hopRecall{r.bm25 / n, r.graph / n, r.fused / n}
}

func TestPersonalizedPageRankFindsSecondHopDocumentsBM25Misses(t *testing.T) {
	for _, k := range []int{5, 10} {
		r := measureHops(t, multihop.Generate(testSeed, multihop.Options{}), k)
		t.Logf("second-hop recall@%d on the test world (seed %d): bm25 %.3f, graph %.3f, bm25+graph (rrf) %.3f", k, testSeed, r.bm25, r.graph, r.fused)
		if r.fused <= r.bm25 {
			t.Errorf("recall@%d: fusing the graph gives %.3f, BM25 alone %.3f: the graph adds nothing", k, r.fused, r.bm25)
		}
	}
}
