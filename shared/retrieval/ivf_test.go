package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/retrieval/retrievaltest"
)

// clusteredSegments returns n clustered vectors as segments of per chunks
// each (every chunk with a word of text and, every 7th, metadata), and the
// generator's queries.
func clusteredSegments(t *testing.T, n, per, dims int) ([]*Segment, *retrievaltest.Clustered) {
	t.Helper()
	g := retrievaltest.NewClustered(1, dims, 32)
	var segs []*Segment
	for lo := 0; lo < n; lo += per {
		chunks := make([]Chunk, min(per, n-lo))
		for j := range chunks {
			i := lo + j
			v := make([]float32, dims)
			g.Vector(v, i)
			chunks[j] = Chunk{ID: fmt.Sprintf("c%06d", i), DocID: fmt.Sprintf("d%06d", i/2), Text: fmt.Sprintf("word%d common", i%50), Vector: v}
			if i%7 == 0 {
				chunks[j].Metadata = map[string]string{"rare": "yes"}
			}
		}
		s, err := NewSegment(chunks, dims)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	return segs, g
}

// sample returns every step-th vector of segs, flat.
func sample(segs []*Segment, step int) []float32 {
	var out []float32
	i := 0
	for _, s := range segs {
		for j := range s.Len() {
			if i%step == 0 {
				out = append(out, s.vecs[j*s.dims:(j+1)*s.dims]...)
			}
			i++
		}
	}
	return out
}

func partitionEach(t *testing.T, segs []*Segment, cs *Centroids) []*Segment {
	t.Helper()
	out := make([]*Segment, len(segs))
	for i, s := range segs {
		p, _, err := Partition(context.Background(), []*Segment{s}, nil, cs)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = p
	}
	return out
}

func TestKMeansIsDeterministicGivenItsSeed(t *testing.T) {
	segs, _ := clusteredSegments(t, 3000, 3000, 32)
	x := sample(segs, 1)
	a, spreadA, err := KMeans(context.Background(), "a", x, 32, KMeansOptions{K: 40, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, spreadB, err := KMeans(context.Background(), "a", x, 32, KMeansOptions{K: 40, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.vecs, b.vecs) || spreadA != spreadB {
		t.Error("two runs with the same seed gave different centroids")
	}
	c, _, err := KMeans(context.Background(), "a", x, 32, KMeansOptions{K: 40, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.vecs, c.vecs) {
		t.Error("another seed gave the same centroids")
	}
	if spreadA <= 0 || spreadA >= 1 {
		t.Errorf("spread %.3f, want within (0, 1)", spreadA)
	}
}

// TestAssignFindsTheNearestCentroid checks the bulk assignment against
// Nearest's exact float32 scan: the int8 shortlist may only pick a centroid
// tied in float32, and Centroid returns the rows Nearest scores.
func TestAssignFindsTheNearestCentroid(t *testing.T) {
	segs, _ := clusteredSegments(t, 2000, 2000, 32)
	x := sample(segs, 1)
	cs, _, err := KMeans(context.Background(), "a", x, 32, KMeansOptions{K: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := cs.Assign([]uint32{99}, x)
	if len(got) != 1+len(x)/32 || got[0] != 99 {
		t.Fatalf("%d assignments after the prefix %d, want %d after 99", len(got)-1, got[0], len(x)/32)
	}
	for i, a := range got[1:] {
		v := x[i*32 : (i+1)*32]
		want := cs.Nearest(v, 1)[0]
		if a != want && dotFloat(v, cs.Centroid(int(a))) != dotFloat(v, cs.Centroid(int(want))) {
			t.Fatalf("vector %d assigned to %d, nearest is %d", i, a, want)
		}
	}
}

func TestKMeansRefusesWhatItCannotCluster(t *testing.T) {
	x := make([]float32, 10*8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		sample []float32
		k      int
	}{
		{"more clusters than vectors", context.Background(), x, 11},
		{"no clusters", context.Background(), x, 0},
		{"a sample that is not whole vectors", context.Background(), x[:13], 2},
		{"a cancelled context", ctx, x, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := KMeans(tt.ctx, "a", tt.sample, 8, KMeansOptions{K: tt.k}); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestPartitionKeepsWhatMergeKeeps: a partitioned segment holds the chunks a
// merge would, in cluster order, and ranks BM25 and (probing every cluster)
// vectors exactly as the merge does, before and after encoding.
func TestPartitionKeepsWhatMergeKeeps(t *testing.T) {
	segs, g := clusteredSegments(t, 2000, 700, 16)
	cs, _, err := KMeans(context.Background(), "cs1", sample(segs, 2), 16, KMeansOptions{K: 24, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	keep := func(s, i int) bool { return (s+i)%5 != 0 }
	merged, err := Merge(segs, keep)
	if err != nil {
		t.Fatal(err)
	}
	part, _, err := Partition(context.Background(), segs, keep, cs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := part.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeSegment(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(part, decoded, cmp.AllowUnexported(Segment{})); diff != "" {
		t.Fatalf("decoded partitioned segment differs (-written +read):\n%s", diff)
	}
	ids := func(s *Segment) []string { return slices.Sorted(slices.Values(s.ids)) }
	if !slices.Equal(ids(merged), ids(part)) {
		t.Fatal("the partition holds other chunks than the merge")
	}
	for i := range part.parts {
		for j := part.starts[i]; j < part.starts[i+1]; j++ {
			if c, _ := cs.assigner().nearest(part.vecs[int(j)*16 : int(j+1)*16]); c != int(part.parts[i]) {
				t.Fatalf("chunk %d lies in the run of cluster %d, its nearest is %d", j, part.parts[i], c)
			}
		}
	}
	name := func(h []Hit) []string {
		var out []string
		for _, x := range h {
			out = append(out, fmt.Sprintf("%s %.6f", x.ChunkID, x.Score))
		}
		return out
	}
	q := make([]float32, 16)
	for j := range 20 {
		g.Query(q, j)
		for _, mode := range []Mode{ModeBM25, ModeVector, ModeHybrid} {
			query := Query{Text: fmt.Sprintf("word%d", j), Vector: q, Mode: mode, K: 10, Probe: &Probe{Centroids: map[string]*Centroids{"cs1": cs}, NProbe: cs.K()}}
			want, err := Search([]*Segment{merged}, query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Search([]*Segment{decoded}, query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(name(want), name(got)); diff != "" {
				t.Errorf("query %d, %s: partitioned ranking differs (-merged +partitioned):\n%s", j, mode, diff)
			}
		}
	}
}

// TestProbeRecall is a small version of scripts/bench-ivf: 20,000 clustered
// vectors in partitioned segments, searched with the default nprobe, find
// at least 95% of the exact top 10; probing every cluster finds all of it.
func TestProbeRecall(t *testing.T) {
	const n, dims = 20_000, 64
	segs, g := clusteredSegments(t, n, 5000, dims)
	cs, _, err := KMeans(context.Background(), "cs1", sample(segs, 2), dims, KMeansOptions{K: Clusters(n), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	parts := partitionEach(t, segs, cs)
	tests := []struct {
		name   string
		nprobe int
		want   float64
	}{
		{"the default nprobe", 0, 0.95},
		{"every cluster", cs.K(), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found, total := 0, 0
			q := make([]float32, dims)
			for j := range 200 {
				g.Query(q, j)
				exact, err := Search(segs, Query{Vector: q, Mode: ModeVector, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				got, err := Search(parts, Query{Vector: q, Mode: ModeVector, K: 10, Probe: &Probe{Centroids: map[string]*Centroids{"cs1": cs}, NProbe: tt.nprobe}})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]bool{}
				for _, h := range exact {
					want[h.ChunkID] = true
				}
				for _, h := range got {
					if want[h.ChunkID] {
						found++
					}
				}
				total += len(exact)
			}
			if recall := float64(found) / float64(total); recall < tt.want {
				t.Errorf("recall@10 %.4f, want at least %.2f (k %d, nprobe %d)", recall, tt.want, cs.K(), tt.nprobe)
			}
		})
	}
}

// TestProbeFallsBackToTheWholeScan: when the probed clusters hold fewer
// chunks that pass the filter than the search needs, every chunk is scanned.
func TestProbeFallsBackToTheWholeScan(t *testing.T) {
	const dims = 16
	segs, g := clusteredSegments(t, 3000, 3000, dims)
	cs, _, err := KMeans(context.Background(), "cs1", sample(segs, 1), dims, KMeansOptions{K: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	parts := partitionEach(t, segs, cs)
	q := make([]float32, dims)
	g.Query(q, 3)
	query := Query{Vector: q, Mode: ModeVector, K: 50, Filter: Filter{"rare": {"yes"}}}
	want, err := Search(segs, query)
	if err != nil {
		t.Fatal(err)
	}
	query.Probe = &Probe{Centroids: map[string]*Centroids{"cs1": cs}, NProbe: 1}
	got, err := Search(parts, query)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 || len(want) != 50 {
		t.Fatalf("found %d and exactly %d, want 50", len(got), len(want))
	}
	for i := range got {
		if got[i].ChunkID != want[i].ChunkID {
			t.Fatalf("hit %d is %s, exactly %s", i, got[i].ChunkID, want[i].ChunkID)
		}
	}
}

func TestDecodeRefusesBadPartitions(t *testing.T) {
	segs, _ := clusteredSegments(t, 300, 300, 8)
	cs, _, err := KMeans(context.Background(), "cs1", sample(segs, 1), 8, KMeansOptions{K: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	part, _, err := Partition(context.Background(), segs, nil, cs)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := segs[0].MarshalBinary()
	good, _ := part.MarshalBinary()
	withCRC := func(b []byte) []byte {
		body := b[:len(b)-4]
		sum := crc32Castagnoli(body)
		return append(slices.Clone(body), byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24))
	}
	flag := func(b []byte, f byte) []byte { b = slices.Clone(b); b[5] = f; return withCRC(b) }
	tests := []struct {
		name string
		data []byte
	}{
		{"an unknown flag", flag(good, 3)},
		{"a partition flag on a segment without a table", flag(plain, flagPartitioned)},
		{"no partition flag on a segment with a table", flag(good, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeSegment(tt.data); !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestCentroidsRoundTripAndRefuseCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var vecs []float32
	for range 5 {
		vecs = append(vecs, retrievaltest.Unit(rng, 12)...)
	}
	cs, err := NewCentroids("abc", vecs, 12)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := cs.MarshalBinary()
	got, err := DecodeCentroids(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID() != "abc" || got.K() != 5 || !slices.Equal(got.vecs, cs.vecs) {
		t.Error("decoded centroids differ")
	}
	for _, cut := range []int{0, 5, len(data) / 2, len(data) - 1} {
		if _, err := DecodeCentroids(data[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut at %d: error %v, want ErrCorrupt", cut, err)
		}
	}
	bad := slices.Clone(data)
	bad[10] ^= 1
	if _, err := DecodeCentroids(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("flipped bit: error %v, want ErrCorrupt", err)
	}
}
