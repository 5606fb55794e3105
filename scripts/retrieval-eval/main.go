// Command retrieval-eval measures retrieval quality through the real path: it
// ingests a BEIR collection into a fresh vector store (vector.Service on an
// embedded table and a local blob folder in a temporary directory, with the
// offline embedder), runs every query judged in a split through the
// retriever with the default settings, writes a TREC run file and prints
// nDCG@10 and recall@100:
//
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --split test --run /tmp/scifact.trec [--mode bm25|vector|hybrid]
//	go run ./scripts/retrieval-eval --data ../shared/eval/scifact --run /tmp/colbert.trec --pipeline pylate_colbert [--source hybrid|centroid]
//
// Each corpus document is ingested as its title, a blank line and its text,
// with its _id as document id; the run is at document level (each document
// scored by its best chunk), 100 documents per query.
//
// --pipeline names a RAG pipeline (the catalog's pipeline names, those
// rag_health_check reports) and ranks with its retrieval instead: basic is
// the retriever's (as without --pipeline); basic_rerank reranks the
// retriever's top --pool documents with rag_basic_rerank's reranker;
// pylate_colbert ranks by late interaction over token vectors of the offline
// multi-vector embedder, reranking the retriever's top --pool (--source
// hybrid) or over candidates from centroid pruning (--source centroid), and
// prints the token index's size beside float32. A pipeline whose retrieval
// this command does not run is refused, naming the ones it runs.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
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
	pipe := flag.String("pipeline", "", "rank with this RAG `pipeline`'s retrieval: "+strings.Join(slices.Sorted(maps.Keys(rankers)), ", "))
	source := flag.String("source", vector.LateFromHybrid, "pylate_colbert's candidate `source`: hybrid or centroid")
	pool := flag.Int("pool", depth, "basic_rerank's and pylate_colbert's hybrid candidates: the retriever's top `n` documents")
	flag.Parse()
	if *data == "" || *runPath == "" || *pool < 1 || *pool > vector.MaxRankDepth {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/retrieval-eval --data DIR --split test --run OUT.trec [--mode bm25|vector|hybrid] [--pipeline NAME [--source hybrid|centroid] [--pool 100]]")
		os.Exit(2)
	}
	if err := run(*data, *split, *runPath, *mode, evalOptions{pipeline: *pipe, source: *source, pool: *pool}); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval-eval:", err)
		os.Exit(1)
	}
}

// evalOptions choose the ranking: a pipeline's retrieval, its candidate
// source and pool.
type evalOptions struct {
	pipeline, source string
	pool             int
}

func run(data, split, runPath, mode string, o evalOptions) error {
	ctx := context.Background()
	rank, err := rankerOf(o)
	if err != nil {
		return err
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
	svc := vector.New(tbl, blobs, emb, &vector.Options{MultiVector: multivector.NewHashing(0), LateBytes: 1 << 30})
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

	f, err := os.Create(runPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tag := "switchboard-" + cmp.Or(mode, "default")
	if o.pipeline != "" {
		tag = "switchboard-" + o.pipeline
	}
	run := beir.Run{}
	var latencies []time.Duration
	var late *vector.LateOutput
	for i, q := range ds.Queries {
		t0 := time.Now()
		ids, scores, lo, err := rank(ctx, svc, caller, vector.RetrieveInput{Question: q.Text, Stores: []string{alias}, Mode: mode}, o)
		if err != nil {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		took := time.Since(t0)
		if i == 0 && lo != nil {
			fmt.Printf("first query %v (builds the token vectors)\n", took.Round(time.Millisecond))
		} else {
			latencies = append(latencies, took)
		}
		late = cmp.Or(late, lo)
		run[q.ID] = ids
		if err := beir.WriteRun(f, q.ID, ids, scores, tag); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	if late != nil {
		if err := printTokenIndex(ctx, blobs, caller, alias, late); err != nil {
			return err
		}
	}
	slices.Sort(latencies)
	what := "mode " + modeName(mode)
	if o.pipeline != "" {
		what = fmt.Sprintf("pipeline %s (pool %d)", o.pipeline, o.pool)
	}
	if o.pipeline == rag.PipelineColbert {
		what += ", source " + o.source
	}
	fmt.Printf("%d queries, %s, query p50 %v (warm, in process)\n", len(ds.Queries), what, latencies[len(latencies)/2].Round(time.Microsecond))
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
