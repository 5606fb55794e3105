package retrieval

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/binread"
)

// Inverted-file (IVF) partitioning. A large collection's vectors are
// clustered by spherical k-means ([KMeans]) into [Centroids]; a segment built
// by [Partition] holds its chunks sorted by their nearest centroid, with the
// runs of each cluster recorded, so a query with a [Probe] scans only the
// runs of the clusters whose centroids are nearest its vector (the nprobe
// nearest) instead of every vector. BM25 is unaffected: postings still cover
// every chunk.

// IVF limits.
const (
	// MaxClusters bounds k: the centroids of the largest store (2,048 × 384
	// float32, 3 MiB) probe in well under a millisecond.
	MaxClusters = 2048
	// MinClusters is the least k worth partitioning for.
	MinClusters = 16
)

// Clusters returns k for a collection of n vectors: about √n, within
// [MinClusters]..[MaxClusters].
func Clusters(n int64) int {
	return int(min(max(int64(math.Round(math.Sqrt(float64(n)))), MinClusters), MaxClusters))
}

// DefaultNProbe returns how many of k clusters a probe scans when the query
// names no number: k/16, at least 8 (all of them when k is smaller). On the
// clustered benchmark (scripts/bench-ivf) it keeps recall@10 against exact
// search at 0.95 or more while scanning about a sixteenth of the vectors.
func DefaultNProbe(k int) int { return min(k, max(8, (k+15)/16)) }

// Centroids are the cluster centres of an inverted-file index: k unit
// vectors of the collection's dimensions, named by an id that the segments
// partitioned by them record. Centroids are immutable and safe for
// concurrent use.
type Centroids struct {
	id     string
	dims   int
	vecs   []float32 // k*dims
	qvecs  []int8    // k*dims, for assigning many vectors with the int8 kernel
	scales []float32
}

// ErrCentroids is wrapped by the errors of [NewCentroids] and
// [DecodeCentroids] for centroids that cannot be used.
var ErrCentroids = errors.New("bad centroids")

// NewCentroids returns the centroids vecs (k*dims values, each vector of
// unit length or zero) under id.
func NewCentroids(id string, vecs []float32, dims int) (*Centroids, error) {
	if id == "" || dims <= 0 || len(vecs) == 0 || len(vecs)%dims != 0 || len(vecs)/dims > MaxClusters {
		return nil, fmt.Errorf("retrieval: centroids %q: %w: %d values of %d dimensions (at most %d vectors)", id, ErrCentroids, len(vecs), dims, MaxClusters)
	}
	for _, x := range vecs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("retrieval: centroids %q: %w: a non-finite value", id, ErrCentroids)
		}
	}
	c := &Centroids{id: id, dims: dims, vecs: slices.Clone(vecs)}
	c.qvecs, c.scales = quantizeAll(c.vecs, dims)
	return c, nil
}

// ID returns the centroids' id.
func (c *Centroids) ID() string { return c.id }

// K returns the number of clusters.
func (c *Centroids) K() int { return len(c.vecs) / c.dims }

// Dims returns the centroids' dimensions.
func (c *Centroids) Dims() int { return c.dims }

// Centroid returns cluster i's centroid, dims values the caller must not
// modify.
func (c *Centroids) Centroid(i int) []float32 { return c.vecs[i*c.dims : (i+1)*c.dims : (i+1)*c.dims] }

// Nearest returns the ids of the n clusters whose centroids have the highest
// dot product with v, in increasing order of id: the clusters a probe of v
// scans. It returns every cluster when n >= K.
func (c *Centroids) Nearest(v []float32, n int) []uint32 {
	k := c.K()
	if n >= k || len(v) != c.dims {
		out := make([]uint32, k)
		for i := range out {
			out[i] = uint32(i)
		}
		return out
	}
	top := candidates{k: max(n, 1), h: make([]candidate, 0, max(n, 1))}
	for i := range k {
		s := dotFloat(v, c.vecs[i*c.dims:(i+1)*c.dims])
		if len(top.h) == top.k && s <= top.min() {
			continue
		}
		top.push(candidate{score: s, idx: int32(i)})
	}
	out := make([]uint32, len(top.h))
	for i, x := range top.h {
		out[i] = uint32(x.idx)
	}
	slices.Sort(out)
	return out
}

// Assign appends to dst the cluster of each vector of vecs (whole vectors
// of Dims values, flat) and returns it: the centroid with the highest dot
// product, found as [KMeans] and [Partition] assign, by the int8 kernel's
// shortlist rescored in float32 where the kernel exists.
func (c *Centroids) Assign(dst []uint32, vecs []float32) []uint32 {
	a := c.assigner()
	for i := 0; i+c.dims <= len(vecs); i += c.dims {
		k, _ := a.nearest(vecs[i : i+c.dims])
		dst = append(dst, uint32(k))
	}
	return dst
}

// assignShortlist is how many clusters the int8 scan of [Centroids.assigner]
// shortlists for float32 rescoring.
const assignShortlist = 4

// assigner finds nearest centroids for many vectors, reusing its buffers;
// one goroutine uses it at a time.
type assigner struct {
	c      *Centroids
	qq     []int16
	out    []int32
	approx []float32
}

func (c *Centroids) assigner() *assigner {
	return &assigner{c: c, qq: make([]int16, c.dims), out: make([]int32, c.K()), approx: make([]float32, c.K())}
}

// nearest returns the cluster of v and v's dot product with its centroid:
// the int8 scan shortlists the best few, float32 decides.
func (a *assigner) nearest(v []float32) (int, float32) {
	c := a.c
	if !useAsm {
		// Without a SIMD kernel, float32 is the cheaper scan: exact.
		for i := range a.approx {
			a.approx[i] = dotFloat(v, c.vecs[i*c.dims:(i+1)*c.dims])
		}
		return argmax(a.approx)
	}
	quantize(a.qq, v, queryLimit(c.dims))
	dots(a.qq, c.qvecs, c.dims, a.out)
	for i, d := range a.out {
		a.approx[i] = float32(d) * c.scales[i]
	}
	short := candidates{k: assignShortlist, h: make([]candidate, 0, assignShortlist)}
	for i, s := range a.approx {
		if len(short.h) == short.k && s <= short.min() {
			continue
		}
		short.push(candidate{score: s, idx: int32(i)})
	}
	best, bestScore := -1, float32(0)
	for _, x := range short.h {
		s := dotFloat(v, c.vecs[int(x.idx)*c.dims:int(x.idx+1)*c.dims])
		if best < 0 || s > bestScore || s == bestScore && int(x.idx) < best {
			best, bestScore = int(x.idx), s
		}
	}
	return best, bestScore
}

func argmax(s []float32) (int, float32) {
	best := 0
	for i, x := range s {
		if x > s[best] {
			best = i
		}
	}
	return best, s[best]
}

// KMeansOptions configures [KMeans].
type KMeansOptions struct {
	// K is the number of clusters, 1..[MaxClusters], at most the sample's size.
	K int
	// Iterations bounds Lloyd's iterations; if zero, 8. They stop early
	// once fewer than 0.1% of the sample change cluster.
	Iterations int
	// Seed makes the clustering deterministic: the same sample and seed give
	// the same centroids.
	Seed uint64
}

// KMeans clusters sample (n unit vectors of dims values, flat) by spherical
// k-means: k-means++ seeding (each next centre drawn with probability
// proportional to its squared distance from the nearest chosen one), then
// Lloyd's iterations, each centre the normalised mean of its members. A
// cluster left empty is reseeded with the member worst served by its
// centre. It returns the centroids under id and their spread: the mean of
// 1 - cos(vector, its centroid) over the sample, which a caller compares with
// later assignments to notice drift. The caller bounds the sample (its
// memory is the caller's); KMeans allocates O(n + k·dims) more, and checks
// ctx between steps.
func KMeans(ctx context.Context, id string, sample []float32, dims int, opts KMeansOptions) (*Centroids, float64, error) {
	if dims <= 0 || len(sample)%dims != 0 {
		return nil, 0, fmt.Errorf("retrieval: k-means: %d values are not vectors of %d dimensions", len(sample), dims)
	}
	n, k := len(sample)/dims, opts.K
	if k < 1 || k > MaxClusters || k > n {
		return nil, 0, fmt.Errorf("retrieval: k-means: k %d outside 1..%d for %d vectors", k, min(MaxClusters, n), n)
	}
	iters := opts.Iterations
	if iters <= 0 {
		iters = 8
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	vec := func(i int) []float32 { return sample[i*dims : (i+1)*dims] }

	// k-means++: sim[i] is sample i's best dot product with a chosen centre;
	// its squared distance from it is 2 - 2·sim. The int8 kernel scores a new
	// centre against the whole sample at once.
	qs, qscales := quantizeAll(sample, dims)
	qq := make([]int16, dims)
	out := make([]int32, n)
	sim := make([]float32, n)
	for i := range sim {
		sim[i] = -2
	}
	centres := make([]float32, 0, k*dims)
	pick := rng.IntN(n)
	for c := range k {
		if c%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		v := vec(pick)
		centres = append(centres, v...)
		if c == k-1 {
			break
		}
		var total float64
		if useAsm {
			qscale := quantize(qq, v, queryLimit(dims))
			dots(qq, qs, dims, out)
			for i, d := range out {
				if s := float32(d) * qscales[i] * qscale; s > sim[i] {
					sim[i] = s
				}
			}
		} else {
			for i := range sim {
				if s := dotFloat(v, vec(i)); s > sim[i] {
					sim[i] = s
				}
			}
		}
		for _, s := range sim {
			total += float64(max(2-2*s, 0))
		}
		if total <= 0 {
			pick = rng.IntN(n) // every point sits on a centre: any will do
			continue
		}
		r := rng.Float64() * total
		pick = n - 1
		for i, s := range sim {
			if r -= float64(max(2-2*s, 0)); r < 0 {
				pick = i
				break
			}
		}
	}
	qs, qscales, out = nil, nil, nil

	cs, err := NewCentroids(id, centres, dims)
	if err != nil {
		return nil, 0, err
	}
	assign := make([]int32, n)
	for i := range assign {
		assign[i] = -1
	}
	sums := make([]float64, k*dims)
	counts := make([]int, k)
	for it := 0; it < iters; it++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		a := cs.assigner()
		changed := 0
		for i := range n {
			c, s := a.nearest(vec(i))
			if int32(c) != assign[i] {
				changed++
				assign[i] = int32(c)
			}
			sim[i] = s
		}
		if it > 0 && changed*1000 < n {
			break
		}
		clear(sums)
		clear(counts)
		for i, c := range assign {
			counts[c]++
			row := sums[int(c)*dims : int(c+1)*dims]
			for j, x := range vec(i) {
				row[j] += float64(x)
			}
		}
		next := make([]float32, k*dims)
		taken := map[int]bool{}
		for c := range k {
			if counts[c] == 0 {
				// Reseed with the sample point farthest from its centre.
				worst := -1
				for i, s := range sim {
					if !taken[i] && (worst < 0 || s < sim[worst]) {
						worst = i
					}
				}
				taken[worst] = true
				copy(next[c*dims:], vec(worst))
				continue
			}
			normalise(next[c*dims:(c+1)*dims], sums[c*dims:(c+1)*dims])
		}
		if cs, err = NewCentroids(id, next, dims); err != nil {
			return nil, 0, err
		}
	}
	a := cs.assigner()
	var spread float64
	for i := range n {
		_, s := a.nearest(vec(i))
		spread += 1 - float64(s)
	}
	return cs, spread / float64(n), nil
}

// normalise writes sum scaled to unit length into dst (zero stays zero).
func normalise(dst []float32, sum []float64) {
	var ss float64
	for _, x := range sum {
		ss += x * x
	}
	if ss == 0 {
		clear(dst)
		return
	}
	inv := 1 / math.Sqrt(ss)
	for j, x := range sum {
		dst[j] = float32(x * inv)
	}
}

// Probe limits the vector scan of partitioned segments (see [Partition]) to
// the clusters whose centroids are nearest the vector searched with.
type Probe struct {
	// Centroids holds the centroids of the segments' partitions by id; a
	// partitioned segment whose centroids are missing is scanned whole.
	Centroids map[string]*Centroids
	// NProbe is how many clusters of each set of centroids are scanned; if
	// zero, [DefaultNProbe] of its k.
	NProbe int
}

// span is a run of chunk indexes [lo, hi) of a segment.
type span struct{ lo, hi int }

// spans returns, for each of segs, the runs of chunks a vector scan with v
// reads: every chunk of a segment without partitions (or whose centroids
// p lacks), only the probed clusters' runs of a partitioned one. partial
// reports whether some chunk was left out.
func (p *Probe) spans(segs []*Segment, v []float32) (out [][]span, partial bool) {
	out = make([][]span, len(segs))
	probed := map[string][]uint32{}
	for i, s := range segs {
		c := (*Centroids)(nil)
		if p != nil && s.index != "" {
			c = p.Centroids[s.index]
		}
		if c == nil || c.dims != s.dims {
			out[i] = []span{{0, s.Len()}}
			continue
		}
		ids, ok := probed[s.index]
		if !ok {
			n := p.NProbe
			if n <= 0 {
				n = DefaultNProbe(c.K())
			}
			ids = c.Nearest(v, n)
			probed[s.index] = ids
		}
		// Both lists are sorted: walk them together.
		j := 0
		for pi, id := range s.parts {
			for j < len(ids) && ids[j] < id {
				j++
			}
			if j < len(ids) && ids[j] == id {
				out[i] = append(out[i], span{int(s.starts[pi]), int(s.starts[pi+1])})
			} else {
				partial = true
			}
		}
	}
	return out, partial
}

// Partition returns one segment holding the chunks of segs that keep
// accepts (a nil keep accepts every chunk), as [Merge] does, but ordered by
// the cluster of cs each chunk's vector is nearest (stably), with the run of
// each cluster recorded, so that a [Probe] with cs scans only the probed
// clusters' runs. It also returns the chunks' spread, the mean of 1 - cos
// (vector, its centroid). Every segment must have cs's dimensions. It checks
// ctx as it assigns.
func Partition(ctx context.Context, segs []*Segment, keep func(s, i int) bool, cs *Centroids) (*Segment, float64, error) {
	for si, s := range segs {
		if s.dims != cs.dims {
			return nil, 0, fmt.Errorf("retrieval: partition: segment %d: %w (%d, want %d)", si, ErrDims, s.dims, cs.dims)
		}
	}
	refs := kept(segs, keep)
	k := cs.K()
	cluster := make([]int32, len(refs))
	counts := make([]uint32, k+1)
	a := cs.assigner()
	var spread float64
	for r, ref := range refs {
		if r%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		s := segs[ref.seg]
		c, sim := a.nearest(s.vecs[int(ref.idx)*s.dims : int(ref.idx+1)*s.dims])
		cluster[r] = int32(c)
		counts[c+1]++
		spread += 1 - float64(sim)
	}
	// A counting sort by cluster, stable.
	for c := 1; c <= k; c++ {
		counts[c] += counts[c-1]
	}
	starts := slices.Clone(counts)
	sorted := make([]chunkRef, len(refs))
	for r, ref := range refs {
		c := cluster[r]
		sorted[counts[c]] = ref
		counts[c]++
	}
	out, err := gather(segs, sorted)
	if err != nil {
		return nil, 0, fmt.Errorf("retrieval: partition: %w", err)
	}
	if len(sorted) == 0 {
		return out, 0, nil
	}
	out.index = cs.id
	for c := range k {
		if starts[c+1] > starts[c] {
			out.parts = append(out.parts, uint32(c))
			out.starts = append(out.starts, starts[c])
		}
	}
	out.starts = append(out.starts, uint32(len(sorted)))
	return out, spread / float64(len(refs)), nil
}

// Index returns the id of the centroids s is partitioned by, or "" when its
// chunks are not partitioned.
func (s *Segment) Index() string { return s.index }

// The centroids format, version 1 (little-endian): "SBCT" magic, u8
// version, uvarint id length, id, uvarint k, uvarint dims, k×dims f32, u32
// CRC-32C of every preceding byte.
const (
	centroidsMagic   = "SBCT"
	centroidsVersion = 1
)

// MarshalBinary encodes c in the versioned, checksummed centroids format.
func (c *Centroids) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 32+len(c.id)+4*len(c.vecs))
	b = append(b, centroidsMagic...)
	b = append(b, centroidsVersion)
	b = binary.AppendUvarint(b, uint64(len(c.id)))
	b = append(b, c.id...)
	b = binary.AppendUvarint(b, uint64(c.K()))
	b = binary.AppendUvarint(b, uint64(c.dims))
	for _, x := range c.vecs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
}

// DecodeCentroids decodes centroids written by [Centroids.MarshalBinary];
// anything else is refused with an error wrapping [ErrCorrupt], before
// more than the data's size is allocated.
func DecodeCentroids(data []byte) (*Centroids, error) {
	bad := func(what string) error {
		return fmt.Errorf("retrieval: decode centroids: %w: %s", ErrCorrupt, what)
	}
	if len(data) < len(centroidsMagic)+1+4 || string(data[:4]) != centroidsMagic {
		return nil, bad("not centroids")
	}
	if data[4] != centroidsVersion {
		return nil, bad(fmt.Sprintf("version %d, want %d", data[4], centroidsVersion))
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, bad("checksum mismatch")
	}
	r := binread.New(body[5:], "retrieval: decode centroids", ErrCorrupt)
	id := r.String("id")
	k := r.Uvarint("k")
	dims := r.Uvarint("dims")
	if r.Err() != nil {
		return nil, r.Err()
	}
	if k == 0 || k > MaxClusters || dims == 0 || dims > 1<<20 || uint64(len(r.Rest())) != 4*k*dims {
		return nil, bad(fmt.Sprintf("%d centroids of %d dimensions in %d bytes", k, dims, len(r.Rest())))
	}
	vecs := make([]float32, k*dims)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.Rest()[4*i:]))
	}
	c, err := NewCentroids(id, vecs, int(dims))
	if err != nil {
		return nil, bad(err.Error())
	}
	return c, nil
}
