// Command rag-eval measures what rag_basic and rag_crag answer (issue 10),
// through the real path: the tools' handlers behind the in-process invoker,
// the pipeline state machine (infra/statemachines/rag_pipeline.asl.json)
// interpreted in process over the step handlers, vector.Service on an
// embedded table and a local blob folder, the offline embedder and
// generator, as `go run ./functions/gateway` assembles them.
//
//	go run ./scripts/rag-eval --data ../shared/eval/scifact [--split test] [--tune] [--work DIR]
//	go run ./scripts/rag-eval --docs shared/provider/offline/testdata/docs
//
// With --data (a BEIR folder: corpus.jsonl, queries.jsonl, qrels/) it
// ingests the corpus into a store (each document its title, a blank line and
// its text, with its _id as doc_id), asks both tools every judged query of
// --split (top_k 10) and prints the nDCG@10 of the documents each returns
// (retrieved_documents, by doc_id) and how many answers said there were no
// relevant documents. --tune first prints how the offline grader's score
// (offline.Relevance) separates, on the train split, each query's retrieved
// passages when one of them is judged relevant from the passages retrieved for
// another query, for each threshold, and the threshold with the best balanced
// accuracy: how offline.GradeThreshold was chosen.
//
// With --docs (a folder of text and Markdown files) the store holds those
// files instead.
//
// Either way it then asks both tools the 50 questions of other domains
// (cooking, sports, travel) that [offDomainQuestions] makes, and prints how
// many each answered with no relevant documents: metadata.relevant "no", no
// retrieved documents and no answer, as rag_basic answers when grading
// rejects what it found.
//
// --work DIR keeps the store in DIR: a later run with the same DIR and corpus
// reuses it instead of ingesting again (SciFact takes about two minutes on
// two cores).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/retrieval/beir"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// The store the corpus goes into, and how many documents each question asks for.
const (
	storeAlias = "eval"
	topK       = 10
)

var caller = tenant.Caller{Tenant: tenant.Local, Principal: "rag-eval"}

func main() {
	data := flag.String("data", "", "a BEIR `folder`: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
	docs := flag.String("docs", "", "a `folder` of .md and .txt files to use as the store instead of a BEIR corpus")
	split := flag.String("split", "test", "the qrels `split` whose queries are asked")
	tune := flag.Bool("tune", false, "first print the offline grader's separation on the train split, by threshold")
	work := flag.String("work", "", "a `folder` to keep the store in, reused by later runs (default: a temporary one)")
	flag.Parse()
	if (*data == "") == (*docs == "") {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/rag-eval (--data BEIR_DIR [--split test] [--tune] | --docs DIR) [--work DIR]")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Stdout, *data, *docs, *split, *tune, *work); err != nil {
		fmt.Fprintln(os.Stderr, "rag-eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, data, docs, split string, tune bool, work string) error {
	if work == "" {
		tmp, err := os.MkdirTemp("", "rag-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	}
	e, err := newEnv(ctx, work)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Fprintf(w, "rag-eval: rag_basic and rag_crag through the in-process invoker and pipeline; offline embedder and generator (grade threshold %.2f); %s, GOMAXPROCS=%d\n",
		offline.GradeThreshold, runtime.Version(), runtime.GOMAXPROCS(0))
	var corpus []beir.Doc
	if data != "" {
		if corpus, err = beir.LoadCorpus(filepath.Join(data, "corpus.jsonl")); err != nil {
			return err
		}
	} else if corpus, err = readDocs(docs); err != nil {
		return err
	}
	if err := e.ingest(ctx, w, corpus); err != nil {
		return err
	}
	if tune {
		train, err := beir.Load(data, "train")
		if err != nil {
			return err
		}
		if err := e.tune(ctx, w, train); err != nil {
			return err
		}
	}
	if data != "" {
		ds, err := beir.Load(data, split)
		if err != nil {
			return err
		}
		if err := e.judged(ctx, w, ds, split); err != nil {
			return err
		}
	}
	_, err = e.offDomain(ctx, w)
	return err
}

// env is Switchboard assembled in process on a data folder.
type env struct {
	vectors *vector.Service
	inv     invoke.Invoker
	cat     *catalog.Catalog
	close   func() error
}

func newEnv(ctx context.Context, dir string) (*env, error) {
	cfg := config.Local(dir)
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, io.Discard)
	if err != nil {
		return nil, err
	}
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		closeFn()
		return nil, err
	}
	return &env{vectors: vector.New(deps.Table, deps.Blobs, deps.Embedder, nil), inv: stack, cat: catalog.Default(), close: closeFn}, nil
}

// ingest puts corpus into the store, unless the store already holds that
// many documents (a --work folder of an earlier run).
func (e *env) ingest(ctx context.Context, w io.Writer, corpus []beir.Doc) error {
	st, err := e.vectors.GetStore(ctx, caller, vector.StoreInput{Alias: storeAlias})
	switch {
	case err == nil && st.Documents == int64(len(corpus)):
		fmt.Fprintf(w, "reusing the store of %d documents, %d chunks\n", st.Documents, st.Chunks)
		return nil
	case err == nil:
		return fmt.Errorf("the --work folder holds a store of %d documents, not this corpus of %d: use another folder", st.Documents, len(corpus))
	case fault.KindOf(err) != fault.KindNotFound:
		return err
	}
	if _, err := e.vectors.CreateStore(ctx, caller, vector.CreateStoreInput{Alias: storeAlias, Description: "rag-eval corpus"}); err != nil {
		return err
	}
	start := time.Now()
	work := make(chan beir.Doc)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for d := range work {
				content := strings.TrimSpace(d.Title + "\n\n" + d.Text)
				_, err := e.vectors.Ingest(ctx, caller, vector.IngestInput{Store: storeAlias, DocID: d.ID, Format: "md", Content: content,
					Metadata: map[string]string{"source": d.ID}})
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("ingesting %s: %w", d.ID, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, d := range corpus {
		work <- d
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(w, "ingested %d documents in %s\n", len(corpus), time.Since(start).Round(time.Millisecond))
	return nil
}

// ask calls a RAG tool with question, as a host would, and returns its response.
func (e *env) ask(ctx context.Context, tool, question string) (rag.Response, error) {
	t, ok := e.cat.Tool(tool)
	if !ok {
		return rag.Response{}, fmt.Errorf("no tool %s", tool)
	}
	args, err := json.Marshal(map[string]any{"query": question, "top_k": topK, "stores": []string{storeAlias}})
	if err != nil {
		return rag.Response{}, err
	}
	resp, err := e.inv.Invoke(ctx, t.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: tool, Arguments: args, Caller: caller})
	if err != nil {
		return rag.Response{}, fmt.Errorf("%s %q: %w", tool, question, err)
	}
	if resp.Error != nil {
		return rag.Response{}, fmt.Errorf("%s %q: %s", tool, question, resp.Error.Message)
	}
	var result struct {
		StructuredContent rag.Response `json:"structuredContent"`
	}
	if err := json.Unmarshal(resp.Result, &result); err != nil {
		return rag.Response{}, fmt.Errorf("%s: decoding the result: %w", tool, err)
	}
	return result.StructuredContent, nil
}

// noRelevantDocuments reports whether r says the documents hold nothing
// relevant to the question, as rag_basic does when grading rejects them.
func noRelevantDocuments(r rag.Response) bool {
	return r.Metadata.Relevant == "no" && len(r.RetrievedDocuments) == 0 && r.Answer == ""
}

// pipelines are the tools compared.
var pipelines = []string{"rag_basic", "rag_crag"}

// judged asks both tools every judged query of ds and prints nDCG@10 of the
// documents they return.
func (e *env) judged(ctx context.Context, w io.Writer, ds *beir.Dataset, split string) error {
	var queries []beir.Query
	for _, q := range ds.Queries {
		if ds.Qrels[q.ID] != nil {
			queries = append(queries, q)
		}
	}
	fmt.Fprintf(w, "%d judged %s queries, top_k %d\n", len(queries), split, topK)
	for _, tool := range pipelines {
		run := beir.Run{}
		none, corrected := 0, 0
		start := time.Now()
		for _, q := range queries {
			r, err := e.ask(ctx, tool, q.Text)
			if err != nil {
				return err
			}
			var ids []string
			for _, d := range r.RetrievedDocuments {
				if !slices.Contains(ids, d.DocID) {
					ids = append(ids, d.DocID)
				}
			}
			run[q.ID] = ids
			if noRelevantDocuments(r) {
				none++
			}
			if a := r.Metadata.CorrectionApplied; a != nil && *a {
				corrected++
			}
		}
		fmt.Fprintf(w, "%-9s nDCG@10=%.4f  no relevant documents: %d of %d  answers from a corrected query: %d  (%s per query)\n",
			tool, beir.MeanNDCG(run, ds.Qrels, 10), none, len(queries), corrected, (time.Since(start) / time.Duration(len(queries))).Round(time.Microsecond))
	}
	return nil
}

// offDomain asks both tools the questions of other domains and prints, and
// returns by tool, the share answered with no relevant documents.
func (e *env) offDomain(ctx context.Context, w io.Writer) (map[string]float64, error) {
	qs := offDomainQuestions()
	rates := map[string]float64{}
	for _, tool := range pipelines {
		none := 0
		var found []string
		for _, q := range qs {
			r, err := e.ask(ctx, tool, q)
			if err != nil {
				return nil, err
			}
			if noRelevantDocuments(r) {
				none++
			} else {
				found = append(found, fmt.Sprintf("%q (%s)", q, strings.Join(r.Sources, ", ")))
			}
		}
		rates[tool] = float64(none) / float64(len(qs))
		fmt.Fprintf(w, "%-9s %d questions of other domains: no relevant documents for %d (%.0f%%)\n", tool, len(qs), none, 100*rates[tool])
		for _, f := range found {
			fmt.Fprintf(w, "          answered: %s\n", f)
		}
	}
	return rates, nil
}

// readDocs reads the .md and .txt files of dir as a corpus, each with its
// file name as id.
func readDocs(dir string) ([]beir.Doc, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []beir.Doc
	for _, en := range entries {
		if ext := filepath.Ext(en.Name()); en.IsDir() || ext != ".md" && ext != ".txt" || en.Name() == "LICENSES.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, beir.Doc{ID: en.Name(), Text: string(b)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no .md or .txt files in %s", dir)
	}
	return out, nil
}
