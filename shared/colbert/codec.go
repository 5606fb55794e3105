package colbert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// Bounds and defaults of [TrainOptions].
const (
	// MaxCentroids is the most centroids a codec has: as many as
	// [retrieval.KMeans] trains (ids are stored in 16 bits).
	MaxCentroids = retrieval.MaxClusters
	// DefaultIterations is how many k-means rounds [Train] runs at most.
	DefaultIterations = 8
	// DefaultSample is how many token vectors [Train] clusters at most.
	DefaultSample = 16384
	// DefaultBits is the residual precision, bits per dimension.
	DefaultBits = 2
)

// ErrCorrupt is wrapped by every error of [ParseCodec] and [Codec.DecodeShard]
// for data that is not well formed.
var ErrCorrupt = errors.New("corrupt late-interaction data")

// castagnoli returns the CRC-32C table, made on first use: making it takes
// about 0.2 ms on amd64, which a bootstrap that reads nothing of this
// format on its first call should not spend at start (issue 11).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// codecCentroidsID names a codec's centroids inside it; the codec's own
// fingerprint, [Codec.ID], is what shards record.
const codecCentroidsID = "colbert"

// Codec compresses token vectors as ColBERTv2 does (Santhanam et al., 2022):
// each vector becomes the id of its nearest centroid and its residual from
// that centroid, every dimension quantised to [Codec.Bits] bits. The bucket
// cutoffs are quantiles of the residuals seen in training, and each bucket
// decodes to its weight, the residual quantile at its middle. A codec is
// immutable and safe for concurrent use; a store trains one and compresses
// every document with it.
type Codec struct {
	dims, bits int
	centroids  *retrieval.Centroids
	cutoffs    []float32 // 2^bits - 1, increasing
	weights    []float32 // 2^bits
	id         uint64
}

// TrainOptions configure [Train]. A nil *TrainOptions is the zero value.
type TrainOptions struct {
	// Centroids is how many centroids to learn. If zero, PLAID's choice,
	// the power of two at or below 16·√n for n token vectors, at least 16;
	// never more than the vectors sampled, nor [MaxCentroids].
	Centroids int
	// Bits is the residual precision, 1 or 2. If zero, [DefaultBits].
	Bits int
	// Iterations bounds k-means' rounds. If zero, [DefaultIterations].
	Iterations int
	// Sample bounds the vectors clustered (a seeded sample of them). If zero, [DefaultSample].
	Sample int
	// Seed makes training deterministic: the same vectors, options and seed
	// give the same codec.
	Seed uint64
}

// Train learns a codec from token vectors (unit length, all of one
// dimension count, a multiple of 8): centroids by [retrieval.KMeans] over a
// seeded sample, then residual quantiles. It checks ctx between rounds.
func Train(ctx context.Context, tokens [][]float32, opts *TrainOptions) (*Codec, error) {
	if opts == nil {
		opts = &TrainOptions{}
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("colbert: train: no token vectors")
	}
	dims := len(tokens[0])
	if dims == 0 || dims%8 != 0 || dims > multivector.MaxDims {
		return nil, fmt.Errorf("colbert: train: %d dimensions: want a multiple of 8 up to %d", dims, multivector.MaxDims)
	}
	for i, t := range tokens {
		if len(t) != dims {
			return nil, fmt.Errorf("colbert: train: token vector %d has %d dimensions, want %d", i, len(t), dims)
		}
	}
	bits := opts.Bits
	if bits == 0 {
		bits = DefaultBits
	}
	if bits != 1 && bits != 2 {
		return nil, fmt.Errorf("colbert: train: %d bits a dimension: want 1 or 2", bits)
	}
	iters := cmpOr(opts.Iterations, DefaultIterations)
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	sample := tokens
	if n := cmpOr(opts.Sample, DefaultSample); len(tokens) > n {
		perm := rng.Perm(len(tokens))[:n]
		slices.Sort(perm) // the sample keeps the input's order
		sample = make([][]float32, n)
		for i, p := range perm {
			sample[i] = tokens[p]
		}
	}
	k := opts.Centroids
	if k == 0 {
		k = 16
		for k*2 <= min(int(16*math.Sqrt(float64(len(tokens)))), MaxCentroids) {
			k *= 2
		}
	}
	if k < 1 || k > MaxCentroids {
		return nil, fmt.Errorf("colbert: train: %d centroids: want 1..%d", k, MaxCentroids)
	}
	flat := make([]float32, 0, len(sample)*dims)
	for _, v := range sample {
		flat = append(flat, v...)
	}
	cs, _, err := retrieval.KMeans(ctx, codecCentroidsID, flat, dims, retrieval.KMeansOptions{K: min(k, len(sample)), Iterations: iters, Seed: opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("colbert: train: %w", err)
	}
	c := &Codec{dims: dims, bits: bits, centroids: cs}
	residuals := make([]float32, 0, len(sample)*dims)
	for i, a := range cs.Assign(make([]uint32, 0, len(sample)), flat) {
		cen := c.centroid(int(a))
		for j, x := range sample[i] {
			residuals = append(residuals, x-cen[j])
		}
	}
	slices.Sort(residuals)
	buckets := 1 << bits
	quantile := func(q float64) float32 {
		return residuals[min(int(q*float64(len(residuals))), len(residuals)-1)]
	}
	c.cutoffs = make([]float32, buckets-1)
	c.weights = make([]float32, buckets)
	for b := range buckets {
		if b > 0 {
			c.cutoffs[b-1] = quantile(float64(b) / float64(buckets))
		}
		c.weights[b] = quantile((float64(b) + 0.5) / float64(buckets))
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return nil, err
	}
	c.id = text.Hash64(string(b))
	return c, nil
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Dims returns the length of the token vectors c compresses.
func (c *Codec) Dims() int { return c.dims }

// Bits returns the residual precision, bits per dimension.
func (c *Codec) Bits() int { return c.bits }

// Centroids returns the number of centroids.
func (c *Codec) Centroids() int { return c.centroids.K() }

// ID returns the codec's fingerprint, the FNV-1a hash of its encoding; a shard
// names the codec it was compressed with by it.
func (c *Codec) ID() uint64 { return c.id }

// TokenBytes returns the compressed size of one token vector: a 16-bit
// centroid id and the packed residual.
func (c *Codec) TokenBytes() int { return 2 + c.residualBytes() }

func (c *Codec) residualBytes() int { return c.dims * c.bits / 8 }

func (c *Codec) centroid(a int) []float32 { return c.centroids.Centroid(a) }

// dot returns the dot product of a and b (of equal length).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Tokens are one text's compressed token vectors: Codes[i] is token i's
// centroid id, and its residual is the i-th run of [Codec.TokenBytes]-2
// bytes of Residuals, dimension j's bucket in bits j·Bits.. of the run,
// least significant first.
type Tokens struct {
	Codes     []uint16
	Residuals []byte
}

// Len returns the number of tokens.
func (t Tokens) Len() int { return len(t.Codes) }

// Compress encodes token vectors (of c's dimensions) with c.
func (c *Codec) Compress(tokens [][]float32) (Tokens, error) {
	flat := make([]float32, 0, len(tokens)*c.dims)
	for i, v := range tokens {
		if len(v) != c.dims {
			return Tokens{}, fmt.Errorf("colbert: compress: token vector %d has %d dimensions, want %d", i, len(v), c.dims)
		}
		flat = append(flat, v...)
	}
	rb := c.residualBytes()
	out := Tokens{Codes: make([]uint16, len(tokens)), Residuals: make([]byte, len(tokens)*rb)}
	for i, a := range c.centroids.Assign(make([]uint32, 0, len(tokens)), flat) {
		out.Codes[i] = uint16(a)
		cen := c.centroid(int(a))
		res := out.Residuals[i*rb : (i+1)*rb]
		for j, x := range tokens[i] {
			b := bucket(c.cutoffs, x-cen[j])
			res[j*c.bits/8] |= byte(b) << (j * c.bits % 8)
		}
	}
	return out, nil
}

// bucket returns how many cutoffs are at or below r.
func bucket(cutoffs []float32, r float32) int {
	b := 0
	for b < len(cutoffs) && cutoffs[b] <= r {
		b++
	}
	return b
}

// Decompress appends the unit vectors t encodes to dst (t.Len() × Dims
// values, row after row) and returns it: centroid plus bucket weights,
// normalised.
func (c *Codec) Decompress(dst []float32, t Tokens) []float32 {
	rb, mask := c.residualBytes(), byte(1<<c.bits-1)
	for i, a := range t.Codes {
		cen := c.centroid(int(a))
		res := t.Residuals[i*rb : (i+1)*rb]
		start := len(dst)
		var norm float32
		for j, x := range cen {
			v := x + c.weights[res[j*c.bits/8]>>(j*c.bits%8)&mask]
			norm += v * v
			dst = append(dst, v)
		}
		if norm > 0 {
			inv := float32(1 / math.Sqrt(float64(norm)))
			for j := start; j < len(dst); j++ {
				dst[j] *= inv
			}
		}
	}
	return dst
}

// The codec format, version 1 (integers little-endian):
//
//	"SBLC" magic, u8 version (1), u8 bits (1 or 2), u16 dims (a multiple of 8), u32 k (centroids)
//	k × dims f32 centroids, 2^bits - 1 f32 cutoffs, 2^bits f32 weights
//	u32 CRC-32C (Castagnoli) of every preceding byte
const (
	codecMagic   = "SBLC"
	codecVersion = 1
	codecHeader  = 12
)

// MarshalBinary encodes c in the versioned, checksummed codec format.
func (c *Codec) MarshalBinary() ([]byte, error) {
	k := c.Centroids()
	b := make([]byte, 0, codecHeader+4*(k*c.dims+len(c.cutoffs)+len(c.weights))+4)
	b = append(b, codecMagic...)
	b = append(b, codecVersion, byte(c.bits))
	b = binary.LittleEndian.AppendUint16(b, uint16(c.dims))
	b = binary.LittleEndian.AppendUint32(b, uint32(k))
	for a := range k {
		b = appendFloats(b, c.centroid(a))
	}
	b = appendFloats(appendFloats(b, c.cutoffs), c.weights)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
}

func appendFloats(b []byte, fs []float32) []byte {
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// ParseCodec decodes a codec written by [Codec.MarshalBinary]. It checks the
// length the header implies against the data before allocating anything, so
// its output is never larger than its input.
func ParseCodec(b []byte) (*Codec, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("colbert: parse codec: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(b) < codecHeader+4 || string(b[:4]) != codecMagic {
		return nil, corrupt("not a codec")
	}
	if b[4] != codecVersion {
		return nil, corrupt("version %d, want %d", b[4], codecVersion)
	}
	bits, dims, k := int(b[5]), int(binary.LittleEndian.Uint16(b[6:])), int(binary.LittleEndian.Uint32(b[8:]))
	switch {
	case bits != 1 && bits != 2:
		return nil, corrupt("%d bits", bits)
	case dims == 0 || dims%8 != 0 || dims > multivector.MaxDims:
		return nil, corrupt("%d dimensions", dims)
	case k == 0 || k > MaxCentroids:
		return nil, corrupt("%d centroids", k)
	}
	floats := k*dims + 2<<bits - 1
	if len(b) != codecHeader+4*floats+4 {
		return nil, corrupt("%d bytes, want %d", len(b), codecHeader+4*floats+4)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, corrupt("checksum mismatch")
	}
	fs := make([]float32, floats)
	for i := range fs {
		f := math.Float32frombits(binary.LittleEndian.Uint32(body[codecHeader+4*i:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, corrupt("value %d is not finite", i)
		}
		fs[i] = f
	}
	cs, err := retrieval.NewCentroids(codecCentroidsID, fs[:k*dims], dims)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	c := &Codec{dims: dims, bits: bits, centroids: cs, id: text.Hash64(string(b))}
	c.cutoffs = fs[k*dims : k*dims+1<<bits-1]
	c.weights = fs[k*dims+1<<bits-1:]
	return c, nil
}
