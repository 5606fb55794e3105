package rag

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// DocumentRanker ranks documents, each by its best chunk
// (vector.Service.RankDocuments).
type DocumentRanker interface {
	RankDocuments(ctx context.Context, c tenant.Caller, in query.RetrieveInput, k int) (query.RetrieveOutput, error)
}

// RankInput is what [Service.Rank] ranks for.
type RankInput struct {
	Pipeline string
	Query    string
	Stores   []string
	// Depth is how many documents to rank; TopK the top_k the pipeline's
	// tool would be called with (basic_rerank's pool and crag's confidence
	// follow from it). If zero, TopK defaults to [DefaultTopK].
	Depth, TopK int
	// Pool, if set, is basic_rerank's and pylate_colbert's candidate pool
	// (1..Depth): the hybrid search's top documents they reorder. If zero,
	// the tool's default, max(4*top_k, 20) capped at [MaxCandidatePool].
	Pool int
	// Source is pylate_colbert's candidate_source (default hybrid).
	Source string
}

// Rank returns the documents a pipeline retrieves for a query, best first,
// Depth deep, each scored by its best chunk: what the pipeline's tool ranks
// before grading and answering, at document level, for measuring retrieval
// quality (scripts/retrieval-eval --pipeline). Per pipeline:
//
//   - basic: hybrid search;
//   - basic_rerank: hybrid search, its candidate pool (max(4*top_k, 20),
//     at most 50) reranked as the tool reranks it, the rest after;
//   - crag: hybrid search; when the grade of its top_k and their coverage of
//     the query give less than the default confidence, the query expanded
//     with the top documents' key words (the offline generator's rewrite,
//     without a conversation) and searched again, kept when more confident;
//   - graphrag: hybrid search fused with the entity graph at the default
//     graph_traversal_depth;
//   - pylate_colbert: late interaction (MaxSim over token vectors) over the
//     hybrid search's candidate pool (source hybrid; the rest after, as for
//     basic_rerank) or over chunks found by centroid pruning (source
//     centroid), each document scored by its best chunk;
//   - iris_global_graphrag: the documents of the communities whose points
//     reached the answer, in order of use (global search ranks no passages:
//     this is what it cites).
func (s *Service) Rank(ctx context.Context, c tenant.Caller, ranker DocumentRanker, in RankInput) ([]query.Document, error) {
	topK := max(in.TopK, 0)
	if topK == 0 {
		topK = DefaultTopK
	}
	search := func(q string, depth *int) ([]query.Document, error) {
		out, err := ranker.RankDocuments(ctx, c, query.RetrieveInput{Question: q, Stores: in.Stores, GraphTraversalDepth: depth}, in.Depth)
		return out.Documents, err
	}
	pool := min(max(4*topK, 20), MaxCandidatePool)
	if in.Pool != 0 {
		if in.Pool < 1 || in.Pool > in.Depth {
			return nil, fmt.Errorf("rag: rank: candidate pool %d is outside 1..%d", in.Pool, in.Depth)
		}
		pool = in.Pool
	}
	switch in.Pipeline {
	case PipelineBasic:
		return search(in.Query, nil)
	case PipelineBasicRerank:
		docs, err := search(in.Query, nil)
		if err != nil {
			return nil, err
		}
		pool := min(pool, len(docs))
		reranked := rerank(in.Query, asPipeline(docs[:pool]))
		out := make([]query.Document, 0, len(docs))
		for _, d := range reranked {
			i := slices.IndexFunc(docs[:pool], func(x query.Document) bool { return x.DocID == d.DocID && x.Store == d.Store })
			docs[i].Score = d.Score
			out = append(out, docs[i])
		}
		return append(out, docs[pool:]...), nil
	case PipelineCRAG:
		docs, err := search(in.Query, nil)
		if err != nil {
			return nil, err
		}
		conf, err := s.rankConfidence(ctx, c, in.Query, docs[:min(topK, len(docs))])
		if err != nil || conf >= DefaultConfidenceThreshold {
			return docs, err
		}
		corrected := expand(in.Query, asPipeline(docs[:min(topK, len(docs))]))
		if corrected == in.Query {
			return docs, nil
		}
		again, err := search(corrected, nil)
		if err != nil {
			return nil, err
		}
		if c2, err := s.rankConfidence(ctx, c, in.Query, again[:min(topK, len(again))]); err != nil || c2 <= conf {
			return docs, err
		}
		return again, nil
	case PipelineGraphRAG:
		return search(in.Query, ptr(DefaultGraphTraversalDepth))
	case PipelineColbert:
		return s.rankLate(ctx, c, in, pool, search)
	case PipelineGlobalGraphRAG:
		if s.reports == nil {
			return nil, fmt.Errorf("rag: rank %s: no community reports configured", in.Pipeline)
		}
		stores, err := s.reports.CommunityReports(ctx, c, query.ReportsInput{Question: in.Query, Stores: in.Stores})
		if err != nil {
			return nil, err
		}
		reports, _ := unionReports(stores)
		res, err := graph.Global(ctx, in.Query, reports, graph.GlobalOptions{Level: -1, MaxCommunities: DefaultMaxCommunities})
		if err != nil {
			return nil, err
		}
		var out []query.Document
		for i, d := range res.Sources[:min(len(res.Sources), in.Depth)] {
			out = append(out, query.Document{DocID: d, Score: 1 / float64(i+1)})
		}
		return out, nil
	}
	return nil, fmt.Errorf("rag: rank: no pipeline %q: use one of %s", in.Pipeline, strings.Join(Pipelines, ", "))
}

// rankConfidence is crag's confidence in documents retrieved for query:
// graded by the generator, then their best coverage of it.
func (s *Service) rankConfidence(ctx context.Context, c tenant.Caller, query string, docs []query.Document) (float64, error) {
	pd := asPipeline(docs)
	g, err := NewSteps(s.table, s.gen).Grade(ctx, c, GradeInput{Question: query, Documents: pd})
	if err != nil {
		return 0, err
	}
	return confidence(query, pipeline.Output{Relevant: g.Relevant}, pd), nil
}

func asPipeline(docs []query.Document) []pipeline.Document {
	out := make([]pipeline.Document, len(docs))
	for i, d := range docs {
		out[i] = pipeline.Document{DocID: d.DocID, ChunkID: d.ChunkID, Content: d.Content, Score: d.Score, Metadata: d.Metadata, Store: d.Store}
	}
	return out
}

// rankLate is Rank for pylate_colbert.
func (s *Service) rankLate(ctx context.Context, c tenant.Caller, in RankInput, pool int, search func(string, *int) ([]query.Document, error)) ([]query.Document, error) {
	if s.late == nil {
		return nil, fmt.Errorf("rag: rank %s: no late interaction configured", in.Pipeline)
	}
	source := cmp.Or(in.Source, query.LateFromHybrid)
	if !slices.Contains(CandidateSources, source) {
		return nil, fmt.Errorf("rag: rank %s: candidate source %q: use %s", in.Pipeline, source, strings.Join(CandidateSources, " or "))
	}
	// Three chunks a document asked for from centroid pruning, so that Depth
	// documents remain when chunks of one document are merged.
	li := query.LateInput{Question: in.Query, Stores: in.Stores, K: min(3*in.Depth, query.MaxLateK)}
	var rest []query.Document
	if source == query.LateFromHybrid {
		docs, err := search(in.Query, nil)
		if err != nil {
			return nil, err
		}
		pool = min(pool, len(docs))
		if pool == 0 {
			return docs, nil
		}
		for _, d := range docs[:pool] {
			li.Candidates = append(li.Candidates, query.LateCandidate{Store: d.Store, ChunkID: d.ChunkID})
		}
		li.K, rest = pool, docs[pool:]
	}
	lo, err := s.late.LateInteraction(ctx, c, li)
	if err != nil {
		return nil, err
	}
	var out []query.Document
	seen := map[[2]string]bool{}
	for _, h := range lo.Hits {
		key := [2]string{h.Store, h.DocID}
		if seen[key] || len(out) == in.Depth {
			continue
		}
		seen[key] = true
		out = append(out, query.Document{DocID: h.DocID, ChunkID: h.ChunkID, Content: h.Content, Score: h.Score, Metadata: h.Metadata, Store: h.Store})
	}
	return append(out, rest[:min(len(rest), in.Depth-len(out))]...), nil
}
