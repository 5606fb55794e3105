// Command retrieval-eval measures retrieval quality through the real path: it
// ingests a BEIR collection into a fresh vector store (vector.Service on an
// embedded table and a local blob folder in a temporary directory, with the
// offline embedder), runs every query judged in a split through the
// retriever with the default settings, writes a TREC run file and prints
// nDCG@10 and recall@100:
//
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --split test --run /tmp/scifact.trec [--mode bm25|vector|hybrid | --pipeline NAME]
//
// With --pipeline, the run is what that RAG pipeline retrieves before
// grading and answering (rag.Service.Rank: basic, basic_rerank, crag,
// graphrag, iris_global_graphrag), with the offline generator.
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
	flag.Parse()
	if *data == "" || *runPath == "" || *mode != "" && *pipe != "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/retrieval-eval --data DIR --split test --run OUT.trec [--mode bm25|vector|hybrid | --pipeline NAME]")
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
	if err := run(*data, *split, *runPath, *mode, *pipe, weights); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
		os.Exit(1)
	}
}

func run(data, split, runPath, mode, pipe string, weights []float64) error {
	ctx := context.Background()
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
	svc := vector.New(tbl, blobs, emb, nil)
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
	case pipe != "":
		tag = "switchboard-" + pipe
	case mode == "":
		tag = "switchboard-default"
	}
	if len(weights) == 0 {
		return evaluate(ctx, ds, svc, tbl, caller, alias, mode, pipe, tag, runPath)
	}
	for _, w := range weights {
		// The store is the same; only the fusion's weight changes.
		ws := vector.New(tbl, blobs, emb, &vector.Options{GraphWeight: w})
		fmt.Printf("graph weight %g:\n", w)
		if err := evaluate(ctx, ds, ws, tbl, caller, alias, mode, pipe, fmt.Sprintf("%s-w%g", tag, w), fmt.Sprintf("%s.w%g", runPath, w)); err != nil {
			return err
		}
	}
	return nil
}

// evaluate runs every query of ds through svc (or pipeline pipe over it),
// writes the run to runPath and prints its figures.
func evaluate(ctx context.Context, ds *beir.Dataset, svc *vector.Service, tbl store.Table, caller tenant.Caller, alias, mode, pipe, tag, runPath string) error {
	f, err := os.Create(runPath)
	if err != nil {
		return err
	}
	defer f.Close()
	pipelines := rag.New(tbl, rag.Options{Generator: offline.NewGenerator(), Reports: svc})
	run := beir.Run{}
	var latencies []time.Duration
	for _, q := range ds.Queries {
		t0 := time.Now()
		var docs []vector.Document
		if pipe != "" {
			docs, err = pipelines.Rank(ctx, caller, svc, rag.RankInput{Pipeline: pipe, Query: q.Text, Stores: []string{alias}, Depth: depth})
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
	if pipe != "" {
		what = "pipeline " + pipe
	}
	fmt.Printf("%d queries, %s, query p50 %v (in process; the first query builds the store's graph)\n", len(ds.Queries), what, latencies[len(latencies)/2].Round(time.Microsecond))
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
