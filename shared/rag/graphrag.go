package rag

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// DefaultGraphTraversalDepth is rag_graphrag's graph_traversal_depth when
// the request names none.
const DefaultGraphTraversalDepth = 2

// The bounds of rag_iris_global_graphrag's max_communities.
const (
	DefaultMaxCommunities = 32
	MaxCommunities        = graph.MaxReportsPerLevel
)

// GraphRAG serves rag_graphrag: one pipeline run whose retrieval fuses the
// stores' entity graphs with hybrid search (vector.Service.Retrieve with
// graph_traversal_depth: entities the question names, expanded to the depth,
// chunks scored by Personalized PageRank, fused by reciprocal rank), then
// the answer from the top_k by rrf_score.
func (s *Service) GraphRAG(ctx context.Context, c tenant.Caller, in GraphRAGInput) (Response, error) {
	return s.serve(ctx, c, PipelineGraphRAG, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		depth := DefaultGraphTraversalDepth
		if in.GraphTraversalDepth != nil {
			depth = *in.GraphTraversalDepth
			if depth < 0 || depth > graph.MaxDepth {
				return Response{}, fault.Invalid("graph_traversal_depth", "%d is outside 0..%d", depth, graph.MaxDepth)
			}
		}
		if cl.p.Mode != "" && cl.p.Mode != "hybrid" {
			return Response{}, fault.Invalid("mode", "%q: graphrag fuses the graph with hybrid search; omit mode or give hybrid", cl.p.Mode)
		}
		cl.graphDepth = &depth
		out, err := s.retrieve(ctx, cl, cl.p.Query, cl.p.conversation, cl.p.topK)
		if err != nil {
			return Response{}, err
		}
		resp, err := s.respond(ctx, cl, out, byScore(out.Documents, cl.p.topK))
		if err != nil {
			return Response{}, err
		}
		md := &resp.Metadata
		md.EntitiesMatched, md.GraphTraversalDepth = nonNil(out.Graph.EntitiesMatched), &depth
		md.EntitiesReached, md.GraphOnlyDocuments = ptr(out.Graph.EntitiesReached), ptr(out.Graph.GraphOnly)
		md.ExtractionFallbacks = ptr(out.Graph.ExtractionFallbacks)
		md.RRFScores = []float64{}
		for _, d := range resp.RetrievedDocuments {
			md.RRFScores = append(md.RRFScores, d.Score)
		}
		return resp, nil
	})
}

// Reporter gives the community reports of the stores a global search covers
// (vector.Service.CommunityReports).
type Reporter interface {
	CommunityReports(ctx context.Context, c tenant.Caller, in query.ReportsInput) ([]query.StoreReports, error)
}

// GlobalGraphRAG serves rag_iris_global_graphrag: GraphRAG's global search
// over the community reports of the stores' entity graphs, run in this
// function rather than through the pipeline (it retrieves no chunks, so
// there is nothing for the retrieve and grade steps to do): the query is
// rephrased from the conversation as the pipeline's first step would, each
// report of one community level is mapped to rated points, and the best
// points are reduced to the answer (graph.Global; extractively with the
// offline generator, by prompts with a hosted one). The retrieved documents
// are the community reports used.
func (s *Service) GlobalGraphRAG(ctx context.Context, c tenant.Caller, in GlobalInput) (Response, error) {
	return s.serve(ctx, c, PipelineGlobalGraphRAG, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		if s.reports == nil {
			return Response{}, fault.Unavailable(nil, "pipeline %s is not configured: it needs the vector stores' community reports", PipelineGlobalGraphRAG)
		}
		o := graph.GlobalOptions{Level: -1, MaxCommunities: DefaultMaxCommunities}
		if in.CommunityLevel != nil {
			if *in.CommunityLevel < 0 {
				return Response{}, fault.Invalid("community_level", "%d is negative: 0 is the finest level", *in.CommunityLevel)
			}
			o.Level = *in.CommunityLevel
		}
		if in.MaxCommunities != nil {
			if *in.MaxCommunities < 1 || *in.MaxCommunities > MaxCommunities {
				return Response{}, fault.Invalid("max_communities", "%d is outside 1..%d", *in.MaxCommunities, MaxCommunities)
			}
			o.MaxCommunities = *in.MaxCommunities
		}
		if len(cl.p.Filter) > 0 {
			return Response{}, fault.Invalid("filter", "global search reads community reports, which a metadata filter does not apply to; omit it")
		}
		if cl.p.Mode != "" && cl.p.Mode != "hybrid" {
			return Response{}, fault.Invalid("mode", "global search reads community reports, which a retrieval mode does not apply to; omit it")
		}
		if _, offlineGen := cl.gen.(offline.Generator); !offlineGen {
			o.Generator = provider.WithPrompts(cl.gen, s.prompts, cl.caller.Tenant)
		}

		t0 := s.now()
		question, steps, degraded := s.rephrase(ctx, cl)
		stores, err := s.reports.CommunityReports(ctx, cl.caller, query.ReportsInput{Question: question, Stores: cl.p.Stores, EmbeddingModel: cl.p.EmbeddingModel})
		cl.retrieval += s.now().Sub(t0)
		if err != nil {
			if callerFault(err) || fault.KindOf(err) != fault.KindInternal {
				return Response{}, err
			}
			return Response{}, fault.Unavailable(err, "reading the community reports failed; retry")
		}
		reports, names := unionReports(stores)
		t0 = s.now()
		res, err := graph.Global(ctx, question, reports, o)
		cl.generation += s.now().Sub(t0)
		if err != nil {
			return Response{}, generatorFault(err, "mapping and reducing community reports")
		}

		resp := Response{Answer: strings.TrimSpace(res.Answer), RetrievedDocuments: []RetrievedDocument{}, Sources: []string{}}
		best := map[int]int{}
		for _, p := range res.Points {
			best[p.Community] = max(best[p.Community], p.Score)
		}
		name := func(id int) community { return names[[2]int{res.Level, id}] }
		for _, id := range res.Used {
			r := reportOf(reports, res.Level, id)
			md := map[string]string{}
			if cl.p.includeMetadata {
				md = map[string]string{"store": name(id).store, "community_level": fmt.Sprint(res.Level), "community": fmt.Sprint(name(id).community),
					"entities": strings.Join(r.Entities, ", "), "documents": strings.Join(r.Docs, ", "), "summary_by": r.By}
			}
			resp.RetrievedDocuments = append(resp.RetrievedDocuments, RetrievedDocument{
				DocID: name(id).String(), Content: r.Title + "\n\n" + r.Summary, Score: float64(best[id]) / 100, Metadata: md})
		}
		resp.RetrievedDocuments = resp.RetrievedDocuments[:min(len(resp.RetrievedDocuments), cl.p.topK)]
		if cl.p.includeSources {
			resp.Sources = nonNil(res.Sources)
		}
		relevant := "yes"
		if len(res.Used) == 0 {
			relevant = "no"
		}
		searched := []string{}
		behind := int64(0)
		for _, st := range stores {
			searched = append(searched, st.Store)
			behind = max(behind, st.Behind)
		}
		mapped, used := make([]string, len(res.Mapped)), make([]string, len(res.Used))
		for i, id := range res.Mapped {
			mapped[i] = name(id).String()
		}
		for i, id := range res.Used {
			used[i] = name(id).String()
		}
		resp.Metadata = Metadata{
			ContextInput: question, Rephrased: question != cl.p.Query, Relevant: relevant, Graded: true,
			Degraded: []string{}, SearchedStores: searched, Steps: steps,
			CommunityLevel: ptr(res.Level), CommunitiesMapped: mapped, CommunitiesUsed: used,
			ReportsBehind: ptr(behind), MapFailures: ptr(res.MapFailures),
		}
		if degraded {
			cl.degraded = true
			resp.Metadata.Degraded = append(resp.Metadata.Degraded, StepRephrase)
		}
		if o.Generator == nil {
			resp.Metadata.Provider, resp.Metadata.Model = offline.Name, offline.GeneratorModel
		}
		return resp, nil
	})
}

// rephrase makes the query standalone from its conversation, as the
// pipeline's first step does, falling back to the query on failure.
func (s *Service) rephrase(ctx context.Context, cl *call) (string, pipeline.Steps, bool) {
	if cl.p.conversation == "" {
		return cl.p.Query, pipeline.Steps{}, false
	}
	ctx, cancel := cl.beforeAnswer(ctx)
	defer cancel()
	out, err := NewSteps(s.table, s.gen).Rephrase(ctx, cl.caller, RephraseInput{Question: cl.p.Query, ThreadID: cl.p.conversation, LLMModel: cl.p.LLMModel})
	if err != nil {
		s.log.WarnContext(ctx, "rephrasing for global search failed; the query serves", "error", err)
		return cl.p.Query, pipeline.Steps{}, true
	}
	return out.Question, pipeline.Steps{Rephrase: pipeline.StepModel{Provider: out.Provider, Model: out.Model}}, false
}

// community names one community of one store's graph.
type community struct {
	store            string
	level, community int
}

func (c community) String() string {
	return fmt.Sprintf("community/%s/%d/%d", c.store, c.level, c.community)
}

// unionReports joins the reports of several stores into one list for
// graph.Global, numbering communities apart (store by store), and returns
// what each number stands for.
func unionReports(stores []query.StoreReports) ([]graph.Report, map[[2]int]community) {
	var out []graph.Report
	names := map[[2]int]community{}
	offset := 0
	for _, st := range stores {
		top := 0
		for _, r := range st.Reports {
			id := offset + r.Community
			names[[2]int{r.Level, id}] = community{st.Store, r.Level, r.Community}
			r.Community = id
			out = append(out, r)
			top = max(top, r.Community+1)
		}
		offset = max(offset, top)
	}
	return out, names
}

func reportOf(reports []graph.Report, level, id int) graph.Report {
	i := slices.IndexFunc(reports, func(r graph.Report) bool { return r.Level == level && r.Community == id })
	if i < 0 {
		return graph.Report{}
	}
	return reports[i]
}
