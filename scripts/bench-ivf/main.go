// Command bench-ivf measures inverted-file search beside the exact scan: for
// each size it generates clustered synthetic unit vectors
// (retrievaltest.Clustered, seeded), trains centroids as a store's
// compaction does (retrieval.KMeans on a sample of 64 vectors per cluster,
// k = retrieval.Clusters(n)), partitions the vectors into shards of
// 50,000 (retrieval.Partition, as compaction writes them), and then, on one
// core, runs the same queries through retrieval.Search exactly (no probe:
// every vector scanned) and with a probe at each nprobe, printing p50 and
// p90 per query and recall@k against the exact results, as one table.
// Vectors are held in memory as the shards hold them (float32 and int8:
// 5 bytes a dimension, 9.6 GB for 5M × 384).
//
//	go run ./scripts/bench-ivf                          # 1M and 5M
//	go run ./scripts/bench-ivf -sizes 20000 -queries 50 # a quick look
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/retrieval/retrievaltest"
)

func main() {
	sizes := flag.String("sizes", "1000000,5000000", "collection sizes, comma-separated")
	dims := flag.Int("dims", 384, "dimensions")
	centres := flag.Int("centres", 1000, "the generator's cluster centres")
	queries := flag.Int("queries", 200, "queries (at least 200 for stable percentiles)")
	k := flag.Int("k", 10, "top k")
	nprobes := flag.String("nprobe", "1,2,4,8,16,32,64,default", "nprobe values, comma-separated (default: retrieval.DefaultNProbe)")
	shard := flag.Int("shard", 50_000, "vectors per shard")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-ivf: -sizes:", err)
			os.Exit(2)
		}
		if err := run(n, *dims, *centres, *queries, *k, *shard, *nprobes, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "bench-ivf:", err)
			os.Exit(1)
		}
	}
}

func run(n, dims, centres, queries, k, shard int, nprobes string, seed uint64) error {
	ctx := context.Background()
	runtime.GOMAXPROCS(2)
	g := retrievaltest.NewClustered(seed, dims, centres)
	clusters := retrieval.Clusters(int64(n))
	size := min(n, 64*clusters)
	sample := make([]float32, size*dims)
	for j := range size {
		g.Vector(sample[j*dims:(j+1)*dims], j*(n/size))
	}
	start := time.Now()
	cs, spread, err := retrieval.KMeans(ctx, "bench", sample, dims, retrieval.KMeansOptions{K: clusters, Seed: seed})
	if err != nil {
		return err
	}
	train := time.Since(start)
	sample = nil

	// Shards are built two at a time (the build is not what is measured).
	start = time.Now()
	segs := make([]*retrieval.Segment, (n+shard-1)/shard)
	errs := make([]error, len(segs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for b := range segs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			lo, hi := b*shard, min((b+1)*shard, n)
			chunks := make([]retrieval.Chunk, hi-lo)
			for i := range chunks {
				v := make([]float32, dims)
				g.Vector(v, lo+i)
				chunks[i] = retrieval.Chunk{ID: fmt.Sprintf("c%08d", lo+i), DocID: fmt.Sprintf("d%08d", lo+i), Vector: v}
			}
			seg, err := retrieval.NewSegment(chunks, dims)
			if err != nil {
				errs[b] = err
				return
			}
			segs[b], _, errs[b] = retrieval.Partition(ctx, []*retrieval.Segment{seg}, nil, cs)
		})
	}
	wg.Wait()
	if err := errorsJoin(errs); err != nil {
		return err
	}
	build := time.Since(start)
	runtime.GC()
	runtime.GOMAXPROCS(1)

	qs := make([][]float32, queries)
	for j := range qs {
		qs[j] = make([]float32, dims)
		g.Query(qs[j], j)
	}
	type method struct {
		name   string
		probe  *retrieval.Probe
		took   []time.Duration
		found  int
		nprobe int
	}
	methods := []*method{{name: "exact scan"}}
	for _, f := range strings.Split(nprobes, ",") {
		np := retrieval.DefaultNProbe(cs.K())
		name := fmt.Sprintf("IVF nprobe %d (default)", np)
		if f != "default" {
			if np, err = strconv.Atoi(f); err != nil {
				return fmt.Errorf("-nprobe: %w", err)
			}
			name = fmt.Sprintf("IVF nprobe %d", np)
		}
		methods = append(methods, &method{name: name, nprobe: np,
			probe: &retrieval.Probe{Centroids: map[string]*retrieval.Centroids{cs.ID(): cs}, NProbe: np}})
	}
	search := func(m *method, q []float32) ([]retrieval.Hit, error) {
		return retrieval.Search(segs, retrieval.Query{Vector: q, Mode: retrieval.ModeVector, K: k, Probe: m.probe})
	}
	for _, m := range methods { // warm up
		if _, err := search(m, qs[0]); err != nil {
			return err
		}
	}
	for _, q := range qs {
		var exact map[string]bool
		for _, m := range methods {
			start := time.Now()
			hits, err := search(m, q)
			m.took = append(m.took, time.Since(start))
			if err != nil {
				return err
			}
			if exact == nil {
				exact = map[string]bool{}
				for _, h := range hits {
					exact[h.ChunkID] = true
				}
			}
			for _, h := range hits {
				if exact[h.ChunkID] {
					m.found++
				}
			}
		}
	}
	fmt.Printf("\n%d clustered vectors (%d centres), %d dims, %d shards of %d; k-means k=%d on %d samples: %.1f s (spread %.3f); partitioning %.1f s on 2 cores\n",
		n, centres, dims, len(segs), shard, cs.K(), size, train.Seconds(), spread, build.Seconds())
	fmt.Printf("%d queries, top %d, GOMAXPROCS=1 %s/%s\n\n", queries, k, runtime.GOOS, runtime.GOARCH)
	fmt.Printf("| %-26s | %9s | %9s | %9s | %11s |\n", "search", "p50", "p90", "recall@"+strconv.Itoa(k), "scanned")
	fmt.Printf("|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 28), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 13))
	for _, m := range methods {
		scanned := "100%"
		if m.probe != nil {
			scanned = fmt.Sprintf("~%.1f%%", 100*float64(min(m.nprobe, cs.K()))/float64(cs.K()))
		}
		fmt.Printf("| %-26s | %6.2f ms | %6.2f ms | %9.4f | %11s |\n", m.name, ms(percentile(m.took, 0.5)), ms(percentile(m.took, 0.9)),
			float64(m.found)/float64(k*len(qs)), scanned)
	}
	return nil
}

func errorsJoin(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
