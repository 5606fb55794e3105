// Command bench-rag measures a RAG pipeline tool (rag_basic unless -tool
// names another) end to end on the local endpoint (issue #3, "Speed":
// end-to-end rag_basic p50 on the local endpoint; issue 15: every pipeline's).
//
// It assembles Switchboard as `go run ./functions/gateway` does: an embedded
// table and a local blob folder in a temporary directory, the configured
// (by default offline) embedder and generator, every function's handler in
// process behind the gateway's invoker, and the pipeline runner that
// interprets infra/statemachines/rag_pipeline.asl.json with its steps invoked
// through that same invoker. It serves the gateway on a loopback port and
// talks MCP to it over HTTP, as a host would.
//
// It first creates a vector store and ingests a small corpus through
// vector_document_ingest: the relevant documents of the first -n test queries
// of a BEIR folder (SciFact by default) plus the first -docs documents of its
// corpus. Then it sends the -n queries to the tool one after another (after
// -warmup unmeasured ones), checks every answer is a successful result, and
// prints the p50, p90 and max latency per call, the pipeline's own split
// (retrieval_time_ms, generation_time_ms from performance_metrics), and how
// often a relevant document was among the retrieved ones.
//
//	go run ./scripts/bench-rag -data ../shared/eval/scifact   # -n 100 -docs 300 -tool rag_basic
//	go run ./scripts/bench-rag -tool rag_pylate_colbert -args '{"candidate_source":"centroid"}'
//
// -args adds arguments to every call (JSON object). The warm-up calls also
// build what a pipeline builds on first use (rag_pylate_colbert's token
// vectors, rag_iris_global_graphrag's community reports), so the measured
// calls are warm.
//
// It is a benchmark, not a test: it prints figures and asserts nothing about
// time. It exits 1 if any call failed.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

const (
	protocolVersion = "2025-11-25"
	store           = "bench"
)

func main() {
	data := flag.String("data", "../shared/eval/scifact", "a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
	split := flag.String("split", "test", "the qrels split whose queries are asked")
	n := flag.Int("n", 100, "measured calls (one per query)")
	warmup := flag.Int("warmup", 5, "unmeasured calls first")
	docs := flag.Int("docs", 300, "corpus documents ingested besides the queries' relevant ones")
	topK := flag.Int("top_k", 5, "the tool's top_k")
	tool := flag.String("tool", "rag_basic", "the pipeline `tool` to call: any tool of the catalog's rag family but rag_health_check")
	extra := flag.String("args", "{}", "more arguments of every call, a JSON object")
	flag.Parse()
	if t, ok := catalog.Default().Tool(*tool); !ok || t.Family != catalog.RAGFamily || *tool == "rag_health_check" {
		fmt.Fprintf(os.Stderr, "bench-rag: %q is not a RAG pipeline tool\n", *tool)
		os.Exit(2)
	}
	var more map[string]any
	if *n < 1 || *warmup < 0 || *docs < 0 || *topK < 1 || *topK > rag.MaxTopK || json.Unmarshal([]byte(*extra), &more) != nil {
		fmt.Fprintln(os.Stderr, "bench-rag: -n must be positive, -warmup and -docs not negative, -top_k within 1..50, -args a JSON object")
		os.Exit(2)
	}
	if err := run(context.Background(), *tool, more, *data, *split, *n, *warmup, *docs, *topK, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rag:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, tool string, more map[string]any, data, split string, n, warmup, extra, topK int, w io.Writer) error {
	queries, corpus, qrels, err := loadBEIR(data, split, n+warmup, extra)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-rag-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	h, closeFn, err := newGateway(ctx, dir)
	if err != nil {
		return err
	}
	defer closeFn()
	url, stop, err := serve(h)
	if err != nil {
		return err
	}
	defer stop()
	client := &http.Client{Timeout: time.Minute}

	fmt.Fprintf(w, "bench-rag: %s %v through the local gateway on %s (in process: invoke.Local, pipeline.Local over rag_pipeline.asl.json)\n", tool, more, url)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS=%d, NumCPU=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())
	t0 := time.Now()
	if _, err := call(ctx, client, url, "vector_store_create", map[string]any{"alias": store, "description": "SciFact abstracts: biomedical research findings"}); err != nil {
		return err
	}
	for _, d := range corpus {
		args := map[string]any{"store": store, "doc_id": d.ID, "content": strings.TrimSpace(d.Title + "\n\n" + d.Text), "format": "md",
			"metadata": map[string]string{"source": "scifact/" + d.ID}}
		if _, err := call(ctx, client, url, "vector_document_ingest", args); err != nil {
			return fmt.Errorf("ingesting %s: %w", d.ID, err)
		}
	}
	fmt.Fprintf(w, "ingested %d documents in %s\n", len(corpus), time.Since(t0).Round(time.Millisecond))

	var lat, retrieval, generation []time.Duration
	hits := 0
	for i, q := range queries {
		args := map[string]any{"query": q.Text, "top_k": topK, "stores": []string{store}}
		maps.Copy(args, more)
		t := time.Now()
		sc, err := call(ctx, client, url, tool, args)
		d := time.Since(t)
		if err != nil {
			return fmt.Errorf("%s %q: %w", tool, q.Text, err)
		}
		var resp rag.Response
		if err := json.Unmarshal(sc, &resp); err != nil {
			return fmt.Errorf("%s: decoding the response: %w", tool, err)
		}
		if i < warmup {
			continue
		}
		lat = append(lat, d)
		retrieval = append(retrieval, time.Duration(resp.PerformanceMetrics.RetrievalTimeMS)*time.Millisecond)
		generation = append(generation, time.Duration(resp.PerformanceMetrics.GenerationTimeMS)*time.Millisecond)
		if slices.ContainsFunc(resp.RetrievedDocuments, func(d rag.RetrievedDocument) bool { return qrels[q.ID][d.DocID] }) {
			hits++
		}
	}
	for _, s := range [][]time.Duration{lat, retrieval, generation} {
		slices.Sort(s)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(w, "%s, %d sequential calls (top_k %d, after %d warm-up): p50 %s  p90 %s  max %s\n",
		tool, len(lat), topK, warmup, ms(percentile(lat, 50)), ms(percentile(lat, 90)), ms(lat[len(lat)-1]))
	fmt.Fprintf(w, "  of which, p50: pipeline (rephrase, retrieve, grade) %s, answer generation %s\n", ms(percentile(retrieval, 50)), ms(percentile(generation, 50)))
	fmt.Fprintf(w, "  a relevant document retrieved for %d of %d queries (graded relevant documents only)\n", hits, len(lat))
	return nil
}

// newGateway assembles the local server as launch does for `go run
// ./functions/gateway`, acting for the local tenant (the fresh table holds
// no API key).
func newGateway(ctx context.Context, dir string) (http.Handler, func() error, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := config.Local(filepath.Join(dir, "data"))
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, MultiVector: providers.OpenMultiVector}, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	deps.Logger = logger
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	gw, err := gateway.New(gateway.Options{
		Catalog:   catalog.Default(),
		Invoker:   stack,
		Keys:      apikey.New(deps.Table, nil),
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
		Logger:    logger,
	})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return gw.Handler(), closeFn, nil
}

// serve serves h on a free loopback port and returns its MCP URL.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}

// call sends a tools/call as a 2025-11-25 client does (the server is
// stateless: no initialize) and returns the result's structured content.
func call(ctx context.Context, client *http.Client, url, tool string, args any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", tool, resp.StatusCode, raw)
	}
	// The answer is one SSE event (or plain JSON) holding the JSON-RPC response.
	payload := raw
	for line := range strings.SplitSeq(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			payload = []byte(d)
		}
	}
	var rpc struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(payload, &rpc); err != nil {
		return nil, fmt.Errorf("%s: undecodable answer %q: %w", tool, raw, err)
	}
	if rpc.Error != nil {
		return nil, fmt.Errorf("%s: %s", tool, rpc.Error.Message)
	}
	if rpc.Result == nil || rpc.Result.IsError {
		return nil, fmt.Errorf("%s: tool error: %s", tool, payload)
	}
	return json.Marshal(rpc.Result.StructuredContent)
}

type beirDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// loadBEIR reads the first nq queries of split that have judgements, and
// the corpus documents to ingest: their relevant ones plus the first extra.
func loadBEIR(dir, split string, nq, extra int) (queries []beirDoc, corpus []beirDoc, qrels map[string]map[string]bool, err error) {
	qrels = map[string]map[string]bool{}
	f, err := os.Open(filepath.Join(dir, "qrels", split+".tsv"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading judgements (is -data a BEIR folder?): %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[0] == "query-id" || fields[2] == "0" {
			continue
		}
		if qrels[fields[0]] == nil {
			qrels[fields[0]] = map[string]bool{}
		}
		qrels[fields[0]][fields[1]] = true
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, err
	}
	err = eachJSONL(filepath.Join(dir, "queries.jsonl"), func(q beirDoc) bool {
		if qrels[q.ID] != nil {
			queries = append(queries, q)
		}
		return len(queries) < nq
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if len(queries) == 0 {
		return nil, nil, nil, errors.New("no judged queries found")
	}
	want := map[string]bool{}
	for _, q := range queries {
		for id := range qrels[q.ID] {
			want[id] = true
		}
	}
	i := 0
	err = eachJSONL(filepath.Join(dir, "corpus.jsonl"), func(d beirDoc) bool {
		if want[d.ID] || i < extra {
			corpus = append(corpus, d)
		}
		i++
		return true
	})
	return queries, corpus, qrels, err
}

func eachJSONL(path string, fn func(beirDoc) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var d beirDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !fn(d) {
			return nil
		}
	}
	return sc.Err()
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
