package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// ranker ranks documents for one query as a pipeline's retrieval does:
// document ids best first, their scores, and the late-interaction search's
// output when there was one.
type ranker func(ctx context.Context, svc *vector.Service, c tenant.Caller, in vector.RetrieveInput, o evalOptions) ([]string, []float64, *vector.LateOutput, error)

// rankers are the pipelines whose retrieval this command runs, by pipeline
// name. rag_crag's is rag_basic's until its confidence calls for a
// correction, which takes the generator: scripts/rag-eval runs it whole.
var rankers = map[string]ranker{
	rag.PipelineBasic:       hybrid,
	rag.PipelineBasicRerank: reranked,
	rag.PipelineColbert:     lateInteraction,
}

// rankerOf returns the ranking o names: the retriever's without a pipeline.
func rankerOf(o evalOptions) (ranker, error) {
	if o.pipeline == "" {
		return hybrid, nil
	}
	known := catalog.Default().RAGPipelines()
	if !slices.Contains(known, o.pipeline) {
		return nil, fmt.Errorf("--pipeline %q is not a pipeline: the catalog's are %s", o.pipeline, strings.Join(known, ", "))
	}
	r, ok := rankers[o.pipeline]
	if !ok {
		return nil, fmt.Errorf("--pipeline %s: this command does not run its retrieval; it runs %s", o.pipeline, strings.Join(slices.Sorted(maps.Keys(rankers)), ", "))
	}
	if o.pipeline == rag.PipelineColbert && !slices.Contains(rag.CandidateSources, o.source) {
		return nil, fmt.Errorf("--source %q: use %s", o.source, strings.Join(rag.CandidateSources, " or "))
	}
	return r, nil
}

func hybrid(ctx context.Context, svc *vector.Service, c tenant.Caller, in vector.RetrieveInput, _ evalOptions) ([]string, []float64, *vector.LateOutput, error) {
	out, err := svc.RankDocuments(ctx, c, in, depth)
	if err != nil {
		return nil, nil, nil, err
	}
	ids, scores := make([]string, len(out.Documents)), make([]float64, len(out.Documents))
	for i, d := range out.Documents {
		ids[i], scores[i] = d.DocID, d.Score
	}
	return ids, scores, nil, nil
}

// reranked is rag_basic_rerank's retrieval: the retriever's top pool
// documents (each by its best chunk), reranked.
func reranked(ctx context.Context, svc *vector.Service, c tenant.Caller, in vector.RetrieveInput, o evalOptions) ([]string, []float64, *vector.LateOutput, error) {
	out, err := svc.RankDocuments(ctx, c, in, o.pool)
	if err != nil {
		return nil, nil, nil, err
	}
	docs := make([]pipeline.Document, len(out.Documents))
	for i, d := range out.Documents {
		docs[i] = pipeline.Document{DocID: d.DocID, ChunkID: d.ChunkID, Content: d.Content, Score: d.Score}
	}
	var ids []string
	var scores []float64
	for _, d := range rag.Rerank(in.Question, docs)[:min(depth, len(docs))] {
		ids, scores = append(ids, d.DocID), append(scores, d.Score)
	}
	return ids, scores, nil, nil
}

// lateInteraction is rag_pylate_colbert's retrieval: MaxSim over the
// retriever's top pool documents' best chunks (source hybrid), or over
// chunks found by centroid pruning, three chunks a document asked for so
// that depth documents remain when chunks of one document are merged.
func lateInteraction(ctx context.Context, svc *vector.Service, c tenant.Caller, in vector.RetrieveInput, o evalOptions) ([]string, []float64, *vector.LateOutput, error) {
	li := vector.LateInput{Question: in.Question, Stores: in.Stores, K: 3 * depth}
	if o.source == vector.LateFromHybrid {
		out, err := svc.RankDocuments(ctx, c, in, o.pool)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, d := range out.Documents {
			li.Candidates = append(li.Candidates, vector.LateCandidate{Store: d.Store, ChunkID: d.ChunkID})
		}
		li.K = max(len(li.Candidates), 1)
	}
	lo, err := svc.LateInteraction(ctx, c, li)
	if err != nil {
		return nil, nil, nil, err
	}
	var ids []string
	var scores []float64
	for _, h := range lo.Hits {
		if !slices.Contains(ids, h.DocID) && len(ids) < depth {
			ids, scores = append(ids, h.DocID), append(scores, h.Score)
		}
	}
	return ids, scores, &lo, nil
}

// printTokenIndex prints the late-interaction index's size: in memory, as
// stored (token shards and codec) and as float32 vectors would take.
func printTokenIndex(ctx context.Context, blobs store.Blobs, c tenant.Caller, alias string, lo *vector.LateOutput) error {
	var shards, codecs int64
	for _, dir := range []string{"tokens/", "colbert/"} {
		opts := &store.ListOptions{}
		for {
			page, err := blobs.List(ctx, tenant.BlobPrefix(c.Tenant)+"vector/"+alias+"/"+dir, opts)
			if err != nil {
				return err
			}
			for _, b := range page.Blobs {
				if dir == "tokens/" {
					shards += b.Size
				} else {
					codecs += b.Size
				}
			}
			if page.Next == "" {
				break
			}
			opts.Cursor = page.Next
		}
	}
	f32 := lo.Tokens * int64(lo.Dims) * 4
	fmt.Printf("late interaction (%s/%s, %d dims): %d tokens; float32 %.1f MiB; stored %.1f MiB (token shards) + %.1f KiB (codec): %.2fx smaller; compression_ratio %.2f (per token); index in memory %.1f MiB\n",
		lo.Provider, lo.Model, lo.Dims, lo.Tokens, mib(f32), mib(shards), float64(codecs)/1024, float64(f32)/float64(shards+codecs), lo.CompressionRatio, mib(lo.IndexBytes))
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
