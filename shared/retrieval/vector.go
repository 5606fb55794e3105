package retrieval

// DefaultRescore is the least number of candidates the int8 scan hands to
// float32 rescoring; with 384-dimension vectors it gives the float32 top-10
// exactly (recall@10 = 1.0 over 1,000 random queries on 100,000 random unit
// vectors; see scripts/bench-vector).
const DefaultRescore = 100

// scanBlock is how many vectors one kernel call scores: small enough for the
// scores to stay in L1.
const scanBlock = 256

type candidate struct {
	score    float32
	seg, idx int32
}

// candidates is a bounded min-heap of the best approximate scores.
type candidates struct {
	k int
	h []candidate
}

func (c *candidates) min() float32 { return c.h[0].score }

func (c *candidates) push(x candidate) {
	if len(c.h) < c.k {
		c.h = append(c.h, x)
		for i := len(c.h) - 1; i > 0; {
			p := (i - 1) / 2
			if c.h[p].score <= c.h[i].score {
				break
			}
			c.h[p], c.h[i] = c.h[i], c.h[p]
			i = p
		}
		return
	}
	c.h[0] = x
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(c.h) && c.h[l].score < c.h[m].score {
			m = l
		}
		if r := l + 1; r < len(c.h) && c.h[r].score < c.h[m].score {
			m = r
		}
		if m == i {
			return
		}
		c.h[i], c.h[m] = c.h[m], c.h[i]
		i = m
	}
}

// searchVector returns the depth chunks (documents, if q.PerDoc) with the
// highest dot product with q.Vector. An int8 scan of every vector (AVX2 or
// NEON) keeps the best candidates by approximate score; their float32 vectors
// then decide the ranking, so the result is the float32 ranking unless a true
// top hit's approximate score fell below that many others. Where no SIMD
// kernel exists (other architectures, the purego tag) the scan is float32.
// With q.Probe, a partitioned segment is scanned only in its probed
// clusters; when they hold fewer than depth chunks to rank (a selective
// filter, many excluded chunks), the scan covers every chunk instead.
func searchVector(segs []*Segment, q Query, depth int) []Hit {
	spans, partial := q.Probe.spans(segs, q.Vector)
	hits, scanned := scanVector(segs, q, depth, spans)
	if partial && scanned < depth {
		whole, _ := (*Probe)(nil).spans(segs, q.Vector)
		hits, _ = scanVector(segs, q, depth, whole)
	}
	return hits
}

// scanVector is [searchVector] over the given runs of each segment. It also
// returns how many chunks passed the filter and exclusion, up to the
// candidates it kept.
func scanVector(segs []*Segment, q Query, depth int, spans [][]span) ([]Hit, int) {
	dims := len(q.Vector)
	total := 0
	for _, runs := range spans {
		for _, r := range runs {
			total += r.hi - r.lo
		}
	}
	rescore := max(DefaultRescore, 4*depth)
	if q.Tuning != nil && q.Tuning.Rescore > 0 {
		rescore = max(q.Tuning.Rescore, depth)
	}
	qq := make([]int16, dims)
	quantize(qq, q.Vector, queryLimit(dims))
	out := make([]int32, scanBlock)
	approx := make([]float32, scanBlock)
	for {
		cands := candidates{k: rescore, h: make([]candidate, 0, rescore)}
		for si, s := range segs {
			for _, run := range spans[si] {
				for lo := run.lo; lo < run.hi; lo += scanBlock {
					m := min(scanBlock, run.hi-lo)
					a := approx[:m]
					if useAsm {
						dots(qq, s.qvecs[lo*dims:(lo+m)*dims], dims, out[:m])
						sc := s.scales[lo : lo+m]
						for j, d := range out[:m] {
							a[j] = float32(d) * sc[j]
						}
					} else {
						// Without a SIMD kernel an int8 dot product costs more
						// than a float32 one: score exactly.
						for j := range a {
							a[j] = dotFloat(q.Vector, s.vecs[(lo+j)*dims:(lo+j+1)*dims])
						}
					}
					for j, a := range a {
						if len(cands.h) == cands.k && a <= cands.min() {
							continue
						}
						if !s.allowed(lo+j, q) {
							continue
						}
						cands.push(candidate{a, int32(si), int32(lo + j)})
					}
				}
			}
		}
		top := newTopHits(depth, q.PerDoc)
		for _, c := range cands.h {
			s := segs[c.seg]
			i := int(c.idx)
			score := dotFloat(q.Vector, s.vecs[i*dims:(i+1)*dims])
			top.push(Hit{ChunkID: s.ids[i], DocID: s.docIDs[i], Score: float64(score), Segment: int(c.seg), Index: i})
		}
		hits := top.sorted()
		// Per document, the candidates may hold fewer than depth documents
		// when documents have many chunks: widen the scan until they do.
		if !q.PerDoc || len(hits) >= depth || len(cands.h) < rescore || rescore >= total {
			return hits, len(cands.h)
		}
		rescore *= 4
	}
}
