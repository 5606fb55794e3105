package retrieval

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSearchVector100k is the speed figure: exact top-10 over
// 100,000 chunks of 384 dimensions (run with -cpu 1 for one core; the full
// percentile report is scripts/bench-vector).
func BenchmarkSearchVector100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dims = 100_000, 384
	chunks := make([]Chunk, n)
	for i := range chunks {
		chunks[i] = Chunk{ID: fmt.Sprintf("c%06d", i), DocID: fmt.Sprintf("d%06d", i), Vector: unit(rng, dims)}
	}
	s, err := NewSegment(chunks, dims)
	if err != nil {
		b.Fatal(err)
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = unit(rng, dims)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := Search([]*Segment{s}, Query{Vector: qs[i%len(qs)], Mode: ModeVector, K: 10}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkSearchBM25(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := NewSegment(randomChunks(rng, 20_000, 0), 0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Search([]*Segment{s}, Query{Text: "protein cancer growth receptor", Mode: ModeBM25, K: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSegment100k is the CPU part of a cold load: decoding a
// 100,000-chunk, 384-dimension segment (194 MB) already in memory.
func BenchmarkDecodeSegment100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dims = 100_000, 384
	chunks := make([]Chunk, n)
	for i := range chunks {
		chunks[i] = Chunk{ID: fmt.Sprintf("c%06d", i), DocID: fmt.Sprintf("d%06d", i), Vector: unit(rng, dims)}
	}
	s, err := NewSegment(chunks, dims)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := s.MarshalBinary()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := DecodeSegment(data); err != nil {
			b.Fatal(err)
		}
	}
}
