package rag

import (
	"cmp"
	"context"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// RerankerName names [rerank] in responses.
const RerankerName = "offline-lexical-rrf-v1"

// rrfK is the reciprocal rank fusion constant (Cormack et al. 2009).
const rrfK = 60

// rerank reorders candidates for query and returns them with their rerank
// score as Score. The offline reranker fuses three rankings by reciprocal
// rank fusion, score = sum of 1/(60 + rank):
//
//   - the retriever's own order (its hybrid, BM25 or vector ranking);
//   - coverage: the share of the query's distinct terms the passage contains;
//   - proximity: for passages holding at least two query terms, how tightly
//     they cluster, m/w for m distinct matched terms inside the shortest
//     window of w terms that holds them all (0 with fewer than two).
//
// Coverage and proximity are exact term evidence the retriever's scores blur
// (BM25 rewards one frequent term; vectors reward topic over wording). Ties
// share a rank, so an evidence signal with no spread leaves the retriever's
// order in charge. The retriever's order breaks remaining ties.
func rerank(query string, docs []pipeline.Document) []pipeline.Document {
	q := distinct(terms(query))
	n := len(docs)
	cover, prox := make([]float64, n), make([]float64, n)
	for i, d := range docs {
		cover[i], prox[i] = evidence(q, terms(d.Content))
	}
	retr := make([]float64, n)
	for i := range retr {
		retr[i] = float64(n - i) // the retriever's order, as a descending key
	}
	score := make([]float64, n)
	for _, key := range [][]float64{retr, cover, prox} {
		for i, r := range ranks(key) {
			score[i] += 1 / float64(rrfK+r)
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	out := make([]pipeline.Document, n)
	for i, j := range order {
		out[i] = docs[j]
		out[i].Score = score[j]
	}
	return out
}

// ranks returns the competition rank (1, 2, 2, 4) of each value of key in
// descending order.
func ranks(key []float64) []int {
	idx := make([]int, len(key))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(key[b], key[a]) })
	r := make([]int, len(key))
	for pos, i := range idx {
		if pos > 0 && key[i] == key[idx[pos-1]] {
			r[i] = r[idx[pos-1]]
		} else {
			r[i] = pos + 1
		}
	}
	return r
}

// evidence returns the share of the query terms q that doc holds, and how
// closely they cluster (see [rerank]).
func evidence(q []string, doc []string) (coverage, proximity float64) {
	if len(q) == 0 {
		return 0, 0
	}
	want := map[string]int{}
	for i, t := range q {
		want[t] = i
	}
	seen := map[int]bool{}
	for _, t := range doc {
		if i, ok := want[t]; ok {
			seen[i] = true
		}
	}
	m := len(seen)
	coverage = float64(m) / float64(len(q))
	if m < 2 {
		return coverage, 0
	}
	// Shortest window of doc holding every matched query term.
	counts := map[int]int{}
	have, best, lo := 0, len(doc)+1, 0
	for hi, t := range doc {
		i, ok := want[t]
		if !ok {
			continue
		}
		if counts[i] == 0 {
			have++
		}
		counts[i]++
		for have == m {
			if w := hi - lo + 1; w < best {
				best = w
			}
			if j, ok := want[doc[lo]]; ok {
				counts[j]--
				if counts[j] == 0 {
					have--
				}
			}
			lo++
		}
	}
	return coverage, float64(m) / float64(best)
}

func distinct(ts []string) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// BasicRerank serves rag_basic_rerank: one pipeline run for a candidate pool
// larger than top_k, reranked (see [rerank]) and cut to top_k, then the answer.
func (s *Service) BasicRerank(ctx context.Context, c tenant.Caller, in RerankInput) (Response, error) {
	return s.serve(ctx, c, PipelineBasicRerank, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		pool := min(max(4*cl.p.topK, 20), MaxCandidatePool)
		if in.CandidatePool != nil {
			pool = *in.CandidatePool
			if pool < cl.p.topK || pool > MaxCandidatePool {
				return Response{}, fault.Invalid("candidate_pool", "%d is outside top_k..%d (%d..%d)", pool, MaxCandidatePool, cl.p.topK, MaxCandidatePool)
			}
		}
		out, err := s.retrieve(ctx, cl, cl.p.Query, cl.p.conversation, pool)
		if err != nil {
			return Response{}, err
		}
		ranked := rerank(out.ContextInput, out.Documents)
		resp, err := s.respond(ctx, cl, out, ranked[:min(cl.p.topK, len(ranked))])
		resp.Metadata.Reranker, resp.Metadata.Candidates = RerankerName, ptr(len(out.Documents))
		return resp, err
	})
}

func ptr[T any](v T) *T { return &v }
