package retrieval

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/text"
)

// rareWord returns a word of letters only (the analyzer splits letter-digit
// words) unique to k, so that some terms live in one chunk and leave the
// dictionary when it is dropped.
func rareWord(k int) string {
	w := []byte("zq")
	for ; k > 0; k /= 26 {
		w = append(w, byte('a'+k%26))
	}
	return string(w)
}

// splitChunks cuts chunks into segments of the given sizes (the last takes
// the rest), each built by NewSegment and, with decode, read back from its
// binary form as a store's shards are.
func splitChunks(t *testing.T, chunks []Chunk, dims int, sizes []int, decode bool) []*Segment {
	t.Helper()
	var segs []*Segment
	lo := 0
	for i := 0; i <= len(sizes); i++ {
		hi := len(chunks)
		if i < len(sizes) {
			hi = lo + sizes[i]
		}
		s, err := NewSegment(chunks[lo:hi], dims)
		if err != nil {
			t.Fatal(err)
		}
		if decode {
			data, _ := s.MarshalBinary()
			if s, err = DecodeSegment(data); err != nil {
				t.Fatal(err)
			}
		}
		segs = append(segs, s)
		lo = hi
	}
	return segs
}

func TestMergeBuildsWhatNewSegmentBuildsFromTheKeptChunks(t *testing.T) {
	tests := []struct {
		name   string
		dims   int
		sizes  []int // segment sizes; the last segment takes the rest
		decode bool
		keep   func(rng *rand.Rand) bool
	}{
		{"every chunk of three segments", 16, []int{40, 0, 100}, false, nil},
		{"some chunks dropped", 16, []int{40, 60}, false, func(rng *rand.Rand) bool { return rng.IntN(3) > 0 }},
		{"segments read back from their binary form", 16, []int{10, 70, 30}, true, func(rng *rand.Rand) bool { return rng.IntN(4) > 0 }},
		{"without vectors", 0, []int{50}, true, func(rng *rand.Rand) bool { return rng.IntN(2) > 0 }},
		{"one segment", 8, nil, false, func(rng *rand.Rand) bool { return rng.IntN(5) > 0 }},
		{"every chunk dropped", 8, []int{20}, false, func(*rand.Rand) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			chunks := randomChunks(rng, 200, tt.dims)
			for i := range chunks {
				if i%3 == 0 {
					chunks[i].Text += rareWord(i)
				}
			}
			kept := map[string]bool{}
			var want []Chunk
			for _, c := range chunks {
				if tt.keep == nil || tt.keep(rng) {
					kept[c.ID] = true
					want = append(want, c)
				}
			}
			segs := splitChunks(t, chunks, tt.dims, tt.sizes, tt.decode)
			got, err := Merge(segs, func(s, i int) bool { return kept[segs[s].ChunkID(i)] })
			if err != nil {
				t.Fatal(err)
			}
			built, err := NewSegment(want, tt.dims)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(built, got, cmp.AllowUnexported(Segment{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("merged segment mismatch (-NewSegment +Merge):\n%s", diff)
			}
			a, _ := built.MarshalBinary()
			b, _ := got.MarshalBinary()
			if !bytes.Equal(a, b) {
				t.Error("the merged segment encodes differently from the one NewSegment builds")
			}
		})
	}
}

func TestMergeRefusesWhatNoSegmentHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	chunks := randomChunks(rng, 10, 4)
	a, _ := NewSegment(chunks, 4)
	b, _ := NewSegment(chunks[:3], 4)
	flat, _ := NewSegment(chunks[5:], 0)
	tests := []struct {
		name string
		segs []*Segment
		want error
	}{
		{"a chunk id twice", []*Segment{a, b}, ErrDuplicateID},
		{"segments of different dimensions", []*Segment{a, flat}, ErrDims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Merge(tt.segs, nil); !errors.Is(err, tt.want) {
				t.Errorf("Merge error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestTermsCountTheChunksHoldingEachTerm(t *testing.T) {
	chunks := randomChunks(rand.New(rand.NewPCG(2, 2)), 120, 0)
	want := map[string]int{}
	for _, c := range chunks {
		seen := map[string]bool{}
		for _, term := range text.Terms(c.Text) {
			if !seen[term] {
				seen[term] = true
				want[term]++
			}
		}
	}
	s, _ := NewSegment(chunks, 0)
	got := map[string]int{}
	prev := ""
	for term, n := range s.Terms() {
		if term <= prev {
			t.Errorf("term %q after %q: not in increasing order", term, prev)
		}
		prev = term
		got[term] = n
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-counted from the texts +Terms):\n%s", diff)
	}
	if len(want) < 10 {
		t.Fatalf("only %d terms: the test needs more", len(want))
	}
}
