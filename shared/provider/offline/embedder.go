package offline

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// DefaultDims is the offline embedder's dimension count when a store names
// none: the size the vector search is measured at (384, as small sentence
// models), which scans 100,000 chunks in a few milliseconds.
const DefaultDims = 384

// EmbedderModel names the hashing scheme [NewEmbedder]'s vectors come from;
// a store records it, so a changed scheme must change the name.
const EmbedderModel = "hashing-v1"

// hashing is the offline embedder: signed feature hashing (Weinberger et al.,
// 2009) of three feature groups of a text, each weighted by 1+ln(tf),
// normalised on its own and then mixed with fixed weights:
//
//   - stemmed words ([text.Terms]),
//   - pairs of consecutive stemmed words (weight 0 in hashing-v1),
//   - character n-grams of the words (lengths minN..maxN, with word-boundary
//     marks), which match inflections and compounds the stemmer misses.
//
// The result is L2-normalised. It needs no model and no network, costs
// microseconds per text, and gives the same vector for the same text forever.
type hashing struct {
	dims                int
	words, pairs, grams float64 // group weights
	minN, maxN          int
}

var _ provider.Embedder = (*hashing)(nil)

// NewEmbedder returns the offline hashing embedder producing dims-dimension
// unit vectors (if dims <= 0, [DefaultDims]). It is deterministic and safe for
// concurrent use; its results say provider "offline", model [EmbedderModel].
func NewEmbedder(dims int) provider.Embedder {
	if dims <= 0 {
		dims = DefaultDims
	}
	// Weights chosen on SciFact's train split (vector-only nDCG@10 at 384
	// dimensions): words+pairs+grams 1/0.5/0.5 gave 0.419, words alone 0.423,
	// grams alone 0.459, words 0.5 + grams 1 0.472. Word pairs add collisions
	// more than signal at this size, so hashing-v1 leaves them out.
	return &hashing{dims: dims, words: 0.5, pairs: 0, grams: 1, minN: 3, maxN: 5}
}

// Provider implements [provider.Embedder].
func (h *hashing) Provider() string { return Name }

// Model implements [provider.Embedder].
func (h *hashing) Model() string { return EmbedderModel }

// Dims implements [provider.Embedder].
func (h *hashing) Dims() int { return h.dims }

// Embed implements [provider.Embedder]. Queries and documents are embedded
// alike. A text without terms (empty, or only stop words and punctuation)
// gives the zero vector, the only non-unit result.
func (h *hashing) Embed(ctx context.Context, req provider.EmbedRequest) (provider.Embeddings, error) {
	out := provider.Embeddings{Vectors: make([][]float32, len(req.Texts)), Dims: h.dims, Provider: Name, Model: EmbedderModel}
	for i, t := range req.Texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return provider.Embeddings{}, fmt.Errorf("offline: embed: %w", err)
			}
		}
		out.Vectors[i] = h.embed(t)
	}
	return out, nil
}

// FNV-1a, 64 bits, fed incrementally so features need no string building.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvByte(h uint64, b byte) uint64 {
	h ^= uint64(b)
	return h * fnvPrime
}

// addGroup adds weight × one feature group's normalised, signed-hashed
// vector to v. feats holds the group's feature hashes, one per occurrence; it
// is sorted in place, so equal features form runs whose lengths are the term
// frequencies, and sums happen in a fixed order (the same vector every time).
func (b *buffers) addGroup(v []float64, feats []uint64, weight float64) {
	if len(feats) == 0 || weight == 0 {
		return
	}
	b.sort(feats)
	var norm float64
	eachRun(feats, func(_ uint64, tf int) {
		w := tfWeight(tf)
		norm += w * w
	})
	scale := weight / math.Sqrt(norm)
	eachRun(feats, func(f uint64, tf int) {
		// Mix the bits so index and sign come from independent-looking parts.
		x := f ^ f>>29
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 32
		i := int(x % uint64(len(v)))
		w := tfWeight(tf) * scale
		if x>>63 == 1 {
			w = -w
		}
		v[i] += w
	})
}

// tfWeights holds 1+ln(tf) for the term frequencies most features have.
var tfWeights = func() (w [64]float64) {
	for tf := 1; tf < len(w); tf++ {
		w[tf] = 1 + math.Log(float64(tf))
	}
	return w
}()

// tfWeight returns 1+ln(tf), the weight of a feature occurring tf times.
func tfWeight(tf int) float64 {
	if tf < len(tfWeights) {
		return tfWeights[tf]
	}
	return 1 + math.Log(float64(tf))
}

// sort sorts feats in increasing order. Sorting was most of an embedding's
// time. Feature hashes are uniform, so one counting pass on their top bits
// spreads them over buckets of a few distinct values each, which insertion
// sort finishes: two linear passes where a comparison sort mispredicts a
// branch per step. A bucket that needs many moves anyway (a text repeating
// words whose hashes share their top bits) is sorted by comparison, so no
// text makes it quadratic.
func (b *buffers) sort(feats []uint64) {
	n := len(feats)
	if n < 64 {
		slices.Sort(feats)
		return
	}
	width := min(max(bits.Len(uint(n))-2, 4), 14) // about four features a bucket
	shift := 64 - width
	b.starts = append(b.starts[:0], make([]int, 1<<width+1)...)
	starts := b.starts // starts[k] is where bucket k begins, once summed
	for _, f := range feats {
		starts[f>>shift+1]++
	}
	for k := 1; k < len(starts); k++ {
		starts[k] += starts[k-1]
	}
	b.next = append(b.next[:0], starts[:len(starts)-1]...)
	b.tmp = slices.Grow(b.tmp[:0], n)[:n]
	for _, f := range feats {
		k := f >> shift
		b.tmp[b.next[k]] = f
		b.next[k]++
	}
	for k := 0; k+1 < len(starts); k++ {
		insertionSort(b.tmp[starts[k]:starts[k+1]])
	}
	copy(feats, b.tmp)
}

// insertionSort sorts a, switching to a comparison sort past a few moves
// per element.
func insertionSort(a []uint64) {
	budget := 4*len(a) + 16
	for i := 1; i < len(a); i++ {
		j := i
		for ; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
		if budget -= i - j; budget < 0 {
			slices.Sort(a)
			return
		}
	}
}

// eachRun calls fn with each distinct value of sorted and its count.
func eachRun(sorted []uint64, fn func(f uint64, n int)) {
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		fn(sorted[i], j-i)
		i = j
	}
}

// buffers are one embedding's scratch space, pooled: texts of a few thousand
// features would otherwise spend most of their time growing maps and slices.
type buffers struct {
	words, pairs, grams []uint64
	v                   []float64
	tmp                 []uint64 // sort's scratch space
	starts, next        []int    // sort's buckets
}

var scratch = sync.Pool{New: func() any { return new(buffers) }}

func (h *hashing) embed(s string) []float32 {
	b := scratch.Get().(*buffers)
	defer scratch.Put(b)
	b.words, b.pairs, b.grams = b.words[:0], b.pairs[:0], b.grams[:0]
	terms := text.Terms(s)
	for i, t := range terms {
		b.words = append(b.words, fnvString(fnvByte(fnvOffset, 'w'), t))
		if i > 0 && h.pairs != 0 {
			p := fnvString(fnvByte(fnvOffset, 'p'), terms[i-1])
			b.pairs = append(b.pairs, fnvString(fnvByte(p, ' '), t))
		}
	}
	if h.grams != 0 {
		for _, tok := range text.Tokens(s) {
			if text.IsStopWord(tok) {
				continue
			}
			b.grams = appendGrams(b.grams, tok, h.minN, h.maxN)
		}
	}
	if cap(b.v) < h.dims {
		b.v = make([]float64, h.dims)
	}
	v := b.v[:h.dims]
	clear(v)
	b.addGroup(v, b.words, h.words)
	b.addGroup(v, b.pairs, h.pairs)
	b.addGroup(v, b.grams, h.grams)
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, h.dims)
	if norm == 0 {
		return out
	}
	inv := 1 / math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

// appendGrams appends the hashes of the character n-grams (minN..maxN runes)
// of "<tok>", the angle brackets marking the word's start and end.
func appendGrams(g []uint64, tok string, minN, maxN int) []uint64 {
	// Rune boundaries of "<" + tok + ">": offsets into tok, -1 for "<".
	var bounds [64]int
	b := bounds[:0]
	b = append(b, -1)
	for i := range tok {
		if len(b) == cap(b)-1 {
			break // long tokens: n-grams of the first 62 runes
		}
		b = append(b, i)
	}
	b = append(b, len(tok)) // ">" starts here
	runes := len(b)         // "<", tok's runes, ">"
	for n := minN; n <= maxN; n++ {
		for start := 0; start+n <= runes; start++ {
			f := fnvByte(fnvOffset, byte('0'+n))
			for r := start; r < start+n; r++ {
				switch off := b[r]; {
				case off < 0:
					f = fnvByte(f, '<')
				case off == len(tok):
					f = fnvByte(f, '>')
				default:
					_, size := utf8.DecodeRuneInString(tok[off:])
					f = fnvString(f, tok[off:off+size])
				}
			}
			g = append(g, f)
		}
	}
	return g
}
