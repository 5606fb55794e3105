package rag

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// PipelineColbert is rag_pylate_colbert's pipeline_name.
const PipelineColbert = "pylate_colbert"

// CandidateSources lists rag_pylate_colbert's candidate sources, the default first.
var CandidateSources = []string{query.LateFromHybrid, query.LateFromCentroids}

// LateInteraction searches stores by late interaction (vector.Service's).
type LateInteraction interface {
	LateInteraction(ctx context.Context, c tenant.Caller, in query.LateInput) (query.LateOutput, error)
}

// PylateColbert serves rag_pylate_colbert: the pipeline runs once
// (rephrase, store selection and retrieval, grade), then late interaction
// ranks passages of the stores it searched by MaxSim over their token
// vectors, and the answer is written from the best top_k. Candidates are
// the retrieval's top candidate_pool (source hybrid, the default: reranked,
// so the pipeline's grade of that pool stands, as in rag_basic_rerank) or
// found by centroid pruning over the stores' token vectors (source centroid:
// those passages are graded here, with the pipeline's grade step).
func (s *Service) PylateColbert(ctx context.Context, c tenant.Caller, in ColbertInput) (Response, error) {
	return s.serve(ctx, c, PipelineColbert, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		source := in.CandidateSource
		if source == "" {
			source = query.LateFromHybrid
		}
		if !slices.Contains(CandidateSources, source) {
			return Response{}, fault.Invalid("candidate_source", "%q is not a candidate source: use %s", source, strings.Join(CandidateSources, " or "))
		}
		pool := min(max(4*cl.p.topK, 20), MaxCandidatePool)
		if in.CandidatePool != nil {
			pool = *in.CandidatePool
			if pool < cl.p.topK || pool > MaxCandidatePool {
				return Response{}, fault.Invalid("candidate_pool", "%d is outside top_k..%d (%d..%d)", pool, MaxCandidatePool, cl.p.topK, MaxCandidatePool)
			}
		}
		var threshold float64
		if in.InteractionThreshold != nil {
			threshold = *in.InteractionThreshold
			if !(threshold >= 0 && threshold <= 1) {
				return Response{}, fault.Invalid("interaction_threshold", "%v is outside 0..1", threshold)
			}
		}
		if s.late == nil {
			return Response{}, fault.Unavailable(nil, "pipeline %s is not configured: it needs a multi-vector embedder", cl.pipeline)
		}
		k := pool
		if source == query.LateFromCentroids {
			k = cl.p.topK // the run serves for the query, the stores and nothing else
		}
		out, err := s.retrieve(ctx, cl, cl.p.Query, cl.p.conversation, k)
		if err != nil {
			return Response{}, err
		}
		li := query.LateInput{Question: out.ContextInput, Stores: out.SearchedStores, K: cl.p.topK, Filter: cl.p.Filter, Threshold: threshold}
		if source == query.LateFromHybrid {
			li.K = len(out.Documents)
			for _, d := range out.Documents {
				li.Candidates = append(li.Candidates, query.LateCandidate{Store: d.Store, ChunkID: d.ChunkID})
			}
		}
		var lo query.LateOutput
		if len(li.Stores) > 0 && li.K > 0 {
			lctx, cancel := cl.beforeAnswer(ctx)
			t0 := s.now()
			lo, err = s.late.LateInteraction(lctx, cl.caller, li)
			cl.retrieval += s.now().Sub(t0)
			cancel()
			if err != nil {
				return Response{}, err
			}
		}
		docs := make([]pipeline.Document, len(lo.Hits))
		for i, h := range lo.Hits {
			docs[i] = pipeline.Document{DocID: h.DocID, ChunkID: h.ChunkID, Content: h.Content, Score: h.Score, Metadata: h.Metadata, Store: h.Store}
		}
		docs = docs[:min(len(docs), cl.p.topK)]
		if source == query.LateFromCentroids {
			// Other passages than the pipeline graded: grade these (as crag
			// grades a corrected run); a failed grade keeps them, as the
			// pipeline's grade fallback does.
			out.Documents = docs
			out.Degraded = slices.DeleteFunc(out.Degraded, func(step string) bool { return step == StepGrade })
			if err := s.regrade(ctx, cl, out.ContextInput, &out); err != nil {
				out.Relevant, out.Graded, out.Steps.Grade = "yes", false, pipeline.StepModel{}
				out.Degraded = append(out.Degraded, StepGrade)
			}
			cl.degraded = len(out.Degraded) > 0
		}
		resp, err := s.respond(ctx, cl, out, docs)
		m := &resp.Metadata
		m.CandidateSource, m.Candidates = source, ptr(lo.Candidates)
		m.CompressionRatio, m.TokenInteractions = ptr(lo.CompressionRatio), ptr(lo.TokenInteractions)
		m.TokenEmbedder = &pipeline.StepModel{Provider: lo.Provider, Model: lo.Model}
		return resp, err
	})
}
