package graph_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// scifact is the BEIR SciFact folder the build benchmark reads; it skips
// without it.
var scifact = flag.String("scifact", "/work/shared/eval/scifact", "BEIR SciFact `folder` for BenchmarkBuildSciFact")

// BenchmarkBuildSciFact reports how fast the offline extractor builds shards
// of real text: SciFact's 5,183 abstracts cut into passages as ingestion cuts
// them, in chunks/s, then the store's graph, and the p50 of a local query
// (SciFact's test questions, depth 2) over it:
//
//	go test -run XXX -bench BuildSciFact -benchtime 1x ./shared/graph/
func BenchmarkBuildSciFact(b *testing.B) {
	if _, err := os.Stat(*scifact); err != nil {
		b.Skipf("no SciFact at %s", *scifact)
	}
	ds, err := beir.Load(*scifact, "test")
	if err != nil {
		b.Fatal(err)
	}
	var docs []graph.Document
	chunks := 0
	for _, d := range ds.Corpus {
		ps, err := text.Passages(d.Title+"\n\n"+d.Text, text.DefaultPassageOptions)
		if err != nil {
			b.Fatal(err)
		}
		gd := graph.Document{ID: d.ID}
		for _, p := range ps {
			gd.Chunks = append(gd.Chunks, graph.Chunk{ID: fmt.Sprintf("%s#%d", d.ID, p.Index), Text: p.Text})
		}
		chunks += len(gd.Chunks)
		docs = append(docs, gd)
	}
	ctx := context.Background()
	for b.Loop() {
		start := time.Now()
		shards := make([]*graph.Shard, 0, len(docs))
		for _, d := range docs {
			s, err := graph.NewShard(ctx, d, graph.Heuristic{}, nil, graph.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			shards = append(shards, s)
		}
		extract := time.Since(start)
		start = time.Now()
		g, err := graph.Build(shards)
		if err != nil {
			b.Fatal(err)
		}
		build := time.Since(start)
		var lat []time.Duration
		for _, q := range ds.Queries {
			start := time.Now()
			if _, err := g.Local(ctx, q.Text, graph.DefaultLocalOptions); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		start = time.Now()
		comms := g.Communities(1)
		communities := time.Since(start)
		b.ReportMetric(float64(chunks)/extract.Seconds(), "extract-chunks/s")
		b.ReportMetric(float64(build.Milliseconds()), "union-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "query-p50-µs")
		b.ReportMetric(float64(communities.Milliseconds()), "communities-ms")
		b.Logf("%d docs, %d chunks: %d entities, %d relations, %d community levels %v", len(docs), chunks, g.Entities(), g.Edges(), len(comms.Levels), counts(comms))
	}
}
