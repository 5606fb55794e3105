// Command retrieval-eval measures retrieval quality through the real path: it
// ingests a BEIR collection into a fresh vector store (vector.Service on an
// embedded table and a local blob folder in a temporary directory, with the
// offline embedder), runs every query judged in a split through the
// retriever with the default settings, writes a TREC run file and prints
// nDCG@10 and recall@100:
//
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --split test --run /tmp/scifact.trec [--mode bm25|vector|hybrid | --pipeline NAME]
//
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --run /tmp/colbert.trec --pipeline pylate_colbert [--source hybrid|centroid] [--pool N]
//
// With --pipeline, the run is what that RAG pipeline retrieves before
// grading and answering (rag.Service.Rank: basic, basic_rerank, crag,
// graphrag, iris_global_graphrag, pylate_colbert), with the offline
// generator and the offline multi-vector embedder. --pool sets the
// candidate pool basic_rerank and pylate_colbert reorder (default the
// tools', max(4*top_k, 20)); --source pylate_colbert's candidates (hybrid
// or centroid); with pylate_colbert the token index's size is printed
// beside float32's.
//
// Each corpus document is ingested as its title, a blank line and its text,
// with its _id as document id; the run is at document level (each document
// scored by its best chunk), 100 documents per query.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// depth is how many documents the run lists per query.
const depth = 100

func main() {
	data := flag.String("data", "", "BEIR `folder`: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
	split := flag.String("split", "test", "qrels `split` to evaluate")
	runPath := flag.String("run", "", "TREC run `file` to write")
	mode := flag.String("mode", "", "search `mode`: bm25, vector or hybrid (default: the retriever's default, hybrid)")
	graphWeights := flag.String("graph-weights", "", "with --pipeline graphrag: comma-separated `weights` of the graph's ranking in the fusion (hybrid's is 1) to evaluate one after another on one store, for tuning")
	pipe := flag.String("pipeline", "", "rank as RAG pipeline `NAME` retrieves: "+strings.Join(rag.Pipelines, ", "))
	source := flag.String("source", "", "with --pipeline pylate_colbert: the candidate `source`, hybrid (default) or centroid")
	pool := flag.Int("pool", 0, "with --pipeline basic_rerank or pylate_colbert: the hybrid search's top `n` documents to reorder, 1..100 (default the tools', 20)")
	flag.Parse()
	if *data == "" || *runPath == "" || *mode != "" && *pipe != "" || *pool < 0 || *pool > depth {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/retrieval-eval --data DIR --split test --run OUT.trec [--mode bm25|vector|hybrid | --pipeline NAME [--source hybrid|centroid] [--pool N]]")
		os.Exit(2)
	}
	if *pipe != "" && !slices.Contains(rag.Pipelines, *pipe) {
		fmt.Fprintf(os.Stderr, "retrieval-eval: no pipeline %q: use one of %s\n", *pipe, strings.Join(rag.Pipelines, ", "))
		os.Exit(2)
	}
	var weights []float64
	for _, w := range strings.Split(*graphWeights, ",") {
		if w == "" {
			continue
		}
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || v <= 0 || *pipe != rag.PipelineGraphRAG {
			fmt.Fprintln(os.Stderr, "retrieval-eval: --graph-weights takes positive numbers, with --pipeline graphrag")
			os.Exit(2)
		}
		weights = append(weights, v)
	}
	if err := run(*data, *split, *runPath, *mode, evalOptions{pipeline: *pipe, source: *source, pool: *pool, weights: weights}); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
		os.Exit(1)
	}
}

// evalOptions choose the ranking: a pipeline's retrieval, its candidate
// source and pool, and the graph weights to evaluate graphrag with.
type evalOptions struct {
	pipeline, source string
	pool             int
	weights          []float64
}

func run(data, split, runPath, mode string, o evalOptions) error {
	ctx := context.Background()
	if o.pipeline != "" && !slices.Contains(rag.Pipelines, o.pipeline) {
		return fmt.Errorf("no pipeline %q: use one of %s", o.pipeline, strings.Join(rag.Pipelines, ", "))
	}
	if o.source != "" && !slices.Contains(rag.CandidateSources, o.source) {
		return fmt.Errorf("--source %q: use %s", o.source, strings.Join(rag.CandidateSources, " or "))
	}
	ds, err := beir.Load(data, split)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "retrieval-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tbl, err := embedded.Open(filepath.Join(tmp, "switchboard.db"), nil)
	if err != nil {
		return err
	}
	defer tbl.Close()
	blobs := localfs.New(filepath.Join(tmp, "blobs"))
	defer blobs.Close()
	emb := offline.NewEmbedder(offline.DefaultDims)
	multi := multivector.NewHashing(0)
	svc := vector.New(tbl, blobs, emb, &vector.Options{MultiVector: multi, LateBytes: 1 << 30})
	caller := tenant.Caller{Tenant: "eval", Principal: "retrieval-eval"}
	const alias = "beir"
	if _, err := svc.CreateStore(ctx, caller, vector.CreateStoreInput{Alias: alias, Description: "BEIR collection " + filepath.Base(data)}); err != nil {
		return err
	}

	fmt.Printf("ingesting %d documents into a fresh store (%s/%s, %d dims)\n", len(ds.Corpus), emb.Provider(), emb.Model(), emb.Dims())
	start := time.Now()
	var chunks, empty atomic.Int64
	work := make(chan beir.Doc)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for d := range work {
				out, err := svc.Ingest(ctx, caller, vector.IngestInput{Store: alias, DocID: d.ID, Format: "txt", Content: d.Title + "\n\n" + d.Text})
				if errors.Is(err, vector.ErrNoText) {
					empty.Add(1) // nothing to find it by; its judgements count as misses
					continue
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("ingesting %s: %w", d.ID, err):
					default:
					}
					continue
				}
				chunks.Add(int64(out.Chunks))
			}
		})
	}
	for _, d := range ds.Corpus {
		work <- d
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	took := time.Since(start)
	st, err := svc.GetStore(ctx, caller, vector.StoreInput{Alias: alias})
	if err != nil {
		return err
	}
	fmt.Printf("ingested %d documents, %d chunks in %v: %.0f chunks/s (store: %d shards, version %d); skipped %d with no text\n",
		st.Documents, chunks.Load(), took.Round(time.Millisecond), float64(chunks.Load())/took.Seconds(), st.Shards, st.Version, empty.Load())

	tag := "switchboard-" + mode
	switch {
	case o.pipeline != "":
		tag = "switchboard-" + o.pipeline
	case mode == "":
		tag = "switchboard-default"
	}
	if len(o.weights) == 0 {
		if err := evaluate(ctx, ds, svc, tbl, caller, alias, mode, o, tag, runPath); err != nil {
			return err
		}
		if o.pipeline == rag.PipelineColbert {
			return printTokenIndex(ctx, svc, blobs, caller, alias, ds.Queries[0].Text)
		}
		return nil
	}
	for _, w := range o.weights {
		// The store is the same; only the fusion's weight changes.
		ws := vector.New(tbl, blobs, emb, &vector.Options{GraphWeight: w, MultiVector: multi})
		fmt.Printf("graph weight %g:\n", w)
		if err := evaluate(ctx, ds, ws, tbl, caller, alias, mode, o, fmt.Sprintf("%s-w%g", tag, w), fmt.Sprintf("%s.w%g", runPath, w)); err != nil {
			return err
		}
	}
	return nil
}

// evaluate runs every query of ds through svc (or pipeline o.pipeline over it),
// writes the run to runPath and prints its figures.
func evaluate(ctx context.Context, ds *beir.Dataset, svc *vector.Service, tbl store.Table, caller tenant.Caller, alias, mode string, o evalOptions, tag, runPath string) error {
	f, err := os.Create(runPath)
	if err != nil {
		return err
	}
	defer f.Close()
	pipelines := rag.New(tbl, rag.Options{Generator: offline.NewGenerator(), Reports: svc, Late: svc})
	run := beir.Run{}
	var latencies []time.Duration
	for _, q := range ds.Queries {
		t0 := time.Now()
		var docs []vector.Document
		if o.pipeline != "" {
			docs, err = pipelines.Rank(ctx, caller, svc, rag.RankInput{Pipeline: o.pipeline, Query: q.Text, Stores: []string{alias}, Depth: depth,
				Pool: o.pool, Source: o.source})
		} else {
			var out vector.RetrieveOutput
			out, err = svc.RankDocuments(ctx, caller, vector.RetrieveInput{Question: q.Text, Stores: []string{alias}, Mode: mode}, depth)
			docs = out.Documents
		}
		if err != nil {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		latencies = append(latencies, time.Since(t0))
		ids := make([]string, len(docs))
		scores := make([]float64, len(docs))
		for i, d := range docs {
			ids[i], scores[i] = d.DocID, d.Score
		}
		run[q.ID] = ids
		if err := beir.WriteRun(f, q.ID, ids, scores, tag); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	slices.Sort(latencies)
	what := "mode " + modeName(mode)
	if o.pipeline != "" {
		what = "pipeline " + o.pipeline
	}
	if o.pool != 0 {
		what += fmt.Sprintf(" (pool %d)", o.pool)
	}
	if o.source != "" {
		what += ", source " + o.source
	}
	fmt.Printf("%d queries, %s, query p50 %v (in process; the first query builds the store's graph or token vectors)\n", len(ds.Queries), what, latencies[len(latencies)/2].Round(time.Microsecond))
	fmt.Printf("ndcg@10=%.4f\nrecall@100=%.4f\n", beir.MeanNDCG(run, ds.Qrels, 10), beir.MeanRecall(run, ds.Qrels, depth))
	fmt.Printf("run written to %s\n", runPath)
	return nil
}

func modeName(m string) string {
	if m == "" {
		return "hybrid (default)"
	}
	return m
}
