// Package retrievaltest generates vectors for the tests and benchmarks of
// package retrieval.
package retrievaltest

import (
	"math"
	"math/rand/v2"
)

// Clustered generates unit vectors drawn around random centres, as
// embeddings of a corpus of many subjects are: the centres themselves lie
// around 32 topics (a centre is its topic plus Gaussian noise of norm about
// 1, normalised), and vector i is its centre (picked by i) plus Gaussian
// noise of the centre's own spread (norm 1-2, so a point's cosine with
// its centre is about 0.45-0.7), normalised.
// Every vector is a function of the seed and its index alone, so a
// benchmark can generate, drop and regenerate a block of a collection larger
// than memory, and queries come from a stream of their own.
type Clustered struct {
	seed    uint64
	dims    int
	centres [][]float32
	spread  []float64
}

// NewClustered returns the generator of dims-dimension vectors around
// centres centres, from seed.
func NewClustered(seed uint64, dims, centres int) *Clustered {
	rng := rand.New(rand.NewPCG(seed, 0))
	g := &Clustered{seed: seed, dims: dims, centres: make([][]float32, centres), spread: make([]float64, centres)}
	topics := make([][]float32, 32)
	for t := range topics {
		topics[t] = Unit(rng, dims)
	}
	for c := range g.centres {
		g.centres[c] = make([]float32, dims)
		around(g.centres[c], topics[rng.IntN(len(topics))], 1, rng)
		g.spread[c] = 1 + rng.Float64()
	}
	return g
}

// Vector writes vector i of the collection into dst (dims long).
func (g *Clustered) Vector(dst []float32, i int) { g.point(dst, 1, uint64(i)) }

// Query writes query j into dst: a point drawn like the collection's,
// from another stream.
func (g *Clustered) Query(dst []float32, j int) { g.point(dst, 2, uint64(j)) }

func (g *Clustered) point(dst []float32, stream, i uint64) {
	rng := rand.New(rand.NewPCG(g.seed^stream<<56, i))
	c := rng.IntN(len(g.centres))
	around(dst, g.centres[c], g.spread[c], rng)
}

// around writes centre plus Gaussian noise of norm about spread into dst,
// normalised.
func around(dst, centre []float32, spread float64, rng *rand.Rand) {
	sigma := spread / math.Sqrt(float64(len(centre)))
	var ss float64
	for j, x := range centre {
		v := float64(x) + sigma*rng.NormFloat64()
		dst[j] = float32(v)
		ss += v * v
	}
	inv := float32(1 / math.Sqrt(ss))
	for j := range dst {
		dst[j] *= inv
	}
}

// Unit returns a random unit vector of dims dimensions.
func Unit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var ss float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		ss += x * x
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return v
}
