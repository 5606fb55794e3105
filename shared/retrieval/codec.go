package retrieval

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"unsafe"

	"github.com/switchboard-dev/switchboard/shared/binread"
)

// The segment format, version 1 (all integers little-endian; uvarint and
// string as in encoding/binary, a string being a uvarint length then bytes):
//
//	"SBSG" magic, u8 version (1), u8 flags (0)
//	uvarint n (chunks), uvarint dims (0: no vectors)
//	n × chunk: string id, string doc id, string text,
//	           uvarint m, m × (string key, string value) (keys sorted)
//	uvarint t (terms), t × term (terms strictly increasing):
//	           string term, uvarint df, df × (uvarint gap, uvarint tf)
//	           (gap = chunk index - previous chunk index - 1, previous starting at -1)
//	if flags & 1 (partitioned, see [Partition]): string centroids id,
//	           uvarint p, p × (uvarint cluster id gap, uvarint run length)
//	           (gap = id - previous id - 1, previous starting at -1; the runs
//	           are consecutive, start at chunk 0 and cover every chunk)
//	if dims > 0: n × f32 scale, n×dims int8 quantized values, n×dims f32 values
//	u32 CRC-32C (Castagnoli) of every preceding byte
//
// Chunk lengths (in terms) are not stored: they are the sums of each chunk's
// tf over the postings, so they cannot disagree with them.
const (
	segmentMagic   = "SBSG"
	segmentVersion = 1
	// flagPartitioned marks a segment whose chunks are ordered by cluster.
	flagPartitioned = 1
)

// ErrCorrupt is wrapped by every error [DecodeSegment] returns for data that is
// not a well-formed segment.
var ErrCorrupt = errors.New("corrupt segment")

// castagnoli returns the CRC-32C table, made on first use: making it takes
// about 0.2 ms on amd64, which a bootstrap that reads nothing of this
// format on its first call should not spend at start (issue 11).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// MarshalBinary encodes s in the versioned, checksummed segment format.
func (s *Segment) MarshalBinary() ([]byte, error) {
	n := len(s.ids)
	size := 16 + len(s.postChunk)*4 + n*(s.dims*5+4)
	for i := range s.ids {
		size += len(s.ids[i]) + len(s.docIDs[i]) + len(s.texts[i]) + 12
	}
	b := make([]byte, 0, size)
	b = append(b, segmentMagic...)
	var flags byte
	if s.index != "" {
		flags |= flagPartitioned
	}
	b = append(b, segmentVersion, flags)
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(s.dims))
	putString := func(str string) {
		b = binary.AppendUvarint(b, uint64(len(str)))
		b = append(b, str...)
	}
	for i := range s.ids {
		putString(s.ids[i])
		putString(s.docIDs[i])
		putString(s.texts[i])
		keys := make([]string, 0, len(s.meta[i]))
		for k := range s.meta[i] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			putString(k)
			putString(s.meta[i][k])
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.terms)))
	for t, term := range s.terms {
		putString(term)
		lo, hi := s.postStart[t], s.postStart[t+1]
		b = binary.AppendUvarint(b, uint64(hi-lo))
		prev := -1
		for p := lo; p < hi; p++ {
			c := int(s.postChunk[p])
			b = binary.AppendUvarint(b, uint64(c-prev-1))
			b = binary.AppendUvarint(b, uint64(s.postTF[p]))
			prev = c
		}
	}
	if s.index != "" {
		putString(s.index)
		b = binary.AppendUvarint(b, uint64(len(s.parts)))
		prev := -1
		for i, id := range s.parts {
			b = binary.AppendUvarint(b, uint64(int(id)-prev-1))
			b = binary.AppendUvarint(b, uint64(s.starts[i+1]-s.starts[i]))
			prev = int(id)
		}
	}
	if s.dims > 0 {
		for _, sc := range s.scales {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(sc))
		}
		b = append(b, int8Bytes(s.qvecs)...)
		if littleEndian {
			b = append(b, float32Bytes(s.vecs)...)
		} else {
			for _, v := range s.vecs {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	return b, nil
}

// DecodeSegment decodes a segment written by [Segment.MarshalBinary]. Data that
// is truncated, altered or of another version is rejected with an error
// wrapping [ErrCorrupt]; DecodeSegment never panics and keeps no reference to
// data.
func DecodeSegment(data []byte) (*Segment, error) {
	if len(data) < len(segmentMagic)+2+4 || string(data[:4]) != segmentMagic {
		return nil, fmt.Errorf("retrieval: decode segment: %w: not a segment", ErrCorrupt)
	}
	if data[4] != segmentVersion {
		return nil, fmt.Errorf("retrieval: decode segment: %w: version %d, want %d", ErrCorrupt, data[4], segmentVersion)
	}
	if data[5]&^flagPartitioned != 0 {
		return nil, fmt.Errorf("retrieval: decode segment: %w: unknown flags %#x", ErrCorrupt, data[5])
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return nil, fmt.Errorf("retrieval: decode segment: %w: checksum mismatch", ErrCorrupt)
	}
	r := binread.New(body[6:], "retrieval: decode segment", ErrCorrupt)
	n := r.Count("chunk count", 4)
	dims64 := r.Uvarint("dims")
	if r.Err() == nil && dims64 > 1<<20 {
		r.Fail("dims %d", dims64)
	}
	dims := int(dims64)
	s := &Segment{
		ids: make([]string, n), docIDs: make([]string, n), texts: make([]string, n),
		meta: make([]map[string]string, n), chunkLen: make([]uint32, n), dims: dims,
	}
	seen := make(map[string]bool, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		s.ids[i] = r.String("chunk id")
		s.docIDs[i] = r.String("doc id")
		s.texts[i] = r.String("text")
		if r.Err() == nil && (s.ids[i] == "" || seen[s.ids[i]]) {
			r.Fail("chunk %d: empty or duplicate id", i)
		}
		seen[s.ids[i]] = true
		m := r.Count("metadata count", 2)
		if m > 0 {
			s.meta[i] = make(map[string]string, m)
		}
		prev := ""
		for j := 0; j < m && r.Err() == nil; j++ {
			k := r.String("metadata key")
			if j > 0 && k <= prev {
				r.Fail("chunk %d: metadata keys out of order", i)
			}
			prev = k
			s.meta[i][k] = r.String("metadata value")
		}
	}
	nt := r.Count("term count", 3)
	s.terms = make([]string, 0, nt)
	s.postStart = make([]uint32, 1, nt+1)
	lens := make([]uint64, n)
	for t := 0; t < nt && r.Err() == nil; t++ {
		term := r.String("term")
		if t > 0 && term <= s.terms[t-1] {
			r.Fail("terms out of order at %d", t)
		}
		s.terms = append(s.terms, term)
		df := r.Count("document frequency", 2)
		if r.Err() == nil && (df == 0 || df > n) {
			r.Fail("term %q: document frequency %d of %d chunks", term, df, n)
		}
		prev := -1
		for p := 0; p < df && r.Err() == nil; p++ {
			gap := r.Uvarint("posting gap")
			tf := r.Uvarint("term frequency")
			if r.Err() != nil {
				break
			}
			if gap >= uint64(n-prev-1) || tf == 0 || tf > math.MaxUint32 {
				r.Fail("term %q: bad posting", term)
				break
			}
			c := prev + 1 + int(gap)
			s.postChunk = append(s.postChunk, uint32(c))
			s.postTF = append(s.postTF, uint32(tf))
			lens[c] += tf
			prev = c
		}
		s.postStart = append(s.postStart, uint32(len(s.postChunk)))
	}
	for i, l := range lens {
		if l > math.MaxUint32 {
			r.Fail("chunk %d too long", i)
			break
		}
		s.chunkLen[i] = uint32(l)
		s.totalLen += int64(l)
	}
	if data[5]&flagPartitioned != 0 {
		partitions(r, s)
	}
	if r.Err() == nil && dims > 0 {
		want := uint64(n) * (uint64(dims)*5 + 4)
		if uint64(len(r.Rest())) != want {
			r.Fail("vector section holds %d bytes, want %d", len(r.Rest()), want)
		} else {
			s.scales = make([]float32, n)
			for i := range s.scales {
				sc := math.Float32frombits(binary.LittleEndian.Uint32(r.Rest()[4*i:]))
				if !(sc >= 0) || math.IsInf(float64(sc), 0) {
					r.Fail("chunk %d: bad scale", i)
					break
				}
				s.scales[i] = sc
			}
			q := r.Rest()[4*n : 4*n+n*dims]
			s.qvecs = make([]int8, n*dims)
			copy(int8Bytes(s.qvecs), q)
			f := r.Rest()[4*n+n*dims:]
			s.vecs = make([]float32, n*dims)
			if littleEndian {
				copy(float32Bytes(s.vecs), f)
			} else {
				for i := range s.vecs {
					s.vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:]))
				}
			}
			r.Skip(len(r.Rest()))
		}
	}
	if r.Err() == nil && len(r.Rest()) != 0 {
		r.Fail("%d trailing bytes", len(r.Rest()))
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	return s, nil
}

// partitions reads a partitioned segment's cluster runs into s.
func partitions(r *binread.Reader, s *Segment) {
	s.index = r.String("centroids id")
	p := r.Count("cluster count", 2)
	if r.Err() == nil && (s.index == "" || s.dims == 0 || p == 0 || p > MaxClusters) {
		r.Fail("partitions: %d clusters of centroids %q over %d dimensions", p, s.index, s.dims)
		return
	}
	s.parts, s.starts = make([]uint32, 0, p), make([]uint32, 1, p+1)
	prev, end := -1, 0
	for range p {
		gap, run := r.Uvarint("cluster id gap"), r.Uvarint("cluster run")
		if r.Err() != nil {
			return
		}
		if gap >= uint64(MaxClusters-prev-1) || run == 0 || run > uint64(s.Len()-end) {
			r.Fail("partitions: bad cluster run")
			return
		}
		prev += 1 + int(gap)
		end += int(run)
		s.parts, s.starts = append(s.parts, uint32(prev)), append(s.starts, uint32(end))
	}
	if end != s.Len() {
		r.Fail("partitions cover %d of %d chunks", end, s.Len())
	}
}

// littleEndian is true on the machines Switchboard runs on (amd64, arm64),
// where float32 slices are copied to and from the format as raw memory.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float32Bytes views v's memory as bytes (native byte order).
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// int8Bytes views v's memory as bytes.
func int8Bytes(v []int8) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v))
}

func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }
