package retrieval

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
)

// Merge returns one segment holding, in order, the chunks of segs that keep
// accepts (keep(s, i) for chunk i of segs[s]; a nil keep accepts every
// chunk): the segment [NewSegment] builds from those chunks, equal field by
// field, built without analysing a text again or quantizing a vector again.
// The postings, chunk lengths and vectors (float32, int8 and scales) are
// copied. It is how a store compacts its shards. Every segment must have the
// same dims; chunk ids must stay unique ([ErrDuplicateID]).
func Merge(segs []*Segment, keep func(s, i int) bool) (*Segment, error) {
	out, err := gather(segs, kept(segs, keep))
	if err != nil {
		return nil, fmt.Errorf("retrieval: merge: %w", err)
	}
	return out, nil
}

// chunkRef names chunk idx of segment seg.
type chunkRef struct{ seg, idx int32 }

// kept lists the chunks of segs that keep accepts (all, if keep is nil), in order.
func kept(segs []*Segment, keep func(s, i int) bool) []chunkRef {
	var refs []chunkRef
	for si, s := range segs {
		for i := range s.Len() {
			if keep == nil || keep(si, i) {
				refs = append(refs, chunkRef{int32(si), int32(i)})
			}
		}
	}
	return refs
}

// gather returns the segment holding the chunks refs name, in that order,
// copying their texts, metadata, postings and vectors.
func gather(segs []*Segment, refs []chunkRef) (*Segment, error) {
	dims := 0
	if len(segs) > 0 {
		dims = segs[0].dims
	}
	remap := make([][]int32, len(segs)) // old chunk index -> new, -1 if dropped
	for si, s := range segs {
		if s.dims != dims {
			return nil, fmt.Errorf("segment %d: %w (%d, want %d)", si, ErrDims, s.dims, dims)
		}
		remap[si] = make([]int32, s.Len())
		for i := range remap[si] {
			remap[si][i] = -1
		}
	}
	n := len(refs)
	out := &Segment{
		ids: make([]string, 0, n), docIDs: make([]string, 0, n), texts: make([]string, 0, n),
		meta: make([]map[string]string, 0, n), chunkLen: make([]uint32, 0, n), dims: dims,
	}
	if dims > 0 {
		out.vecs, out.qvecs, out.scales = make([]float32, 0, n*dims), make([]int8, 0, n*dims), make([]float32, 0, n)
	}
	seen := make(map[string]bool, n)
	for to, ref := range refs {
		s, i := segs[ref.seg], int(ref.idx)
		if seen[s.ids[i]] {
			return nil, fmt.Errorf("chunk %q: %w", s.ids[i], ErrDuplicateID)
		}
		seen[s.ids[i]] = true
		remap[ref.seg][i] = int32(to)
		// Metadata maps are shared: a segment never changes them.
		out.ids, out.docIDs, out.texts = append(out.ids, s.ids[i]), append(out.docIDs, s.docIDs[i]), append(out.texts, s.texts[i])
		out.meta, out.chunkLen = append(out.meta, s.meta[i]), append(out.chunkLen, s.chunkLen[i])
		out.totalLen += int64(s.chunkLen[i])
		if dims > 0 {
			out.vecs = append(out.vecs, s.vecs[i*dims:(i+1)*dims]...)
			out.qvecs = append(out.qvecs, s.qvecs[i*dims:(i+1)*dims]...)
			out.scales = append(out.scales, s.scales[i])
		}
	}
	mergePostings(out, segs, remap)
	return out, nil
}

// mergePostings fills in out's dictionary and postings from segs', merging
// the sorted dictionaries term by term. Chunk indexes are renumbered by
// remap; when every segment's chunks follow the previous segment's (a
// merge), each term's postings stay in increasing chunk order, and otherwise
// (a partition) they are sorted again. A term left without postings (only in
// dropped chunks) leaves the dictionary.
func mergePostings(out *Segment, segs []*Segment, remap [][]int32) {
	size, terms := 0, 0
	for _, s := range segs {
		size, terms = size+len(s.postChunk), max(terms, len(s.terms))
	}
	out.terms = make([]string, 0, terms)
	out.postStart = make([]uint32, 1, terms+1)
	out.postChunk, out.postTF = make([]uint32, 0, size), make([]uint32, 0, size)
	next := make([]int, len(segs)) // each segment's next dictionary entry
	for {
		term, found := "", false
		for si, s := range segs {
			if next[si] < len(s.terms) && (!found || s.terms[next[si]] < term) {
				term, found = s.terms[next[si]], true
			}
		}
		if !found {
			return
		}
		for si, s := range segs {
			t := next[si]
			if t == len(s.terms) || s.terms[t] != term {
				continue
			}
			next[si]++
			for p := s.postStart[t]; p < s.postStart[t+1]; p++ {
				if c := remap[si][s.postChunk[p]]; c >= 0 {
					out.postChunk = append(out.postChunk, uint32(c))
					out.postTF = append(out.postTF, s.postTF[p])
				}
			}
		}
		lo := int(out.postStart[len(out.postStart)-1])
		sortPostings(out.postChunk[lo:], out.postTF[lo:])
		if lo < len(out.postChunk) {
			out.terms = append(out.terms, term)
			out.postStart = append(out.postStart, uint32(len(out.postChunk)))
		}
	}
}

// sortPostings sorts one term's postings by chunk index, unless they are
// sorted already.
func sortPostings(chunks, tfs []uint32) {
	if slices.IsSorted(chunks) {
		return
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(chunks[a], chunks[b]) })
	c, t := slices.Clone(chunks), slices.Clone(tfs)
	for i, o := range order {
		chunks[i], tfs[i] = c[o], t[o]
	}
}

// Terms yields each term of s's dictionary, in increasing order, with the
// number of chunks holding it: the terms [text.Terms] finds in the chunks'
// texts, counted without analysing them again.
func (s *Segment) Terms() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for t, term := range s.terms {
			if !yield(term, int(s.postStart[t+1]-s.postStart[t])) {
				return
			}
		}
	}
}

// ChunkID returns the id of the i-th chunk (0 <= i < [Segment.Len]) without
// copying the chunk as [Segment.Chunk] does.
func (s *Segment) ChunkID(i int) string { return s.ids[i] }

// Vector returns the vector of the i-th chunk, without copying it as
// [Segment.Chunk] does: the caller must not change it.
func (s *Segment) Vector(i int) []float32 { return s.vecs[i*s.dims : (i+1)*s.dims] }

// DocID returns the document id of the i-th chunk.
func (s *Segment) DocID(i int) string { return s.docIDs[i] }
