package retrieval

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/text"
)

// Mode says how [Search] ranks chunks.
type Mode string

// The values of [Mode].
const (
	// ModeBM25 ranks by Okapi BM25 over [text.Terms].
	ModeBM25 Mode = "bm25"
	// ModeVector ranks by the dot product of unit vectors (cosine similarity),
	// exactly: an int8 scan picks candidates, float32 rescoring ranks them.
	ModeVector Mode = "vector"
	// ModeHybrid fuses the BM25 and vector rankings by reciprocal rank fusion.
	// It is the default.
	ModeHybrid Mode = "hybrid"
)

// Defaults of [Tuning], chosen on SciFact's train split only (the test split
// is for reporting), with default ingestion (text.DefaultPassageOptions
// passages, a document scoring as its best passage). K1 1.1 with B 0.4
// (Anserini's BEIR default is 0.9/0.4) scored BM25 nDCG@10 0.6971 against
// 0.6946. The hybrid defaults suit the default, offline hashing embedder,
// whose vectors are a weak lexical signal: standard RRF (constant 60, equal
// weights) scored 0.53. Hybrid therefore searches the vector side with a
// pseudo-relevance-feedback query (Rocchio): 0.4 × the query vector plus 0.6
// × the mean vector of the top [DefaultFeedback] BM25 hits, renormalised,
// which lifted vector-only nDCG@10 from 0.48 to 0.64; that list fused with
// BM25 by RRF with constant 10 and vector weight 0.4 scored 0.7020 (0.6945
// without feedback, constant 5, weight 0.1). With a hosted embedder (Bedrock
// Titan, OpenAI) use [StandardRRF] instead.
//
// Those figures predate two analyzer changes, also chosen on train: index and
// query terms add the letter and digit runs of mixed words ("IL6" gives
// "il6", "il", "6", matching "IL-6"), and queries drop Snowball's English stop
// words ([text.QueryTerms]). Through the real ingestion path (Greek letters
// folded to names) they moved hybrid nDCG@10 on train from 0.7027 to 0.7136
// and BM25 from 0.6984 to 0.7116; on test, hybrid from 0.6954 to 0.7035 and
// BM25 from 0.6922 to 0.6997.
// Also tried on train and not adopted: a term-proximity bonus (ordered and
// unordered windows of 4-16 words over the top 100 chunks) gained at most
// +0.0002 hybrid nDCG@10; Porter2 instead of Porter and a title boost, none.
const (
	DefaultK1           = 1.1
	DefaultB            = 0.4
	DefaultRRFConstant  = 10
	DefaultVectorWeight = 0.4
	DefaultDepth        = 100
	DefaultK            = 10
	// DefaultFeedback is how many top BM25 hits expand the hybrid vector query.
	DefaultFeedback = 3
	// DefaultQueryWeight is the query vector's share of the expanded one.
	DefaultQueryWeight = 0.4
)

// StandardRRF is reciprocal rank fusion as Cormack et al. (2009) define it,
// constant 60 and equal weights, without pseudo-relevance feedback: the
// hybrid setting for embedders whose vector ranking is about as good as BM25's.
var StandardRRF = Tuning{RRFConstant: 60, VectorWeight: 1, BM25Weight: 1, Feedback: -1}

// TuningFor returns the hybrid tuning for vectors from the named embedder
// provider: nil (the defaults, tuned for the hashing embedder) for "offline",
// [StandardRRF] for any other (hosted models).
func TuningFor(provider string) *Tuning {
	if provider == "offline" {
		return nil
	}
	t := StandardRRF
	return &t
}

// Filter restricts a search to chunks whose metadata holds, for every key, one
// of the accepted values. A nil or empty Filter accepts every chunk.
type Filter map[string][]string

// Tuning holds the ranking parameters; the zero value of each field means its
// default.
type Tuning struct {
	K1, B float64 // BM25; if zero, [DefaultK1] and [DefaultB]
	// RRFConstant is the c of 1/(c+rank) in fusion; if zero, [DefaultRRFConstant].
	RRFConstant float64
	// Depth is how many hits per modality hybrid search fuses; if zero,
	// max(K, [DefaultDepth]).
	Depth int
	// VectorWeight and BM25Weight scale each modality's reciprocal ranks in
	// hybrid fusion; if zero, [DefaultVectorWeight] and 1.
	VectorWeight, BM25Weight float64
	// Rescore is how many int8-scan candidates vector search rescores with
	// float32; if zero, max([DefaultRescore], 4×depth).
	Rescore int
	// Feedback is how many of the top BM25 hits (documents, with PerDoc)
	// expand the vector query in hybrid mode (pseudo-relevance feedback):
	// the vector side searches with QueryWeight × the query vector plus
	// (1-QueryWeight) × the mean of those hits' vectors, renormalised. If
	// zero, [DefaultFeedback]; negative turns feedback off. It costs no extra
	// scan: the vector scan runs once, with the expanded query.
	Feedback int
	// QueryWeight is the query vector's weight in the expanded query; if
	// zero, [DefaultQueryWeight].
	QueryWeight float64
}

// Query is a search request.
type Query struct {
	// Text is analysed with [text.Terms] for BM25 (modes bm25 and hybrid).
	Text string
	// Vector is the query embedding (modes vector and hybrid), of the segments'
	// dimensions, from the embedder the segments were built with.
	Vector []float32
	// Mode selects the ranking; if empty, [ModeHybrid].
	Mode Mode
	// K is how many hits to return; if zero, [DefaultK].
	K int
	// Filter, if set, keeps only chunks whose metadata matches.
	Filter Filter
	// Exclude, if set, drops the chunks for which it returns true (deleted
	// documents, for example). It is called only for chunks that would
	// otherwise rank, from one goroutine at a time.
	Exclude func(chunkID, docID string) bool
	// PerDoc returns at most one hit per document, its best chunk (a
	// document's score is its best chunk's). In hybrid mode each modality's
	// ranking is collapsed to documents before fusion.
	PerDoc bool
	// Tuning overrides ranking parameters; nil means the defaults.
	Tuning *Tuning
	// Probe, if set, limits the vector scan of partitioned segments to the
	// clusters nearest the vector searched with (the query's, or in hybrid
	// mode the one feedback expanded); nil scans every vector.
	Probe *Probe
}

// Hit is one ranked chunk.
type Hit struct {
	ChunkID, DocID string
	// Score: BM25 score, dot product, or fused score, by mode; higher is better.
	Score float64
	// Segment indexes the slice of segments searched; Index is the chunk's
	// index in that segment ([Segment.Chunk]).
	Segment, Index int
}

// Errors [Search] returns.
var (
	ErrNoVector = errors.New("query has no vector")
	ErrMode     = errors.New("unknown mode")
)

// better orders hits: higher score first, then by chunk id, then doc id, so
// every ranking is deterministic and the same on one process or many.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.ChunkID != b.ChunkID {
		return a.ChunkID < b.ChunkID
	}
	return a.DocID < b.DocID
}

func sortHits(h []Hit) { sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) }) }

func (q Query) tuning() Tuning {
	var t Tuning
	if q.Tuning != nil {
		t = *q.Tuning
	}
	if t.K1 == 0 {
		t.K1 = DefaultK1
	}
	if t.B == 0 {
		t.B = DefaultB
	}
	if t.RRFConstant == 0 {
		t.RRFConstant = DefaultRRFConstant
	}
	if t.VectorWeight == 0 {
		t.VectorWeight = DefaultVectorWeight
	}
	if t.BM25Weight == 0 {
		t.BM25Weight = 1
	}
	if t.Feedback == 0 {
		t.Feedback = DefaultFeedback
	}
	if t.QueryWeight == 0 {
		t.QueryWeight = DefaultQueryWeight
	}
	return t
}

func (q Query) k() int {
	if q.K <= 0 {
		return DefaultK
	}
	return q.K
}

func (q Query) mode() Mode {
	if q.Mode == "" {
		return ModeHybrid
	}
	return q.Mode
}

// Depth returns how many hits per modality [SearchLists] returns for q: K for
// bm25 and vector mode, the tuning's depth (at least K) for hybrid.
func (q Query) Depth() int {
	k := q.k()
	if q.mode() != ModeHybrid {
		return k
	}
	d := DefaultDepth
	if q.Tuning != nil && q.Tuning.Depth > 0 {
		d = q.Tuning.Depth
	}
	return max(d, k)
}

// Search ranks the chunks of segs for q. BM25 uses the statistics of all of
// segs together, so the result is the same however chunks are split into
// segments. Hits are sorted best first, ties broken by chunk id.
func Search(segs []*Segment, q Query) ([]Hit, error) {
	l, err := SearchLists(segs, q, nil)
	if err != nil {
		return nil, err
	}
	return Combine(q, l), nil
}

// Lists are the per-modality rankings of one part of a search, each sorted
// best first and at most [Query.Depth] long: what a shard returns when a
// search fans out over several processes.
type Lists struct {
	BM25, Vector []Hit
}

// SearchLists computes the per-modality rankings q's mode needs over segs.
// stats, if not nil, are the BM25 statistics of the whole collection (every
// shard's [Segment.TermStats] added up); nil uses the statistics of segs.
// [Combine] turns the Lists of every shard into the final ranking.
func SearchLists(segs []*Segment, q Query, stats *Stats) (Lists, error) {
	var l Lists
	mode := q.mode()
	switch mode {
	case ModeBM25, ModeVector, ModeHybrid:
	default:
		return l, fmt.Errorf("retrieval: search: %w %q", ErrMode, mode)
	}
	depth := q.Depth()
	if mode != ModeBM25 {
		if len(q.Vector) == 0 {
			return l, fmt.Errorf("retrieval: search: %s mode: %w", mode, ErrNoVector)
		}
		for _, s := range segs {
			if s.Len() > 0 && s.dims != len(q.Vector) {
				return l, fmt.Errorf("retrieval: search: %w: query has %d, segment %d", ErrDims, len(q.Vector), s.dims)
			}
		}
	}
	if mode != ModeVector {
		terms := text.QueryTerms(q.Text)
		if stats == nil {
			var st Stats
			for _, s := range segs {
				st.Add(s.TermStats(terms))
			}
			stats = &st
		}
		l.BM25 = searchBM25(segs, q, terms, *stats, depth)
	}
	if mode != ModeBM25 {
		vq := q
		if mode == ModeHybrid {
			vq.Vector = feedbackVector(segs, q, l.BM25)
		}
		l.Vector = searchVector(segs, vq, depth)
	}
	return l, nil
}

// feedbackVector returns q's vector expanded by pseudo-relevance feedback
// from the top hits of bm25 (see [Tuning.Feedback]), or q.Vector itself when
// feedback is off or there are no hits or no vectors to use.
func feedbackVector(segs []*Segment, q Query, bm25 []Hit) []float32 {
	n := min(q.tuning().Feedback, len(bm25))
	if n <= 0 {
		return q.Vector
	}
	dims := len(q.Vector)
	vecs := make([][]float32, n)
	for i, h := range bm25[:n] {
		s := segs[h.Segment]
		if s.dims != dims {
			return q.Vector
		}
		vecs[i] = s.vecs[h.Index*dims : (h.Index+1)*dims]
	}
	return ExpandVector(q, vecs)
}

// ExpandVector returns the hybrid vector query of q given the vectors of its
// top BM25 hits (at most [Tuning.Feedback] of them, best first; the caller
// picks how many): QueryWeight × q.Vector plus (1-QueryWeight) × their mean,
// renormalised; q.Vector itself when feedback is off or vectors is empty.
// A fan-out coordinator that wants exactly the single-process hybrid ranking
// merges the shards' BM25 lists, fetches the top hits' vectors, and sends
// the expanded vector to the shards in vector mode.
func ExpandVector(q Query, vectors [][]float32) []float32 {
	t := q.tuning()
	if t.Feedback <= 0 || len(vectors) == 0 {
		return q.Vector
	}
	if len(vectors) > t.Feedback {
		vectors = vectors[:t.Feedback]
	}
	dims := len(q.Vector)
	x := make([]float64, dims)
	for i, f := range q.Vector {
		x[i] = t.QueryWeight * float64(f)
	}
	w := (1 - t.QueryWeight) / float64(len(vectors))
	for _, v := range vectors {
		if len(v) != dims {
			return q.Vector
		}
		for i, f := range v {
			x[i] += w * float64(f)
		}
	}
	var ss float64
	for _, f := range x {
		ss += f * f
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		return q.Vector
	}
	norm := math.Sqrt(ss)
	out := make([]float32, dims)
	for i, f := range x {
		out[i] = float32(f / norm)
	}
	return out
}

// Combine finishes a search from the [Lists] of one or more shards: it merges
// each modality ([MergeHits]) and, in hybrid mode, fuses them ([FuseWeighted]),
// returning at most q.K hits.
func Combine(q Query, parts ...Lists) []Hit {
	var bm, vec [][]Hit
	for _, p := range parts {
		bm = append(bm, p.BM25)
		vec = append(vec, p.Vector)
	}
	k := q.k()
	switch q.mode() {
	case ModeBM25:
		return collapse(MergeHits(k*len(parts), bm...), q.PerDoc, k)
	case ModeVector:
		return collapse(MergeHits(k*len(parts), vec...), q.PerDoc, k)
	}
	d := q.Depth()
	t := q.tuning()
	b := collapse(MergeHits(d*len(parts), bm...), q.PerDoc, d)
	v := collapse(MergeHits(d*len(parts), vec...), q.PerDoc, d)
	return fuse(k, t.RRFConstant, []float64{t.BM25Weight, t.VectorWeight}, q.PerDoc, b, v)
}

// collapse keeps the first (best) hit of each document when perDoc is set,
// then the first k hits.
func collapse(h []Hit, perDoc bool, k int) []Hit {
	if perDoc {
		h = ByDoc(h)
	}
	if len(h) > k {
		h = h[:k]
	}
	return h
}

// ByDoc keeps the first hit of each document in sorted hits: with hits best
// first, each document's best chunk, so a document scores as its best chunk.
func ByDoc(hits []Hit) []Hit {
	seen := make(map[string]bool, len(hits))
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		if !seen[h.DocID] {
			seen[h.DocID] = true
			out = append(out, h)
		}
	}
	return out
}

// MergeHits merges rankings of disjoint or overlapping parts (shards) into one,
// best first, keeping the best-scored entry of a chunk id listed twice, and
// returns at most k hits. The lists' scores must be comparable: from the same
// modality, and for BM25 computed with the same [Stats].
func MergeHits(k int, lists ...[]Hit) []Hit {
	var all []Hit
	for _, l := range lists {
		all = append(all, l...)
	}
	sortHits(all)
	seen := make(map[string]bool, len(all))
	out := all[:0]
	for _, h := range all {
		if seen[h.ChunkID] {
			continue
		}
		seen[h.ChunkID] = true
		out = append(out, h)
		if len(out) == k {
			break
		}
	}
	return out
}

// Fuse combines rankings by standard reciprocal rank fusion, constant 60
// and equal weights: see [FuseWeighted]. [Search]'s hybrid mode uses the
// weights of its [Tuning].
func Fuse(k int, lists ...[]Hit) []Hit {
	return FuseWeighted(k, StandardRRF.RRFConstant, nil, lists...)
}

// FuseWeighted combines rankings (each best first) by weighted reciprocal
// rank fusion: a chunk scores the sum over lists of weights[i]/(c+rank), rank
// counting from 1; a chunk absent from a list gets nothing from it. weights
// may be nil (all 1). It returns at most k hits, best first; Segment and Index
// come from the first list that holds the chunk.
func FuseWeighted(k int, c float64, weights []float64, lists ...[]Hit) []Hit {
	return fuse(k, c, weights, false, lists...)
}

// fuse is [FuseWeighted], identifying hits by document instead of chunk when
// byDoc is set: a document's best chunk by BM25 and by vector may differ, and
// it must still be fused as one.
func fuse(k int, c float64, weights []float64, byDoc bool, lists ...[]Hit) []Hit {
	byID := map[string]int{}
	var out []Hit
	for li, l := range lists {
		w := 1.0
		if li < len(weights) {
			w = weights[li]
		}
		for r, h := range l {
			s := w / (c + float64(r+1))
			id := h.ChunkID
			if byDoc {
				id = h.DocID
			}
			if i, ok := byID[id]; ok {
				out[i].Score += s
				continue
			}
			byID[id] = len(out)
			h.Score = s
			out = append(out, h)
		}
	}
	sortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Stats are the BM25 collection statistics: chunk count, total length in
// terms, and the number of chunks holding each term. Stats of disjoint
// segments add up to the statistics of their union.
type Stats struct {
	Chunks, Tokens int64
	DF             map[string]int64
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Chunks += o.Chunks
	s.Tokens += o.Tokens
	if len(o.DF) > 0 && s.DF == nil {
		s.DF = make(map[string]int64, len(o.DF))
	}
	for t, n := range o.DF {
		s.DF[t] += n
	}
}

// TermStats returns s's statistics for terms (as [text.Terms] gives them; a
// query's terms in a fan-out).
func (s *Segment) TermStats(terms []string) Stats {
	st := Stats{Chunks: int64(len(s.ids)), Tokens: s.totalLen, DF: make(map[string]int64, len(terms))}
	for _, t := range terms {
		if _, ok := st.DF[t]; ok {
			continue
		}
		n := int64(0)
		if i := s.termIndex(t); i >= 0 {
			n = int64(s.postStart[i+1] - s.postStart[i])
		}
		st.DF[t] = n
	}
	return st
}

// searchBM25 scores every chunk holding a query term and returns the best
// depth (documents, if q.PerDoc).
func searchBM25(segs []*Segment, q Query, terms []string, st Stats, depth int) []Hit {
	if st.Chunks == 0 || len(terms) == 0 {
		return nil
	}
	t := q.tuning()
	// Query terms in sorted order with their counts: summing in a fixed order
	// keeps scores bit-identical across runs and across shards.
	qtf := map[string]float64{}
	for _, term := range terms {
		qtf[term]++
	}
	uniq := make([]string, 0, len(qtf))
	for term := range qtf {
		uniq = append(uniq, term)
	}
	sort.Strings(uniq)
	avgdl := float64(st.Tokens) / float64(st.Chunks)
	if avgdl == 0 {
		avgdl = 1
	}
	top := newTopHits(depth, q.PerDoc)
	for si, s := range segs {
		if s.Len() == 0 {
			continue
		}
		acc := make([]float64, s.Len())
		var touched []int32
		for _, term := range uniq {
			w := qtf[term]
			ti := s.termIndex(term)
			if ti < 0 {
				continue
			}
			df := float64(st.DF[term])
			if df == 0 {
				df = float64(s.postStart[ti+1] - s.postStart[ti])
			}
			n := float64(st.Chunks)
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for p := s.postStart[ti]; p < s.postStart[ti+1]; p++ {
				c := s.postChunk[p]
				tf := float64(s.postTF[p])
				norm := t.K1 * (1 - t.B + t.B*float64(luceneLength(s.chunkLen[c]))/avgdl)
				if acc[c] == 0 {
					touched = append(touched, int32(c))
				}
				acc[c] += w * idf * tf / (tf + norm)
			}
		}
		for _, c := range touched {
			h := Hit{ChunkID: s.ids[c], DocID: s.docIDs[c], Score: acc[c], Segment: si, Index: int(c)}
			if !top.wants(h) || !s.allowed(int(c), q) {
				continue
			}
			top.push(h)
		}
	}
	return top.sorted()
}

// allowed reports whether chunk i passes q's filter and exclusion.
func (s *Segment) allowed(i int, q Query) bool {
	if len(q.Filter) > 0 && !s.matches(i, q.Filter) {
		return false
	}
	return q.Exclude == nil || !q.Exclude(s.ids[i], s.docIDs[i])
}

// topHits keeps the best k hits pushed (at most one per document if perDoc).
type topHits struct {
	k      int
	perDoc bool
	h      []Hit // min-heap: h[0] is the worst kept
	byDoc  map[string]int
}

func newTopHits(k int, perDoc bool) *topHits {
	t := &topHits{k: k, perDoc: perDoc}
	if perDoc {
		t.byDoc = map[string]int{}
	}
	return t
}

// wants reports whether h could enter: cheap, to skip filter checks.
func (t *topHits) wants(h Hit) bool {
	return len(t.h) < t.k || better(h, t.h[0])
}

func (t *topHits) push(h Hit) {
	if t.perDoc {
		if i, ok := t.byDoc[h.DocID]; ok {
			if better(h, t.h[i]) {
				t.h[i] = h
				t.fix(i)
			}
			return
		}
	}
	if len(t.h) < t.k {
		t.h = append(t.h, h)
		t.setPos(len(t.h) - 1)
		t.up(len(t.h) - 1)
		return
	}
	if !better(h, t.h[0]) {
		return
	}
	if t.perDoc {
		delete(t.byDoc, t.h[0].DocID)
	}
	t.h[0] = h
	t.setPos(0)
	t.down(0)
}

func (t *topHits) setPos(i int) {
	if t.perDoc {
		t.byDoc[t.h[i].DocID] = i
	}
}

func (t *topHits) swap(i, j int) {
	t.h[i], t.h[j] = t.h[j], t.h[i]
	t.setPos(i)
	t.setPos(j)
}

func (t *topHits) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(t.h[p], t.h[i]) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *topHits) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(t.h) && better(t.h[m], t.h[l]) {
			m = l
		}
		if r := l + 1; r < len(t.h) && better(t.h[m], t.h[r]) {
			m = r
		}
		if m == i {
			return
		}
		t.swap(i, m)
		i = m
	}
}

func (t *topHits) fix(i int) {
	t.down(i)
	t.up(i)
}

func (t *topHits) sorted() []Hit {
	out := append([]Hit(nil), t.h...)
	sortHits(out)
	return out
}

// QueryTerms returns the BM25 terms of a query text: what a fan-out
// coordinator asks every shard's [Segment.TermStats] for.
func QueryTerms(s string) []string { return text.QueryTerms(s) }

// luceneLength rounds a chunk length the way Lucene stores it (one byte,
// SmallFloat.intToByte4 then byte4ToInt: exact below 24, then four
// significant bits), so BM25 scores match Anserini's published runs, which
// the targets come from.
func luceneLength(n uint32) uint32 {
	const free = 24 // 255 - longToInt4(MaxInt32)
	if n < free {
		return n
	}
	i := uint64(n - free)
	nb := 64 - bits.LeadingZeros64(i)
	if nb < 4 {
		return n
	}
	shift := nb - 4
	return free + uint32((i>>shift)<<shift)
}
