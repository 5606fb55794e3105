package graph_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// fixtureShard is the shard of testdata/hippo.txt, cut at its blank line,
// with entity vectors from the offline embedder.
func fixtureShard(t testing.TB) *graph.Shard {
	t.Helper()
	b, err := os.ReadFile("testdata/hippo.txt")
	if err != nil {
		t.Fatal(err)
	}
	parts := bytes.SplitN(b, []byte("\n\n"), 2)
	s, err := graph.NewShard(context.Background(), doc("hippo", string(parts[0]), string(parts[1])), graph.Heuristic{}, offline.NewEmbedder(16), graph.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAShardDecodesToWhatWasEncodedAndEncodesTheSameEveryTime(t *testing.T) {
	s := fixtureShard(t)
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := fixtureShard(t).MarshalBinary()
	if !bytes.Equal(b, again) {
		t.Error("the same document gave different shard bytes")
	}
	got, err := graph.DecodeShard(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("decoded shard mismatch (-want +got):\n%s", diff)
	}
	if len(got.Entities) < 5 || len(got.Edges) == 0 || len(got.Aliases) != 2 || got.Embedder != "offline/hashing-v1" {
		t.Errorf("the fixture's shard is thinner than expected: %d entities, %d edges, aliases %v, embedder %q",
			len(got.Entities), len(got.Edges), got.Aliases, got.Embedder)
	}
}

func TestAShardOfFormatVersion1StillDecodes(t *testing.T) {
	s := fixtureShard(t)
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is version 2 without the fallbacks after the contexts.
	at := 6
	for range 2 { // doc id, extractor
		n, w := binary.Uvarint(b[at:])
		at += w + int(n)
	}
	_, w := binary.Uvarint(b[at:])
	at += w
	if b[at] != 0 {
		t.Fatalf("fallbacks byte %d, want 0", b[at])
	}
	v1 := append(append([]byte{}, b[:at]...), b[at+1:len(b)-4]...)
	v1[4] = 1
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.Checksum(v1, crc32.MakeTable(crc32.Castagnoli)))
	got, err := graph.DecodeShard(v1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("decoded shard mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeShardRejectsDamagedData(t *testing.T) {
	b, err := fixtureShard(t).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(b)
	flipped[len(b)/2] ^= 0x40
	version := bytes.Clone(b)
	version[4] = 9
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"another format", []byte("SBSG\x01\x00\x00\x00\x00\x00")},
		{"truncated", b[:len(b)-7]},
		{"a flipped bit", flipped},
		{"another version", version},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := graph.DecodeShard(tt.data); !errors.Is(err, graph.ErrCorrupt) {
				t.Errorf("error %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestMarshalBinaryRefusesAShardThatBreaksTheFormatsInvariants(t *testing.T) {
	tests := []struct {
		name  string
		shard graph.Shard
	}{
		{"no document id", graph.Shard{}},
		{"keys out of order", graph.Shard{DocID: "d", Entities: []graph.Entity{{Key: "b"}, {Key: "a"}}}},
		{"a link to a missing chunk", graph.Shard{DocID: "d", Entities: []graph.Entity{{Key: "a", Links: []graph.Link{{Chunk: 0, Count: 1}}}}}},
		{"an edge to itself", graph.Shard{DocID: "d", Entities: []graph.Entity{{Key: "a"}}, Edges: []graph.Edge{{A: 0, B: 0, Count: 1}}}},
		{"vectors of the wrong length", graph.Shard{DocID: "d", Entities: []graph.Entity{{Key: "a"}}, Dims: 2, Vectors: []float32{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.shard.MarshalBinary(); err == nil {
				t.Error("encoded")
			}
		})
	}
}

// FuzzDecodeShard checks that any shard body, with its checksum appended so
// that the parser rather than the checksum meets the damage, decodes or
// fails with ErrCorrupt, never panics, and that what decodes encodes back to
// the same bytes.
func FuzzDecodeShard(f *testing.F) {
	b, err := fixtureShard(f).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:len(b)-4])
	f.Add([]byte("SBGS\x01\x00"))
	table := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, table))
		s, err := graph.DecodeShard(data)
		if err != nil {
			if !errors.Is(err, graph.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		out, err := s.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded shard does not encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatal("a decoded shard encodes to other bytes")
		}
	})
}
