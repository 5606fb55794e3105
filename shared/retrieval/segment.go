package retrieval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/text"
)

// Chunk is one searchable piece of a document: the unit BM25 scores and a
// vector embeds. ID is unique within a [Segment]; DocID groups the chunks of one
// document. Vector is nil in a segment without vectors.
type Chunk struct {
	ID       string
	DocID    string
	Text     string
	Metadata map[string]string
	Vector   []float32
}

// Segment is an immutable, searchable set of chunks: their text and metadata,
// BM25 postings over [text.Terms] of each chunk's Text, and optionally their
// vectors, both as float32 and as int8 with a per-vector scale. A Segment is
// safe for concurrent use. Build one with [NewSegment], store it with
// [Segment.MarshalBinary] and load it with [DecodeSegment].
type Segment struct {
	ids, docIDs, texts []string
	meta               []map[string]string

	// terms is the sorted term dictionary; term t's postings are
	// postChunk/postTF[postStart[t]:postStart[t+1]], chunk indexes increasing.
	terms     []string
	postStart []uint32
	postChunk []uint32
	postTF    []uint32
	chunkLen  []uint32 // number of terms of each chunk
	totalLen  int64

	dims   int
	vecs   []float32 // len(ids)*dims
	qvecs  []int8    // len(ids)*dims: round(v/scale)
	scales []float32 // per chunk: max|v|/127

	// A partitioned segment (see [Partition]) holds its chunks ordered by
	// cluster: chunks starts[i]..starts[i+1] are in cluster parts[i] of the
	// centroids named index. parts increase; starts has one more entry.
	index  string
	parts  []uint32
	starts []uint32
}

// Errors [NewSegment] returns; they are wrapped with the offending chunk.
var (
	ErrDims        = errors.New("vector length differs from the segment's dimensions")
	ErrDuplicateID = errors.New("duplicate chunk id")
)

// NewSegment indexes chunks. dims is the length every chunk's Vector must have;
// 0 builds a BM25-only segment and ignores vectors. Vectors must be finite.
// The chunks' metadata maps are copied, not shared.
func NewSegment(chunks []Chunk, dims int) (*Segment, error) {
	if dims < 0 {
		return nil, fmt.Errorf("retrieval: new segment: negative dims %d", dims)
	}
	n := len(chunks)
	s := &Segment{
		ids: make([]string, n), docIDs: make([]string, n), texts: make([]string, n),
		meta: make([]map[string]string, n), chunkLen: make([]uint32, n), dims: dims,
	}
	seen := make(map[string]bool, n)
	// Terms get ids in the order they are met; each chunk's postings are
	// counted in a dense array and appended in chunk order, then placed by
	// term in one counting pass once the dictionary is sorted.
	ids := map[string]uint32{}
	var names []string // by id
	var tf []uint32    // by id: the current chunk's count
	var touched []uint32
	type posting struct{ term, chunk, tf uint32 }
	var postings []posting
	for i, c := range chunks {
		if c.ID == "" {
			return nil, fmt.Errorf("retrieval: new segment: chunk %d: empty id", i)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("retrieval: new segment: chunk %q: %w", c.ID, ErrDuplicateID)
		}
		seen[c.ID] = true
		s.ids[i], s.docIDs[i], s.texts[i] = c.ID, c.DocID, c.Text
		if len(c.Metadata) > 0 {
			m := make(map[string]string, len(c.Metadata))
			for k, v := range c.Metadata {
				m[k] = v
			}
			s.meta[i] = m
		}
		terms := text.Terms(c.Text)
		for _, t := range terms {
			id, ok := ids[t]
			if !ok {
				id = uint32(len(names))
				ids[t] = id
				names, tf = append(names, t), append(tf, 0)
			}
			if tf[id] == 0 {
				touched = append(touched, id)
			}
			tf[id]++
		}
		s.chunkLen[i] = uint32(len(terms))
		s.totalLen += int64(len(terms))
		for _, id := range touched {
			postings = append(postings, posting{id, uint32(i), tf[id]})
			tf[id] = 0
		}
		touched = touched[:0]
	}
	s.terms = slices.Clone(names)
	sort.Strings(s.terms)
	rank := make([]uint32, len(names)) // by id: the term's place in the sorted dictionary
	for r, t := range s.terms {
		rank[ids[t]] = uint32(r)
	}
	s.postStart = make([]uint32, len(s.terms)+1)
	for _, p := range postings {
		s.postStart[rank[p.term]+1]++
	}
	for t := 1; t < len(s.postStart); t++ {
		s.postStart[t] += s.postStart[t-1]
	}
	if len(postings) > 0 {
		next := slices.Clone(s.postStart[:len(s.terms)])
		s.postChunk, s.postTF = make([]uint32, len(postings)), make([]uint32, len(postings))
		for _, p := range postings {
			r := rank[p.term]
			s.postChunk[next[r]], s.postTF[next[r]] = p.chunk, p.tf
			next[r]++
		}
	}
	if dims > 0 {
		s.vecs = make([]float32, n*dims)
		for i, c := range chunks {
			if len(c.Vector) != dims {
				return nil, fmt.Errorf("retrieval: new segment: chunk %q: %w (%d, want %d)", c.ID, ErrDims, len(c.Vector), dims)
			}
			for _, x := range c.Vector {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, fmt.Errorf("retrieval: new segment: chunk %q: vector holds a non-finite value", c.ID)
				}
			}
			copy(s.vecs[i*dims:], c.Vector)
		}
		s.qvecs, s.scales = quantizeAll(s.vecs, dims)
	}
	return s, nil
}

// Len returns the number of chunks in s.
func (s *Segment) Len() int { return len(s.ids) }

// Dims returns the vector dimensions of s; 0 means s holds no vectors.
func (s *Segment) Dims() int { return s.dims }

// Chunk returns the i-th chunk (0 <= i < [Segment.Len]). Its Metadata and
// Vector are copies.
func (s *Segment) Chunk(i int) Chunk {
	c := Chunk{ID: s.ids[i], DocID: s.docIDs[i], Text: s.texts[i]}
	if m := s.meta[i]; m != nil {
		c.Metadata = make(map[string]string, len(m))
		for k, v := range m {
			c.Metadata[k] = v
		}
	}
	if s.dims > 0 {
		c.Vector = append([]float32(nil), s.vecs[i*s.dims:(i+1)*s.dims]...)
	}
	return c
}

// termIndex returns the dictionary index of term t, or -1.
func (s *Segment) termIndex(t string) int {
	i := sort.SearchStrings(s.terms, t)
	if i < len(s.terms) && s.terms[i] == t {
		return i
	}
	return -1
}

// matches reports whether chunk i passes f.
func (s *Segment) matches(i int, f Filter) bool {
	for key, accepted := range f {
		v, ok := s.meta[i][key]
		if !ok {
			return false
		}
		found := false
		for _, a := range accepted {
			if a == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
