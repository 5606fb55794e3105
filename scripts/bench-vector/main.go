// Command bench-vector measures exact top-k vector search on one core: it
// builds n seeded random unit vectors into a retrieval.Segment, runs random
// queries through retrieval.Search (int8 scan + float32 rescoring), and prints
// p50/p90 per query, recall@k against a float32 brute force, and that brute
// force's own time (a plain, non-SIMD Go float32 scan). It also times encoding
// and decoding the segment (the CPU part of a cold load).
//
//	go run ./scripts/bench-vector                 # AVX2 kernel on amd64
//	go run -tags purego ./scripts/bench-vector    # the portable kernel (what arm64 runs)
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
)

func main() {
	n := flag.Int("n", 100_000, "vectors")
	dims := flag.Int("dims", 384, "dimensions")
	queries := flag.Int("queries", 300, "queries (at least 200 for stable percentiles)")
	k := flag.Int("k", 10, "top k")
	rescore := flag.Int("rescore", 0, "float32 rescoring candidates (0: retrieval's default)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	if err := run(*n, *dims, *queries, *k, *rescore, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "bench-vector:", err)
		os.Exit(1)
	}
}

func unit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var s float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func run(n, dims, queries, k, rescore int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	chunks := make([]retrieval.Chunk, n)
	flat := make([]float32, 0, n*dims)
	for i := range chunks {
		v := unit(rng, dims)
		chunks[i] = retrieval.Chunk{ID: fmt.Sprintf("c%06d", i), DocID: fmt.Sprintf("d%06d", i), Vector: v}
		flat = append(flat, v...)
	}
	start := time.Now()
	seg, err := retrieval.NewSegment(chunks, dims)
	if err != nil {
		return err
	}
	build := time.Since(start)
	start = time.Now()
	data, err := seg.MarshalBinary()
	if err != nil {
		return err
	}
	encode := time.Since(start)
	start = time.Now()
	if seg, err = retrieval.DecodeSegment(data); err != nil {
		return err
	}
	decode := time.Since(start)
	chunks = nil
	runtime.GC()

	var tuning *retrieval.Tuning
	if rescore > 0 {
		tuning = &retrieval.Tuning{Rescore: rescore}
	}
	segs := []*retrieval.Segment{seg}
	qs := make([][]float32, queries)
	for i := range qs {
		qs[i] = unit(rng, dims)
	}
	// Warm up caches and the allocator.
	for _, q := range qs[:min(10, len(qs))] {
		if _, err := retrieval.Search(segs, retrieval.Query{Vector: q, Mode: retrieval.ModeVector, K: k, Tuning: tuning}); err != nil {
			return err
		}
	}
	var took, flatTook []time.Duration
	found := 0
	for _, q := range qs {
		start := time.Now()
		hits, err := retrieval.Search(segs, retrieval.Query{Vector: q, Mode: retrieval.ModeVector, K: k, Tuning: tuning})
		took = append(took, time.Since(start))
		if err != nil {
			return err
		}
		start = time.Now()
		want := bruteForce(flat, dims, q, k)
		flatTook = append(flatTook, time.Since(start))
		for _, h := range hits {
			if want[h.Index] {
				found++
			}
		}
	}
	fmt.Printf("vectors=%d dims=%d queries=%d k=%d GOMAXPROCS=1 %s/%s\n", n, dims, queries, k, runtime.GOOS, runtime.GOARCH)
	fmt.Printf("segment: build %s, encode %s, decode %s, %.1f MB\n", ms(build), ms(encode), ms(decode), float64(len(data))/1e6)
	fmt.Printf("retrieval.Search (int8 SIMD scan + float32 rescoring; float32 scan under purego): p50 %s  p90 %s  recall@%d vs float32 %.4f\n",
		ms(percentile(took, 0.5)), ms(percentile(took, 0.9)), k, float64(found)/float64(k*len(qs)))
	fmt.Printf("float32 brute force (plain Go): p50 %s  p90 %s\n", ms(percentile(flatTook, 0.5)), ms(percentile(flatTook, 0.9)))
	return nil
}

// bruteForce returns the indexes of the k vectors with the highest dot
// product with q, computed in float32.
func bruteForce(flat []float32, dims int, q []float32, k int) map[int]bool {
	type scored struct {
		i int
		s float32
	}
	top := make([]scored, 0, k+1)
	n := len(flat) / dims
	for i := 0; i < n; i++ {
		v := flat[i*dims : (i+1)*dims]
		var s0, s1, s2, s3 float32
		for j := 0; j+4 <= dims; j += 4 {
			s0 += q[j] * v[j]
			s1 += q[j+1] * v[j+1]
			s2 += q[j+2] * v[j+2]
			s3 += q[j+3] * v[j+3]
		}
		for j := dims &^ 3; j < dims; j++ {
			s0 += q[j] * v[j]
		}
		s := s0 + s1 + s2 + s3
		if len(top) == k && s <= top[k-1].s {
			continue
		}
		top = append(top, scored{i, s})
		sort.Slice(top, func(a, b int) bool { return top[a].s > top[b].s })
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make(map[int]bool, k)
	for _, t := range top {
		out[t.i] = true
	}
	return out
}
