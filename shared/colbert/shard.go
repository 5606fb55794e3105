package colbert

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
)

// Shard is the token vectors of a set of chunks, compressed with one codec:
// Tokens[i] belongs to the chunk IDs[i]. A store keeps one shard of token
// vectors beside each shard of chunks, under the same manifest.
type Shard struct {
	IDs    []string
	Tokens []Tokens
}

// MaxIDBytes bounds a chunk id in a shard.
const MaxIDBytes = 1024

// The token-vector shard format, version 1 (integers little-endian; uvarint
// and string as in encoding/binary, a string being a uvarint length then bytes):
//
//	"SBTV" magic, u8 version (1), u8 bits, u16 dims, u64 codec id ([Codec.ID])
//	uvarint n (chunks), n × chunk: string id, uvarint t (tokens, at most
//	           multivector.MaxDocumentTokens), t × u16 centroid id,
//	           t × (dims·bits/8) bytes of packed residuals
//	u32 CRC-32C (Castagnoli) of every preceding byte
const (
	shardMagic   = "SBTV"
	shardVersion = 1
	shardHeader  = 16
)

// EncodeShard encodes s, compressed with c, in the versioned, checksummed
// shard format.
func (c *Codec) EncodeShard(s Shard) ([]byte, error) {
	if len(s.IDs) != len(s.Tokens) {
		return nil, fmt.Errorf("colbert: encode shard: %d ids for %d token lists", len(s.IDs), len(s.Tokens))
	}
	rb := c.residualBytes()
	size := shardHeader + 4 + binary.MaxVarintLen64
	for i, t := range s.Tokens {
		switch {
		case len(s.IDs[i]) > MaxIDBytes:
			return nil, fmt.Errorf("colbert: encode shard: chunk id %d is longer than %d bytes", i, MaxIDBytes)
		case t.Len() > multivector.MaxDocumentTokens:
			return nil, fmt.Errorf("colbert: encode shard: chunk %s has %d tokens, more than %d", s.IDs[i], t.Len(), multivector.MaxDocumentTokens)
		case len(t.Residuals) != t.Len()*rb:
			return nil, fmt.Errorf("colbert: encode shard: chunk %s has %d residual bytes for %d tokens, want %d", s.IDs[i], len(t.Residuals), t.Len(), t.Len()*rb)
		}
		for _, a := range t.Codes {
			if int(a) >= c.Centroids() {
				return nil, fmt.Errorf("colbert: encode shard: chunk %s names centroid %d of %d", s.IDs[i], a, c.Centroids())
			}
		}
		size += 2*binary.MaxVarintLen64 + len(s.IDs[i]) + t.Len()*c.TokenBytes()
	}
	b := make([]byte, 0, size)
	b = append(b, shardMagic...)
	b = append(b, shardVersion, byte(c.bits))
	b = binary.LittleEndian.AppendUint16(b, uint16(c.dims))
	b = binary.LittleEndian.AppendUint64(b, c.id)
	b = binary.AppendUvarint(b, uint64(len(s.IDs)))
	for i, t := range s.Tokens {
		b = binary.AppendUvarint(b, uint64(len(s.IDs[i])))
		b = append(b, s.IDs[i]...)
		b = binary.AppendUvarint(b, uint64(t.Len()))
		for _, a := range t.Codes {
			b = binary.LittleEndian.AppendUint16(b, a)
		}
		b = append(b, t.Residuals...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
}

// DecodeShard decodes a shard written by [Codec.EncodeShard] with c. Every
// count is checked against the bytes left before anything is allocated for
// it: the token data decoded is no larger than the input, and the chunks'
// bookkeeping at most 22 bytes per input byte (a chunk takes at least 3
// bytes). A shard of another codec is refused.
func (c *Codec) DecodeShard(b []byte) (Shard, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("colbert: decode shard: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(b) < shardHeader+4 || string(b[:4]) != shardMagic {
		return Shard{}, corrupt("not a token-vector shard")
	}
	if b[4] != shardVersion {
		return Shard{}, corrupt("version %d, want %d", b[4], shardVersion)
	}
	if crc32.Checksum(b[:len(b)-4], castagnoli()) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return Shard{}, corrupt("checksum mismatch")
	}
	if bits, dims, id := int(b[5]), int(binary.LittleEndian.Uint16(b[6:])), binary.LittleEndian.Uint64(b[8:]); bits != c.bits || dims != c.dims || id != c.id {
		return Shard{}, fmt.Errorf("colbert: decode shard: written with codec %016x (%d dims, %d bits), not this store's %016x (%d dims, %d bits)", id, dims, bits, c.id, c.dims, c.bits)
	}
	r := b[shardHeader : len(b)-4]
	uvarint := func(what string, bound int) (int, error) {
		v, n := binary.Uvarint(r)
		if n <= 0 || v > uint64(bound) {
			return 0, corrupt("%s out of range", what)
		}
		r = r[n:]
		return int(v), nil
	}
	n, err := uvarint("chunk count", len(r)/3) // a chunk takes at least 3 bytes
	if err != nil {
		return Shard{}, err
	}
	s := Shard{IDs: make([]string, n), Tokens: make([]Tokens, n)}
	k, tb := c.Centroids(), c.TokenBytes()
	for i := range n {
		idLen, err := uvarint("chunk id length", min(MaxIDBytes, len(r)))
		if err != nil {
			return Shard{}, err
		}
		s.IDs[i], r = string(r[:idLen]), r[idLen:]
		t, err := uvarint("token count", min(multivector.MaxDocumentTokens, len(r)/tb))
		if err != nil {
			return Shard{}, err
		}
		toks := Tokens{Codes: make([]uint16, t)}
		for j := range toks.Codes {
			a := binary.LittleEndian.Uint16(r[2*j:])
			if int(a) >= k {
				return Shard{}, corrupt("chunk %d token %d names centroid %d of %d", i, j, a, k)
			}
			toks.Codes[j] = a
		}
		r = r[2*t:]
		toks.Residuals, r = append([]byte(nil), r[:t*(tb-2)]...), r[t*(tb-2):]
		s.Tokens[i] = toks
	}
	if len(r) != 0 {
		return Shard{}, corrupt("%d bytes after the last chunk", len(r))
	}
	return s, nil
}
