package graph

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/switchboard-dev/switchboard/shared/binread"
)

// PackEntry is one document version's shard in a pack: the graph shards of
// the documents a vector store's chunk shard holds, stored beside it and
// merged when it is.
type PackEntry struct {
	// Version names the document version the shard was built from (the
	// store's id for it), so a version that left search leaves the graph too.
	Version string
	Shard   *Shard
}

// The pack format, version 1: "SBGP" magic, u8 version (1), u8 flags (0),
// uvarint n, n × (string version, string shard in the shard format), u32
// CRC-32C of every preceding byte.
const (
	packMagic   = "SBGP"
	packVersion = 1
)

// MarshalPack encodes entries in the versioned, checksummed pack format.
func MarshalPack(entries []PackEntry) ([]byte, error) {
	b := append([]byte(packMagic), packVersion, 0)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		data, err := e.Shard.MarshalBinary()
		if err != nil {
			return nil, err
		}
		if e.Version == "" {
			return nil, fmt.Errorf("graph: encode pack: the version of %s is empty", e.Shard.DocID)
		}
		b = binary.AppendUvarint(b, uint64(len(e.Version)))
		b = append(b, e.Version...)
		b = binary.AppendUvarint(b, uint64(len(data)))
		b = append(b, data...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
}

// DecodePack decodes a pack written by [MarshalPack], each shard as
// [DecodeShard] does. Anything else is refused with an error wrapping
// [ErrCorrupt]; DecodePack never panics and allocates in proportion to
// len(data).
func DecodePack(data []byte) ([]PackEntry, error) {
	if len(data) < len(packMagic)+2+4 || string(data[:4]) != packMagic {
		return nil, fmt.Errorf("graph: decode pack: %w: not a graph pack", ErrCorrupt)
	}
	if data[4] != packVersion || data[5] != 0 {
		return nil, fmt.Errorf("graph: decode pack: %w: version %d flags %d, want %d and 0", ErrCorrupt, data[4], data[5], packVersion)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("graph: decode pack: %w: checksum mismatch", ErrCorrupt)
	}
	r := binread.New(body[6:], "graph: decode pack", ErrCorrupt)
	entries := make([]PackEntry, r.Count("entry count", 2+len(shardMagic)+6))
	for i := range entries {
		v, raw := r.String("version"), r.String("shard")
		if r.Err() != nil {
			return nil, r.Err()
		}
		s, err := DecodeShard([]byte(raw))
		if err != nil {
			return nil, err
		}
		entries[i] = PackEntry{Version: v, Shard: s}
	}
	if r.Err() == nil && len(r.Rest()) != 0 {
		r.Fail("%d trailing bytes", len(r.Rest()))
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	return entries, nil
}
