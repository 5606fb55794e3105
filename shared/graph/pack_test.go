package graph_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/graph"
)

func TestAPackDecodesToItsEntriesAndRefusesDamage(t *testing.T) {
	entries := []graph.PackEntry{{Version: "v1", Shard: fixtureShard(t)}, {Version: "v2", Shard: &graph.Shard{DocID: "empty", Contexts: 3, Chunks: []string{}, Entities: []graph.Entity{}, Edges: []graph.Edge{}, Aliases: []graph.Alias{}}}}
	b, err := graph.MarshalPack(entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := graph.DecodePack(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(entries, got); diff != "" {
		t.Errorf("decoded pack mismatch (-want +got):\n%s", diff)
	}
	flipped := bytes.Clone(b)
	flipped[len(b)/2] ^= 0x10
	for name, data := range map[string][]byte{"empty": nil, "truncated": b[:len(b)-5], "a flipped bit": flipped, "a shard": shardBytes(t)} {
		if _, err := graph.DecodePack(data); !errors.Is(err, graph.ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := graph.MarshalPack([]graph.PackEntry{{Shard: fixtureShard(t)}}); err == nil {
		t.Error("a pack entry without a version encoded")
	}
}

func shardBytes(t *testing.T) []byte {
	b, err := fixtureShard(t).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodePack checks that any pack body, its checksum appended, decodes
// or fails with ErrCorrupt, never panics, and encodes back to the same bytes.
func FuzzDecodePack(f *testing.F) {
	b, err := graph.MarshalPack([]graph.PackEntry{{Version: "v", Shard: fixtureShard(f)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:len(b)-4])
	f.Add([]byte("SBGP\x01\x00\x00"))
	table := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, table))
		entries, err := graph.DecodePack(data)
		if err != nil {
			if !errors.Is(err, graph.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		out, err := graph.MarshalPack(entries)
		if err != nil {
			t.Fatalf("a decoded pack does not encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatal("a decoded pack encodes to other bytes")
		}
	})
}
