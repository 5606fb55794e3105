package retrieval

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func unit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

var zoo = []Chunk{
	{ID: "a#0", DocID: "a", Text: "The quick brown fox jumps over the lazy dog.", Metadata: map[string]string{"lang": "en", "kind": "story"}},
	{ID: "a#1", DocID: "a", Text: "Foxes are running in the forest; the dogs are sleeping.", Metadata: map[string]string{"lang": "en"}},
	{ID: "b#0", DocID: "b", Text: "Interleukin IL-6 levels rise in inflammation.", Metadata: map[string]string{"lang": "en", "kind": "paper"}},
	{ID: "c#0", DocID: "c", Text: "Le renard brun saute par-dessus le chien.", Metadata: map[string]string{"lang": "fr"}},
	{ID: "d#0", DocID: "d", Text: ""},
}

func zooSegment(t testing.TB, dims int) *Segment {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	chunks := append([]Chunk(nil), zoo...)
	for i := range chunks {
		if dims > 0 {
			chunks[i].Vector = unit(rng, dims)
		}
	}
	s, err := NewSegment(chunks, dims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSegmentRoundTripsThroughItsBinaryForm(t *testing.T) {
	for _, dims := range []int{0, 5, 384} {
		t.Run(fmt.Sprintf("dims %d", dims), func(t *testing.T) {
			s := zooSegment(t, dims)
			data, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeSegment(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s, got, cmp.AllowUnexported(Segment{})); diff != "" {
				t.Errorf("decoded segment mismatch (-want +got):\n%s", diff)
			}
			again, _ := got.MarshalBinary()
			if !bytes.Equal(data, again) {
				t.Error("re-encoding a decoded segment changed its bytes")
			}
			if got.Len() != len(zoo) || got.Chunk(2).ID != "b#0" || got.Chunk(0).Metadata["kind"] != "story" {
				t.Errorf("Chunk accessors disagree: %+v", got.Chunk(2))
			}
		})
	}
}

func TestNewSegmentRejectsBadChunks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []Chunk
		dims   int
		want   error
	}{
		{"duplicate ids", []Chunk{{ID: "x"}, {ID: "x"}}, 0, ErrDuplicateID},
		{"wrong vector length", []Chunk{{ID: "x", Vector: []float32{1, 2}}}, 3, ErrDims},
		{"missing vector", []Chunk{{ID: "x"}}, 3, ErrDims},
		{"empty id", []Chunk{{ID: ""}}, 0, nil},
		{"non-finite vector", []Chunk{{ID: "x", Vector: []float32{float32(math.NaN())}}}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSegment(tt.chunks, tt.dims)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("NewSegment error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestDecodeSegmentRejectsCorruptData(t *testing.T) {
	data, _ := zooSegment(t, 5).MarshalBinary()
	flip := append([]byte(nil), data...)
	flip[len(flip)/2] ^= 1
	version := append([]byte(nil), data...)
	version[4] = 9
	tests := map[string][]byte{
		"empty":          nil,
		"truncated":      data[:len(data)-1],
		"a flipped bit":  flip,
		"other version":  version,
		"not a segment":  []byte("hello, world"),
		"only the magic": []byte("SBSG"),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeSegment(in); !errors.Is(err, ErrCorrupt) {
				t.Errorf("DecodeSegment error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func FuzzDecodeSegment(f *testing.F) {
	for _, dims := range []int{0, 3} {
		data, _ := zooSegment(f, dims).MarshalBinary()
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Fix the checksum up so the fuzzer reaches the decoder proper.
		if len(data) >= 10 {
			body := data[:len(data)-4]
			sum := crc32Castagnoli(body)
			data = append(append([]byte(nil), body...), byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24))
		}
		s, err := DecodeSegment(data)
		if err != nil {
			return
		}
		// A segment that decodes must be searchable.
		q := Query{Text: "fox dog running", Mode: ModeBM25, K: 3}
		if s.Dims() > 0 {
			q.Mode = ModeHybrid
			q.Vector = make([]float32, s.Dims())
			q.Vector[0] = 1
		}
		if _, err := Search([]*Segment{s}, q); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < s.Len(); i++ {
			s.Chunk(i)
		}
	})
}
