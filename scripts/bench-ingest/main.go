// Command bench-ingest measures the vector store's speed through the real
// Service on an S3-compatible store: it ingests 100,000 passages of 384
// dimensions (1,000 synthetic documents of 100 paragraphs, offline embedder)
// into gofakes3 running in process, behind the same s3 backend the functions
// use, with an embedded table; then it times the cold load of the store's
// shards by a fresh Service (an empty cache: a cold function) and the warm
// query p50 per mode:
//
//	go run ./scripts/bench-ingest
//	go run ./scripts/bench-ingest -documents 200 -cpuprofile /tmp/cpu.out # then: go tool pprof -top /tmp/cpu.out
//	go run ./scripts/bench-ingest -documents 200 -memprofile /tmp/mem.out # then: go tool pprof -sample_index alloc_space -top /tmp/mem.out
//
// Figures depend on the machine; the one they were taken on is shared.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

const (
	paragraphs = 100 // one passage each: a paragraph is longer than half the passage size
	queries    = 200
)

func main() {
	documents := flag.Int("documents", 1000, "documents ingested, of 100 passages each")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the ingestion to `file`")
	memprofile := flag.String("memprofile", "", "write a memory profile, taken after the ingestion, to `file`")
	flag.Parse()
	if *documents < 1 {
		fmt.Fprintln(os.Stderr, "bench-ingest: -documents must be positive")
		os.Exit(2)
	}
	if err := run(*documents, *cpuprofile, *memprofile); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ingest:", err)
		os.Exit(1)
	}
}

func run(documents int, cpuprofile, memprofile string) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "bench-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tbl, err := embedded.Open(filepath.Join(tmp, "switchboard.db"), nil)
	if err != nil {
		return err
	}
	defer tbl.Close()
	blobs, closeS3, err := fakeS3(ctx)
	if err != nil {
		return err
	}
	defer closeS3()

	emb := offline.NewEmbedder(offline.DefaultDims)
	caller := tenant.Caller{Tenant: "bench", Principal: "bench-ingest"}
	writer := vector.New(tbl, blobs, emb, &vector.Options{Cache: vector.NewCache(vector.DefaultCacheBytes)})
	if _, err := writer.CreateStore(ctx, caller, vector.CreateStoreInput{Alias: "bench", Description: "synthetic passages"}); err != nil {
		return err
	}
	fmt.Printf("machine: %s/%s, %d CPUs (shared with other work)\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("ingesting %d documents of %d paragraphs through vector.Service.Ingest into gofakes3 (%s/%s, %d dims)\n",
		documents, paragraphs, emb.Provider(), emb.Model(), emb.Dims())

	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	start := time.Now()
	work := make(chan int)
	var mu sync.Mutex
	var firstErr error
	chunks := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				out, err := writer.Ingest(ctx, caller, vector.IngestInput{Store: "bench", DocID: fmt.Sprintf("doc%04d", i), Format: "md", Content: document(i)})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("ingesting document %d: %w", i, err)
				}
				chunks += out.Chunks
				mu.Unlock()
			}
		})
	}
	for i := range documents {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	took := time.Since(start)
	pprof.StopCPUProfile()
	if memprofile != "" {
		if err := writeHeapProfile(memprofile); err != nil {
			return err
		}
	}
	st, err := writer.GetStore(ctx, caller, vector.StoreInput{Alias: "bench"})
	if err != nil {
		return err
	}
	var shardBytes int64
	page, err := blobs.List(ctx, tenant.BlobPrefix(caller.Tenant)+"vector/bench/shards/", &store.ListOptions{Limit: store.MaxQueryLimit})
	if err != nil {
		return err
	}
	for _, b := range page.Blobs {
		shardBytes += b.Size
	}
	fmt.Printf("ingestion: %d chunks in %v = %.0f chunks/s (compaction included; store: %d chunks in %d shards, %.1f MB)\n",
		chunks, took.Round(time.Millisecond), float64(chunks)/took.Seconds(), st.Chunks, st.Shards, float64(shardBytes)/1e6)

	// A cold function: a Service with an empty cache over the same stores.
	reader := vector.New(tbl, blobs, emb, &vector.Options{Cache: vector.NewCache(vector.DefaultCacheBytes)})
	rng := rand.New(rand.NewPCG(7, 7))
	question := func() string {
		return strings.Join([]string{word(rng), word(rng), word(rng), word(rng)}, " ")
	}
	t0 := time.Now()
	if _, err := reader.Retrieve(ctx, caller, vector.RetrieveInput{Question: question(), Stores: []string{"bench"}, TopK: 10}); err != nil {
		return err
	}
	fmt.Printf("cold load: first query %v (manifest and %d shards, %.1f MB, read from S3 and decoded)\n",
		time.Since(t0).Round(time.Millisecond), st.Shards, float64(shardBytes)/1e6)

	for _, mode := range []string{"hybrid", "bm25", "vector"} {
		var lat []time.Duration
		for range queries {
			q := question()
			t := time.Now()
			if _, err := reader.Retrieve(ctx, caller, vector.RetrieveInput{Question: q, Stores: []string{"bench"}, TopK: 10, Mode: mode}); err != nil {
				return err
			}
			lat = append(lat, time.Since(t))
		}
		slices.Sort(lat)
		fmt.Printf("warm query, mode %-6s top 10 of %d chunks: p50 %v, p90 %v (embedding and search; ETags rechecked every 30 s)\n",
			mode, st.Chunks, lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*9/10].Round(time.Microsecond))
	}
	// The same with an ETag check (a Head per shard) on every query.
	strict := vector.New(tbl, blobs, emb, &vector.Options{Cache: vector.NewCache(vector.DefaultCacheBytes), Revalidate: -1})
	if _, err := strict.Retrieve(ctx, caller, vector.RetrieveInput{Question: question(), Stores: []string{"bench"}}); err != nil {
		return err
	}
	var lat []time.Duration
	for range queries {
		q := question()
		t := time.Now()
		if _, err := strict.Retrieve(ctx, caller, vector.RetrieveInput{Question: q, Stores: []string{"bench"}, TopK: 10}); err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	fmt.Printf("warm query, mode hybrid, with a Head per shard per query (Revalidate < 0): p50 %v\n", lat[len(lat)/2].Round(time.Microsecond))
	return nil
}

// writeHeapProfile writes the allocations so far to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// vocabulary is a synthetic vocabulary; words are drawn with a Zipf-like skew.
var vocabulary = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, 20000)
	for i := range words {
		n := 3 + r.IntN(8)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		words[i] = string(b)
	}
	return words
}()

func word(r *rand.Rand) string {
	// The square of a uniform variate favours low indexes: frequent words.
	u := r.Float64()
	return vocabulary[int(u*u*float64(len(vocabulary)))]
}

// document returns synthetic document i: paragraphs of about 1,100
// characters, each a passage of its own.
func document(i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	var b strings.Builder
	for p := range paragraphs {
		if p > 0 {
			b.WriteString("\n\n")
		}
		n := 0
		for n < 1100 {
			w := word(r)
			if n == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			n += len(w) + 1
			if r.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('.')
	}
	return b.String()
}

// fakeS3 starts gofakes3 in process and returns the s3 backend on a bucket
// of it, as the functions talk to S3: path-style, static credentials.
func fakeS3(ctx context.Context) (store.Blobs, func(), error) {
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("bench-key-id", "bench-secret", ""),
		HTTPClient:   srv.Client(),
	})
	const bucket = "switchboard-bench"
	if _, err := client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		srv.Close()
		return nil, nil, fmt.Errorf("creating bucket %s on gofakes3: %w", bucket, err)
	}
	return s3.New(client, bucket), srv.Close, nil
}
