package toolschema

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// ragRequest tightens the parameters every pipeline tool shares.
func ragRequest(p map[string]*jsonschema.Schema) {
	p["query"].MinLength, p["query"].MaxLength = ptr(1), ptr(rag.MaxQueryChars)
	p["top_k"].Minimum, p["top_k"].Maximum, p["top_k"].Default = ptr(1.0), ptr(float64(rag.MaxTopK)), json.RawMessage(fmt.Sprint(rag.DefaultTopK))
	p["include_sources"].Default, p["include_metadata"].Default = json.RawMessage("true"), json.RawMessage("true")
	p["request_id"].Pattern = rag.UUIDv4Pattern
	for _, f := range []string{"thread_id", "conversation_id"} {
		p[f].Pattern, p[f].MaxLength = memory.IDPattern, ptr(128)
	}
	// The retriever's own rules (vectorSchemas), so that it never refuses what passed here.
	p["stores"].MaxItems = ptr(vector.MaxSearchStores)
	storeAlias(p["stores"].Items)
	p["mode"].Enum, p["mode"].Default = enum(rag.Modes...), json.RawMessage(`"hybrid"`)
	p["filter"].MaxProperties = ptr(vector.MaxFilterKeys)
	p["filter"].AdditionalProperties.MinItems, p["filter"].AdditionalProperties.MaxItems = ptr(1), ptr(vector.MaxFilterValues)
}

// ragResponse is the output schema of a pipeline tool, its pipeline_name fixed.
func ragResponse(pipeline string) func() *jsonschema.Schema {
	return schemaOf[rag.Response](func(s *jsonschema.Schema) {
		m := s.Properties["metadata"].Properties
		m["pipeline_name"].Enum = []any{pipeline}
		m["relevant"].Enum = []any{"yes", "no"}
		m["degraded"].Items.Enum = []any{rag.StepRephrase, rag.StepRetrieve, rag.StepGrade}
		m["correction_strategy"].Enum = enum(rag.Strategies...)
		for _, f := range []string{"execution_time_ms", "tokens_used", "discarded_documents"} {
			m[f].Minimum = ptr(0.0)
		}
		for _, f := range []string{"execution_time_ms", "retrieval_time_ms", "generation_time_ms", "tokens_used"} {
			s.Properties["performance_metrics"].Properties[f].Minimum = ptr(0.0)
		}
	})
}

// ragSchemas returns the schemas of the RAG pipeline tools and of the
// pipeline's internal steps.
func ragSchemas() map[string]pair {
	question := func(p map[string]*jsonschema.Schema) {
		p["question"].MinLength, p["question"].MaxLength = ptr(1), ptr(rag.MaxQueryChars)
	}
	return map[string]pair{
		"rag_basic": {schemaFor[rag.BasicInput](ragRequest), ragResponse(rag.PipelineBasic)},
		"rag_basic_rerank": {schemaFor[rag.RerankInput](func(p map[string]*jsonschema.Schema) {
			ragRequest(p)
			p["candidate_pool"].Minimum, p["candidate_pool"].Maximum = ptr(1.0), ptr(float64(rag.MaxCandidatePool))
		}), ragResponse(rag.PipelineBasicRerank)},
		"rag_crag": {schemaFor[rag.CRAGInput](func(p map[string]*jsonschema.Schema) {
			ragRequest(p)
			p["confidence_threshold"].Minimum, p["confidence_threshold"].Maximum = ptr(0.0), ptr(1.0)
			p["confidence_threshold"].Default = json.RawMessage(fmt.Sprint(rag.DefaultConfidenceThreshold))
			p["correction_strategy"].Enum, p["correction_strategy"].Default = enum(rag.Strategies...), json.RawMessage(`"rewrite"`)
		}), ragResponse(rag.PipelineCRAG)},
		"rag_graphrag": {schemaFor[rag.GraphRAGInput](func(p map[string]*jsonschema.Schema) {
			ragRequest(p)
			p["graph_traversal_depth"].Minimum, p["graph_traversal_depth"].Maximum = ptr(0.0), ptr(float64(graph.MaxDepth))
			p["graph_traversal_depth"].Default = json.RawMessage(fmt.Sprint(rag.DefaultGraphTraversalDepth))
		}), ragResponse(rag.PipelineGraphRAG)},
		"rag_iris_global_graphrag": {schemaFor[rag.GlobalInput](func(p map[string]*jsonschema.Schema) {
			ragRequest(p)
			p["community_level"].Minimum = ptr(0.0)
			p["max_communities"].Minimum, p["max_communities"].Maximum = ptr(1.0), ptr(float64(rag.MaxCommunities))
			p["max_communities"].Default = json.RawMessage(fmt.Sprint(rag.DefaultMaxCommunities))
		}), ragResponse(rag.PipelineGlobalGraphRAG)},
		"rag_pylate_colbert": {schemaFor[rag.ColbertInput](func(p map[string]*jsonschema.Schema) {
			ragRequest(p)
			p["candidate_source"].Enum, p["candidate_source"].Default = enum(rag.CandidateSources...), json.RawMessage(`"hybrid"`)
			p["candidate_pool"].Minimum, p["candidate_pool"].Maximum = ptr(1.0), ptr(float64(rag.MaxCandidatePool))
			p["interaction_threshold"].Minimum, p["interaction_threshold"].Maximum = ptr(0.0), ptr(1.0)
			p["interaction_threshold"].Default = json.RawMessage("0")
		}), ragResponse(rag.PipelineColbert)},
		"rag_health_check": {schemaFor[rag.HealthInput](nil), schemaOf[rag.HealthOutput](func(s *jsonschema.Schema) {
			statuses := []any{rag.Healthy, rag.Degraded, rag.Unavailable}
			s.Properties["overall_status"].Enum = statuses
			s.Properties["pipeline_statuses"].AdditionalProperties.Properties["status"].Enum = statuses
		})},
		"optimizer_vs-rephrase": {schemaFor[rag.RephraseInput](func(p map[string]*jsonschema.Schema) {
			question(p)
			for _, f := range []string{"thread_id", "conversation_id"} {
				p[f].Pattern, p[f].MaxLength = memory.IDPattern, ptr(128)
			}
		}), schemaFor[rag.RephraseOutput](nil)},
		"optimizer_vs-grade": {schemaFor[rag.GradeInput](func(p map[string]*jsonschema.Schema) {
			question(p)
			p["documents"].MaxItems = ptr(rag.MaxGradeDocuments)
		}), schemaFor[rag.GradeOutput](func(p map[string]*jsonschema.Schema) {
			p["relevant"].Enum = []any{"yes", "no"}
		})},
	}
}
