package rag

import "github.com/switchboard-dev/switchboard/shared/pipeline"

// RephraseInput is the input of optimizer_vs-rephrase.
type RephraseInput struct {
	Question       string `json:"question" jsonschema:"the question to make standalone"`
	ThreadID       string `json:"thread_id,omitempty" jsonschema:"the conversation (a memory family conversation id) the question belongs to; its thread settings (settings_get) may turn rephrasing off and name the model"`
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"the same as thread_id, under the memory family's name; give one of the two"`
	LLMModel       string `json:"llm_model,omitempty" jsonschema:"the language model to rephrase with, among those the server allows; empty: the configured one"`
}

// RephraseOutput is the output of optimizer_vs-rephrase.
type RephraseOutput struct {
	Question  string `json:"question" jsonschema:"the rephrased question, or the original one when it was not rephrased"`
	Rephrased bool   `json:"rephrased" jsonschema:"true if the generator rewrote the question"`
	Messages  int    `json:"messages" jsonschema:"how many messages the conversation holds (0 if there is none); the question is rephrased only when there are more than two"`
	Provider  string `json:"provider,omitempty" jsonschema:"who rephrased the question, when a generator ran"`
	Model     string `json:"model,omitempty"`
}

// GradeInput is the input of optimizer_vs-grade.
type GradeInput struct {
	Question  string              `json:"question" jsonschema:"the question the documents were retrieved for"`
	Documents []pipeline.Document `json:"documents" jsonschema:"the retrieved documents, as optimizer_vs-retriever returns them"`
	LLMModel  string              `json:"llm_model,omitempty" jsonschema:"the language model to grade with, among those the server allows; empty: the configured one"`
}

// GradeOutput is the output of optimizer_vs-grade.
type GradeOutput struct {
	Relevant string `json:"relevant" jsonschema:"yes if the documents help answer the question, else no"`
	Graded   bool   `json:"graded" jsonschema:"always true: the grade is a judgement, not a fallback"`
	Provider string `json:"provider,omitempty" jsonschema:"who graded, when a generator ran (not when there were no documents to grade)"`
	Model    string `json:"model,omitempty"`
}

// Request holds the parameters every RAG pipeline tool takes (seed 002's
// Tool Request); each tool's input adds its own.
type Request struct {
	Query           string              `json:"query" jsonschema:"the question to answer from the tenant's vector stores"`
	TopK            *int                `json:"top_k,omitempty" jsonschema:"how many documents to answer from (default 5)"`
	IncludeSources  *bool               `json:"include_sources,omitempty" jsonschema:"return the deduplicated sources of the documents (default true)"`
	IncludeMetadata *bool               `json:"include_metadata,omitempty" jsonschema:"return each document's metadata (default true)"`
	RequestID       string              `json:"request_id,omitempty" jsonschema:"a UUID v4 for tracing; generated when absent; the response's response_id equals it"`
	ThreadID        string              `json:"thread_id,omitempty" jsonschema:"a memory conversation the query belongs to: with more than two messages, the query is first rephrased into a standalone question"`
	ConversationID  string              `json:"conversation_id,omitempty" jsonschema:"the same as thread_id, under the memory family's name; give one of the two"`
	Stores          []string            `json:"stores,omitempty" jsonschema:"vector store aliases to search; absent: the stores that best fit the query. A store that does not exist fails the call"`
	Mode            string              `json:"mode,omitempty" jsonschema:"retrieval mode: hybrid (default), bm25 or vector"`
	Filter          map[string][]string `json:"filter,omitempty" jsonschema:"metadata filter: every key must have one of its listed values"`
	EmbeddingModel  string              `json:"embedding_model,omitempty" jsonschema:"the embedding model to search with, among those the server allows (default: the configured one); a store built with another model is refused"`
	LLMModel        string              `json:"llm_model,omitempty" jsonschema:"the language model that rephrases, grades and answers, among those the server allows (default: the configured one)"`
}

// BasicInput is the input of rag_basic.
type BasicInput struct {
	Request
}

// RerankInput is the input of rag_basic_rerank.
type RerankInput struct {
	Request
	CandidatePool *int `json:"candidate_pool,omitempty" jsonschema:"how many candidates to retrieve before reranking down to top_k (default max(4*top_k, 20), capped at 50; at least top_k)"`
}

// CRAGInput is the input of rag_crag.
type CRAGInput struct {
	Request
	ConfidenceThreshold *float64 `json:"confidence_threshold,omitempty" jsonschema:"below this retrieval confidence (0..1, default 0.8) the query is corrected and retrieved again"`
	CorrectionStrategy  string   `json:"correction_strategy,omitempty" jsonschema:"how to correct a low-confidence retrieval: rewrite (default: the generator rewrites the query) or expand (terms from the retrieved documents are added to it)"`
}

// ColbertInput is the input of rag_pylate_colbert.
type ColbertInput struct {
	Request
	CandidateSource      string   `json:"candidate_source,omitempty" jsonschema:"where the passages late interaction scores come from: hybrid (default: the retrieval's top candidate_pool, reranked by MaxSim) or centroid (found by centroid pruning over the searched stores' token vectors)"`
	CandidatePool        *int     `json:"candidate_pool,omitempty" jsonschema:"hybrid source: how many retrieved passages to rerank down to top_k (default max(4*top_k, 20), capped at 50; at least top_k)"`
	InteractionThreshold *float64 `json:"interaction_threshold,omitempty" jsonschema:"0..1 (default 0): a question token whose best similarity in a passage is below it adds nothing to the passage's score"`
}

// GraphRAGInput is the input of rag_graphrag.
type GraphRAGInput struct {
	Request
	GraphTraversalDepth *int `json:"graph_traversal_depth,omitempty" jsonschema:"how many relations from the entities the query names the graph walk goes, 0-5 (default 2); deeper reaches documents linked through more intermediate entities"`
}

// GlobalInput is the input of rag_iris_global_graphrag.
type GlobalInput struct {
	Request
	CommunityLevel *int `json:"community_level,omitempty" jsonschema:"the community level to search, 0 the finest (default: the finest level with at most max_communities reports, else the coarsest)"`
	MaxCommunities *int `json:"max_communities,omitempty" jsonschema:"how many community reports to map, those whose text covers most of the query (default 32, at most 256)"`
}

// Response is what every RAG pipeline tool returns (seed 002's Tool Response).
type Response struct {
	Answer             string              `json:"answer" jsonschema:"the generated answer; empty when the generator had nothing to say"`
	RetrievedDocuments []RetrievedDocument `json:"retrieved_documents" jsonschema:"the documents the answer used, most relevant first; empty when retrieval found nothing relevant"`
	Sources            []string            `json:"sources" jsonschema:"where the documents came from (metadata source, else doc_id), deduplicated, for citations"`
	Metadata           Metadata            `json:"metadata"`
	PerformanceMetrics PerformanceMetrics  `json:"performance_metrics"`
	ResponseID         string              `json:"response_id" jsonschema:"equal to the request's request_id"`
}

// RetrievedDocument is one document of a [Response].
type RetrievedDocument struct {
	DocID    string            `json:"doc_id"`
	Content  string            `json:"content"`
	Score    float64           `json:"score" jsonschema:"relevance score; documents come in descending order"`
	Metadata map[string]string `json:"metadata" jsonschema:"the document's metadata; empty when include_metadata is false"`
}

// Metadata describes how a pipeline produced a [Response]. The fields after
// the common ones are set only by the pipelines they name.
type Metadata struct {
	PipelineName    string         `json:"pipeline_name" jsonschema:"basic, basic_rerank, crag, graphrag, iris_global_graphrag or pylate_colbert"`
	ExecutionTimeMS int64          `json:"execution_time_ms"`
	TokensUsed      int            `json:"tokens_used" jsonschema:"tokens the answer (and crag's rewrite and grade) consumed, input plus output, as the generator reported them"`
	Timestamp       string         `json:"timestamp" jsonschema:"when the request was received (RFC 3339)"`
	Provider        string         `json:"provider,omitempty" jsonschema:"the generator that wrote the answer"`
	Model           string         `json:"model,omitempty"`
	ContextInput    string         `json:"context_input" jsonschema:"the query actually used for retrieval"`
	Rephrased       bool           `json:"rephrased" jsonschema:"true if the query was rephrased from the conversation"`
	Relevant        string         `json:"relevant" jsonschema:"the grade of the retrieved documents: yes or no; with no, the answer was written without them"`
	Graded          bool           `json:"graded" jsonschema:"false if grading failed and the documents were kept by default"`
	Degraded        []string       `json:"degraded" jsonschema:"pipeline steps that failed and fell back: rephrase (original query used), retrieve (no documents), grade (documents kept)"`
	SearchedStores  []string       `json:"searched_stores" jsonschema:"the vector stores searched"`
	Steps           pipeline.Steps `json:"steps" jsonschema:"the provider and model each step used: the generator that rephrased and graded, the embedder that retrieved (empty where a step fell back or needed no model)"`
	Discarded       int            `json:"discarded_documents" jsonschema:"documents retrieved but graded not relevant, so not used"`

	// StoreSelection says how the stores were chosen when the request named none.
	StoreSelection *pipeline.StoreSelection `json:"store_selection,omitempty" jsonschema:"how the stores searched were chosen, when the request named none: by (model: the language model chose with the prompt optimizer_vs-table-selection; score: by their descriptions and content), and fallback, why the model's choice was not used"`

	// rag_basic_rerank
	Reranker   string `json:"reranker,omitempty" jsonschema:"basic_rerank: the reranking method"`
	Candidates *int   `json:"candidates,omitempty" jsonschema:"basic_rerank and pylate_colbert: how many candidates were reranked (pylate_colbert: scored exactly)"`

	// rag_crag
	CorrectionApplied      *bool    `json:"correction_applied,omitempty" jsonschema:"crag: true if the answer comes from the retrieval for the corrected query, which is used only when more confident than the first"`
	ConfidenceScore        *float64 `json:"confidence_score,omitempty" jsonschema:"crag: confidence of the retrieval the answer used (0..1)"`
	InitialConfidenceScore *float64 `json:"initial_confidence_score,omitempty" jsonschema:"crag: confidence of the first retrieval"`
	ConfidenceThreshold    *float64 `json:"confidence_threshold,omitempty" jsonschema:"crag: the threshold applied"`
	CorrectionStrategy     string   `json:"correction_strategy,omitempty" jsonschema:"crag: rewrite or expand"`
	CorrectedQuery         string   `json:"corrected_query,omitempty" jsonschema:"crag: the query of the second retrieval, when one ran, whether its answer was used or not"`

	// rag_pylate_colbert (and Candidates)
	CandidateSource   string              `json:"candidate_source,omitempty" jsonschema:"pylate_colbert: hybrid or centroid"`
	CompressionRatio  *float64            `json:"compression_ratio,omitempty" jsonschema:"pylate_colbert: the token vectors' float32 size over their compressed size (centroid id and 2-bit residuals); 0 when no store held tokens"`
	TokenInteractions *int64              `json:"token_interactions,omitempty" jsonschema:"pylate_colbert: question-token x passage-token similarities computed exactly"`
	TokenEmbedder     *pipeline.StepModel `json:"token_embedder,omitempty" jsonschema:"pylate_colbert: the multi-vector embedder of the token vectors"`

	// rag_graphrag
	EntitiesMatched     []string  `json:"entities_matched,omitempty" jsonschema:"graphrag: the entities of the stores' graphs the query names, where the graph walk started"`
	GraphTraversalDepth *int      `json:"graph_traversal_depth,omitempty" jsonschema:"graphrag: how many relations the walk went from them"`
	EntitiesReached     *int      `json:"entities_reached,omitempty" jsonschema:"graphrag: entities the walk reached"`
	GraphOnlyDocuments  *int      `json:"graph_only_documents,omitempty" jsonschema:"graphrag: retrieved documents only the graph found (not hybrid search)"`
	ExtractionFallbacks *int      `json:"extraction_fallback_chunks,omitempty" jsonschema:"graphrag: chunks of the searched graphs whose entities were extracted offline because the configured generator's extraction failed or was refused"`
	RRFScores           []float64 `json:"rrf_scores,omitempty" jsonschema:"graphrag: each retrieved document's rrf_score (reciprocal rank fusion of hybrid search and the graph's Personalized PageRank), in order; also its score"`

	// rag_iris_global_graphrag
	CommunityLevel    *int     `json:"community_level,omitempty" jsonschema:"iris_global_graphrag: the community level searched (0 the finest)"`
	CommunitiesMapped []string `json:"communities_mapped,omitempty" jsonschema:"iris_global_graphrag: the communities whose reports were mapped to rated points (community/<store>/<level>/<number>)"`
	CommunitiesUsed   []string `json:"communities_used,omitempty" jsonschema:"iris_global_graphrag: the communities whose points reached the answer"`
	ReportsBehind     *int64   `json:"reports_behind,omitempty" jsonschema:"iris_global_graphrag: how many versions of its store the oldest community reports used lag (0: current; reports are rebuilt past about a tenth of the store's documents changed)"`
	MapFailures       *int     `json:"map_failures,omitempty" jsonschema:"iris_global_graphrag: reports whose rating by the generator was refused (not the JSON asked for)"`
}

// PerformanceMetrics are a [Response]'s timings; all are non-negative.
type PerformanceMetrics struct {
	ExecutionTimeMS  int64 `json:"execution_time_ms" jsonschema:"the whole call"`
	RetrievalTimeMS  int64 `json:"retrieval_time_ms" jsonschema:"the rephrase, retrieve and grade pipeline runs (crag: both runs)"`
	GenerationTimeMS int64 `json:"generation_time_ms" jsonschema:"generating the answer (crag: and rewriting the query and grading its retrieval)"`
	TokensUsed       int   `json:"tokens_used"`
}

// HealthInput is the input of rag_health_check.
type HealthInput struct{}

// The values of a health status.
const (
	Healthy     = "healthy"
	Degraded    = "degraded"
	Unavailable = "unavailable"
)

// HealthOutput is the output of rag_health_check (seed 002's Health Status).
type HealthOutput struct {
	OverallStatus      string                    `json:"overall_status" jsonschema:"healthy: every pipeline healthy and the table reachable; unavailable: the table unreachable or every pipeline unavailable; else degraded"`
	PipelineStatuses   map[string]PipelineHealth `json:"pipeline_statuses" jsonschema:"every pipeline (basic, basic_rerank, crag, graphrag, iris_global_graphrag, pylate_colbert), from the caller's own calls in the last hour"`
	DatabaseStatus     DatabaseHealth            `json:"database_status"`
	PerformanceMetrics HealthMetrics             `json:"performance_metrics"`
	LastUpdated        string                    `json:"last_updated" jsonschema:"when this check ran (RFC 3339)"`
}

// PipelineHealth is one pipeline's health.
type PipelineHealth struct {
	Status      string  `json:"status" jsonschema:"healthy (error rate below 0.1, or no calls), degraded (below 0.5) or unavailable"`
	LastSuccess string  `json:"last_success,omitempty" jsonschema:"when a call last succeeded (RFC 3339), if one did in the last hour"`
	ErrorRate   float64 `json:"error_rate" jsonschema:"failed calls / calls, last hour"`
	Queries     int64   `json:"queries" jsonschema:"calls in the last hour"`
	Degraded    int64   `json:"degraded_queries" jsonschema:"calls in the last hour that succeeded with a pipeline step falling back"`
	P50MS       int64   `json:"p50_response_time_ms"`
	P95MS       int64   `json:"p95_response_time_ms"`
}

// DatabaseHealth is the table's health, from one timed read.
type DatabaseHealth struct {
	Connected           bool   `json:"connected"`
	ResponseTimeMS      int64  `json:"response_time_ms" jsonschema:"latency of the probe read"`
	ConnectionPoolUsage string `json:"connection_pool_usage" jsonschema:"n/a: the table is reached over HTTPS requests, not pooled connections"`
	Error               string `json:"error,omitempty" jsonschema:"why the probe failed, when it did"`
}

// HealthMetrics are the recent performance of all pipelines together.
type HealthMetrics struct {
	AverageResponseTimeMS int64   `json:"average_response_time_ms" jsonschema:"p50 latency across all pipelines, last hour"`
	P95ResponseTimeMS     int64   `json:"p95_response_time_ms"`
	ErrorRate             float64 `json:"error_rate" jsonschema:"failed calls / calls, last hour"`
	QueriesPerMinute      float64 `json:"queries_per_minute" jsonschema:"calls in the last hour / 60"`
}
