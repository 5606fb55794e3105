package graph

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/binread"
	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Shard is one document's part of a store's entity graph: its entities, the
// chunks that mention each, and the relations between them, with the counts
// a store-wide weighting needs. A store's graph is the union of its live
// documents' shards ([Build]); a shard is immutable once built.
type Shard struct {
	DocID string
	// Extractor names the method that built it ([Extractor.Name]).
	Extractor string
	// Contexts is how many contexts (sentences, or chunks) were read: the
	// denominator of the relations' co-occurrence probabilities.
	Contexts int
	// Fallbacks is how many of the document's chunks a [Prompted]
	// extractor's fallback extracted ([Extraction.Fallbacks]).
	Fallbacks int
	// Chunks are the ids of the document's chunks that mention an entity.
	Chunks []string
	// Entities are sorted by Key, keys distinct.
	Entities []Entity
	// Edges are sorted by (A, B), A < B, pairs distinct.
	Edges []Edge
	// Aliases are sorted by Short, each Long an entity's key.
	Aliases []Alias
	// Embedder names the provider and model of Vectors ("offline/hashing-v1"),
	// "" when the shard has none.
	Embedder string
	// Dims is the length of each entity's vector, 0 without vectors.
	Dims int
	// Vectors holds Dims values per entity, in Entities' order.
	Vectors []float32
}

// Entity is one entity of a [Shard].
type Entity struct {
	// Key is the normalised name ([Key]) under which documents' entities merge.
	Key string
	// Name is how the document writes it most often.
	Name string
	// Contexts is how many contexts mention it.
	Contexts int
	// Links are the chunks that mention it, sorted by Chunk.
	Links []Link
}

// Link says that the shard's chunk Chunk mentions an entity Count times.
type Link struct {
	Chunk int
	Count int
}

// Edge relates entities A and B (indexes into a shard's Entities) in Count contexts.
type Edge struct {
	A, B  int
	Count int
}

// Alias says that the key Short abbreviates the entity keyed Long.
type Alias struct {
	Short, Long string
}

// The shard format, version 2 (integers little-endian; uvarint and string as
// in encoding/binary, a string being a uvarint length then bytes):
//
//	"SBGS" magic, u8 version (2), u8 flags (0)
//	string doc id, string extractor, uvarint contexts, uvarint fallbacks
//	uvarint c (chunks), c × string chunk id
//	uvarint e (entities), e × (string key, string name, uvarint contexts,
//	           uvarint l (links), l × (uvarint chunk gap, uvarint count))
//	           (keys strictly increasing; gap = chunk - previous chunk - 1, previous starting at -1)
//	uvarint d (edges), d × (uvarint a gap, uvarint b - a - 1, uvarint count)
//	           (a gap = a - previous a, sorted by (a, b))
//	uvarint s (aliases), s × (string short, string long) (shorts strictly increasing)
//	string embedder, uvarint dims, e × dims f32 values (when dims > 0)
//	u32 CRC-32C (Castagnoli) of every preceding byte
//
// Version 1, written before extraction by a generator, lacks the fallbacks
// (0); it is still read.
const (
	shardMagic   = "SBGS"
	shardVersion = 2
	// maxDims bounds the dimensions a shard's vectors may claim.
	maxDims = 1 << 14
)

// ErrCorrupt is wrapped by every error [DecodeShard] returns for data that
// is not a well-formed shard.
var ErrCorrupt = errors.New("corrupt graph shard")

// castagnoli returns the CRC-32C table, made on first use: making it takes
// about 0.2 ms on amd64, which a bootstrap that reads nothing of this
// format on its first call should not spend at start (issue 11).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// MarshalBinary encodes s in the versioned, checksummed shard format.
func (s *Shard) MarshalBinary() ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	size := 32 + len(s.DocID) + len(s.Extractor) + len(s.Embedder) + 4*len(s.Vectors) + 12*len(s.Edges)
	for _, c := range s.Chunks {
		size += len(c) + 2
	}
	for _, e := range s.Entities {
		size += len(e.Key) + len(e.Name) + 6 + 4*len(e.Links)
	}
	b := make([]byte, 0, size)
	b = append(b, shardMagic...)
	b = append(b, shardVersion, 0)
	str := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	num := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	str(s.DocID)
	str(s.Extractor)
	num(s.Contexts)
	num(s.Fallbacks)
	num(len(s.Chunks))
	for _, c := range s.Chunks {
		str(c)
	}
	num(len(s.Entities))
	for _, e := range s.Entities {
		str(e.Key)
		str(e.Name)
		num(e.Contexts)
		num(len(e.Links))
		prev := -1
		for _, l := range e.Links {
			num(l.Chunk - prev - 1)
			num(l.Count)
			prev = l.Chunk
		}
	}
	num(len(s.Edges))
	prevA := 0
	for _, e := range s.Edges {
		num(e.A - prevA)
		num(e.B - e.A - 1)
		num(e.Count)
		prevA = e.A
	}
	num(len(s.Aliases))
	for _, a := range s.Aliases {
		str(a.Short)
		str(a.Long)
	}
	str(s.Embedder)
	num(s.Dims)
	for _, v := range s.Vectors {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	return b, nil
}

// validate checks the invariants the format relies on, so an encoded shard
// always decodes.
func (s *Shard) validate() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("graph: encode shard %s: %s", s.DocID, fmt.Sprintf(format, args...))
	}
	if s.DocID == "" {
		return fail("the document id is empty")
	}
	for i, e := range s.Entities {
		if e.Key == "" || i > 0 && e.Key <= s.Entities[i-1].Key {
			return fail("entity %d: key empty or out of order", i)
		}
		prev := -1
		for _, l := range e.Links {
			if l.Chunk <= prev || l.Chunk >= len(s.Chunks) || l.Count <= 0 {
				return fail("entity %q: bad link", e.Key)
			}
			prev = l.Chunk
		}
	}
	for i, e := range s.Edges {
		if e.A < 0 || e.B <= e.A || e.B >= len(s.Entities) || e.Count <= 0 {
			return fail("edge %d: bad entities or count", i)
		}
		if i > 0 && (e.A < s.Edges[i-1].A || e.A == s.Edges[i-1].A && e.B <= s.Edges[i-1].B) {
			return fail("edge %d: out of order", i)
		}
	}
	for i, a := range s.Aliases {
		if a.Short == "" || a.Long == "" || i > 0 && a.Short <= s.Aliases[i-1].Short {
			return fail("alias %d: empty or out of order", i)
		}
	}
	if s.Dims < 0 || s.Dims > maxDims || len(s.Vectors) != s.Dims*len(s.Entities) {
		return fail("%d vector values for %d entities of %d dimensions", len(s.Vectors), len(s.Entities), s.Dims)
	}
	return nil
}

// DecodeShard decodes a shard written by [Shard.MarshalBinary]. Data that is
// truncated, altered, of another version or breaking the format's invariants
// is rejected with an error wrapping [ErrCorrupt]; DecodeShard never panics,
// allocates in proportion to len(data) and keeps no reference to data.
func DecodeShard(data []byte) (*Shard, error) {
	if len(data) < len(shardMagic)+2+4 || string(data[:4]) != shardMagic {
		return nil, fmt.Errorf("graph: decode shard: %w: not a graph shard", ErrCorrupt)
	}
	if data[4] != shardVersion && data[4] != 1 {
		return nil, fmt.Errorf("graph: decode shard: %w: version %d, want 1 or %d", ErrCorrupt, data[4], shardVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return nil, fmt.Errorf("graph: decode shard: %w: checksum mismatch", ErrCorrupt)
	}
	r := binread.New(body[6:], "graph: decode shard", ErrCorrupt)
	s := &Shard{DocID: r.String("doc id"), Extractor: r.String("extractor"), Contexts: r.Int("contexts", math.MaxInt32)}
	if data[4] >= 2 {
		s.Fallbacks = r.Int("fallbacks", math.MaxInt32)
	}
	s.Chunks = make([]string, r.Count("chunk count", 1))
	for i := range s.Chunks {
		s.Chunks[i] = r.String("chunk id")
	}
	s.Entities = make([]Entity, r.Count("entity count", 4))
	for i := range s.Entities {
		e := &s.Entities[i]
		e.Key, e.Name = r.String("entity key"), r.String("entity name")
		e.Contexts = r.Int("entity contexts", s.Contexts)
		e.Links = make([]Link, r.Count("link count", 2))
		prev := -1
		for j := range e.Links {
			c := prev + 1 + r.Int("link chunk", len(s.Chunks))
			e.Links[j] = Link{Chunk: c, Count: r.Int("link count", math.MaxInt32)}
			prev = c
		}
		if r.Err() != nil {
			break
		}
	}
	s.Edges = make([]Edge, r.Count("edge count", 3))
	a := 0
	for i := range s.Edges {
		a += r.Int("edge entity", len(s.Entities))
		b := a + 1 + r.Int("edge entity", len(s.Entities))
		s.Edges[i] = Edge{A: a, B: b, Count: r.Int("edge count", s.Contexts)}
		if r.Err() != nil {
			break
		}
	}
	s.Aliases = make([]Alias, r.Count("alias count", 2))
	for i := range s.Aliases {
		s.Aliases[i] = Alias{Short: r.String("alias"), Long: r.String("alias")}
	}
	s.Embedder = r.String("embedder")
	s.Dims = r.Int("dims", maxDims)
	if r.Err() == nil {
		want := uint64(s.Dims) * uint64(len(s.Entities)) * 4
		if uint64(len(r.Rest())) != want {
			r.Fail("vector section holds %d bytes, want %d", len(r.Rest()), want)
		} else if s.Dims > 0 {
			s.Vectors = make([]float32, s.Dims*len(s.Entities))
			for i := range s.Vectors {
				s.Vectors[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.Rest()[4*i:]))
			}
		}
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("graph: decode shard: %w: %v", ErrCorrupt, strings.TrimPrefix(err.Error(), "graph: encode shard "))
	}
	return s, nil
}

// embedBatch is how many entity names one Embed call carries.
const embedBatch = 64

// embed fills s's vectors with emb's embeddings of its entities' names.
func (s *Shard) embed(ctx context.Context, emb provider.Embedder) error {
	dims := emb.Dims()
	if dims <= 0 || dims > maxDims {
		return fmt.Errorf("graph: embed entities of %s: %d dimensions", s.DocID, dims)
	}
	vecs := make([]float32, 0, dims*len(s.Entities))
	for i := 0; i < len(s.Entities); i += embedBatch {
		names := make([]string, 0, embedBatch)
		for _, e := range s.Entities[i:min(i+embedBatch, len(s.Entities))] {
			names = append(names, e.Name)
		}
		out, err := emb.Embed(ctx, provider.EmbedRequest{Texts: names, Purpose: provider.ForQuery})
		if err != nil {
			return fmt.Errorf("graph: embed entities of %s: %w", s.DocID, err)
		}
		if len(out.Vectors) != len(names) {
			return fmt.Errorf("graph: embed entities of %s: %d vectors for %d names", s.DocID, len(out.Vectors), len(names))
		}
		for _, v := range out.Vectors {
			if len(v) != dims {
				return fmt.Errorf("graph: embed entities of %s: a vector of %d dimensions, want %d", s.DocID, len(v), dims)
			}
			vecs = append(vecs, v...)
		}
	}
	s.Embedder, s.Dims, s.Vectors = EmbedderName(emb), dims, vecs
	return nil
}

// EmbedderName names an embedder as shards record it: "provider/model".
func EmbedderName(emb provider.Embedder) string { return emb.Provider() + "/" + emb.Model() }
