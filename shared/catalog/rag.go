package catalog

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RAGFamily names the RAG pipeline tools.
const RAGFamily = "rag"

// stepFamily is the family of the pipeline's internal steps: they belong
// with the retriever, in the vector family (VectorFamily), whose functions live
// under functions/vector/.
const stepFamily = "vector"

// ragLimits are seed 002's resource limits of each pipeline: 5 concurrent
// queries (reserved concurrency: the template sets it, and the local
// assembly applies it as Lambda does) and a 30 s timeout, rag.DefaultLimits'
// (a test checks they agree). The pipeline's own deadline is the same 30 s,
// cut short to answer cleanly when the invocation's deadline comes first.
var ragLimits = Limits{Timeout: 30 * time.Second, MemoryMB: 512, ReservedConcurrency: 5}

var stepLimits = Limits{Timeout: 15 * time.Second, MemoryMB: 256}

// ragTool completes t as a pipeline tool: public, with seed 002's limits,
// running the pipeline and generating its answer.
func ragTool(t *Tool) *Tool {
	t.Family, t.Visibility, t.Limits = RAGFamily, Public, ragLimits
	// Recording the call's outcome for rag_health_check is bookkeeping,
	// not a change the caller asked for: to a host the tool only reads.
	// That recording (a get, then a conditional put) is all it writes.
	t.Annotations, t.Table = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}, ReadPut
	t.Pipeline, t.Generates = true, true
	return t
}

// ragReturns is the part of every pipeline tool's description that says what it returns.
const ragReturns = " Returns the answer, the documents it used (doc_id, content, score, metadata), their deduplicated sources for citation, metadata on how the pipeline ran (pipeline_name, the query used, the relevance grade, any step that fell back, the provider and model of the answer and of each step), performance_metrics, and response_id (your request_id, or a generated one). Naming a store that does not exist is an error."

func ragTools() []*Tool {
	example := json.RawMessage(`{"query":"How often should I replace my toothbrush?","top_k":5}`)
	return []*Tool{
		ragTool(&Tool{
			Name: "rag_basic", Function: "rag/basic", Title: "Answer from your documents",
			Description: "Basic RAG: answers a question from your vector stores. Rephrases it from the conversation when thread_id (or conversation_id) names one with more than two messages, retrieves the top_k passages (hybrid keyword and vector search), checks they are relevant, and writes the answer from them; if they are not relevant, the answer is written without them. Best for general questions about your documents." + ragReturns,
			Example:     example,
		}),
		ragTool(&Tool{
			Name: "rag_basic_rerank", Function: "rag/basic_rerank", Title: "Answer from your documents, reranked",
			Description: "RAG with reranking: like rag_basic, but retrieves a larger candidate pool (candidate_pool, default max(4*top_k, 20)) and reranks it by how completely and how closely each passage matches the question's terms before keeping the top_k. Better precision when the answer hinges on exact terms; a little slower." + ragReturns,
			Example:     json.RawMessage(`{"query":"How often should I replace my toothbrush?","top_k":3,"candidate_pool":20}`),
		}),
		ragTool(&Tool{
			Name: "rag_crag", Function: "rag/crag", Title: "Answer from your documents, self-correcting",
			Description: "Corrective RAG: like rag_basic, but scores its confidence in what it retrieved (0..1: how much of the question's content the best passage covers, its rarer words counting more; 0 if graded irrelevant); below confidence_threshold (default 0.8) it corrects the query (correction_strategy rewrite: the generator rewrites it from the passages found and the conversation; expand: informative words of the best passages are added) and retrieves again, grading what it finds against your question; it answers from the correction only when that is more confident (from the first retrieval, when too little time is left for a second), so a question the documents cannot answer still gets no documents. Best when questions may be phrased unlike the documents." + ragReturns,
			Example:     json.RawMessage(`{"query":"How often should I replace my toothbrush?","confidence_threshold":0.8,"correction_strategy":"rewrite"}`),
		}),
		ragTool(&Tool{
			Name: "rag_graphrag", Function: "rag/graphrag", Title: "Answer from your documents, following entities",
			Description: "GraphRAG (local search, as HippoRAG does it): like rag_basic, but retrieval also walks the entity graph built from your documents when they were ingested: the entities your question names (people, organisations, places, terms) are matched in the graph, expanded graph_traversal_depth relations (default 2, at most 5), the passages mentioning them scored by Personalized PageRank, and that ranking fused with hybrid search by reciprocal rank (each document's score is its rrf_score). Best for questions whose answer sits in a document linked to the one the question names (multi-hop: 'where was the founder of X born?'); for single-fact questions use rag_basic, which ranks them better. metadata names the entities matched, the depth and the documents only the graph found." + ragReturns,
			Example:     json.RawMessage(`{"query":"Where did the founder of Quillfeather Labs study?","graph_traversal_depth":2}`),
		}),
		func() *Tool {
			t := ragTool(&Tool{
				Name: "rag_iris_global_graphrag", Function: "rag/iris_global_graphrag", Title: "Answer a broad question over your documents' communities",
				Description: "GraphRAG global search: answers questions about a whole collection ('what are the main themes?') from community reports instead of single passages. The entity graph of your documents is partitioned into communities at several levels (Louvain with Leiden's refinement); each community has a report (its central entities and passages). The reports of one level (community_level, default the finest with at most max_communities) are mapped to points rated against your question, and the best points reduced to the answer, citing the communities' documents. Reports are rebuilt when the store has changed by more than about a tenth of its documents since (metadata reports_behind says how far behind those used were). The retrieved documents are the community reports used; metadata names the level and the communities mapped and used. filter and mode do not apply." + ragReturns,
				Example:     json.RawMessage(`{"query":"What are the main themes of these documents?","max_communities":16}`),
			})
			// It reads the community reports (building and storing them when
			// stale) in its own function rather than running the pipeline.
			t.Pipeline, t.Blobs, t.Embeds = false, ReadWrite, true
			return t
		}(),
		colbertTool(),
		{
			Name: HealthCheckTool, Title: "Check the RAG pipelines' health",
			Description: "Reports whether the RAG pipelines are working for you: each pipeline's status (healthy below a 10% error rate or with no calls, degraded below 50%, else unavailable), error rate, last success and latency over your calls in the last hour; the table's reachability and latency; and an overall status (unavailable if the table is unreachable or every pipeline is; healthy if every pipeline is; else degraded).",
			Family:      RAGFamily, Function: "rag/health_check",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Public, Limits: Limits{Timeout: 10 * time.Second, MemoryMB: 256}, Table: Read,
			Example: json.RawMessage(`{}`),
		},
	}
}

// HealthCheckTool is the tool that reports the RAG pipelines' health.
const HealthCheckTool = "rag_health_check"

// RAGPipelines returns the pipeline name (seed 002's pipeline_name: the tool
// name without "rag_") of every tool of the rag family but the health
// check, in catalog order: the pipelines rag_health_check reports. A
// pipeline added to the family is reported without another list to keep.
func (c *Catalog) RAGPipelines() []string {
	var out []string
	for _, t := range c.tools {
		if t.Family == RAGFamily && t.Name != HealthCheckTool {
			out = append(out, strings.TrimPrefix(t.Name, "rag_"))
		}
	}
	return out
}

// colbertLimits are rag_pylate_colbert's: seed 002's, with memory for the
// searched stores' token vectors (vector.DefaultLateBytes, 256 MiB), the
// chunk shards their passages are read from (a 256 MiB cache) and the
// process.
var colbertLimits = Limits{Timeout: ragLimits.Timeout, MemoryMB: 1024, ReservedConcurrency: ragLimits.ReservedConcurrency}

// colbertTool is rag_pylate_colbert. It writes the token vectors and codec
// it builds lazily beside the stores' shards, and reads those shards.
func colbertTool() *Tool {
	t := ragTool(&Tool{
		Name: "rag_pylate_colbert", Function: "rag/pylate_colbert", Title: "Answer from your documents by late interaction",
		Description: "Late-interaction RAG (ColBERT): like rag_basic, but ranks passages by MaxSim, each question token matched to its most similar token of the passage and the similarities summed, over per-token vectors stored compressed (a centroid id and 2 bits a dimension). candidate_source hybrid (default) reranks the retrieval's top candidate_pool; centroid finds candidates among all the searched stores' token vectors by centroid pruning. A store's token vectors are built on its first such call and kept up to date on later ones, so a first call on a large store is slow. metadata adds candidate_source, compression_ratio, token_interactions and token_embedder. With the offline token embedder the token vectors carry no context: quality is below rag_basic's; a ColBERT model (Jina's API) is configured for real use." + ragReturns,
		Example:     json.RawMessage(`{"query":"How often should I replace my toothbrush?","top_k":5,"candidate_source":"hybrid"}`),
	})
	t.Limits, t.Blobs, t.BlobKeys = colbertLimits, ReadWrite, []string{"tenants/*/vector/*"}
	t.MultiVector = true
	return t
}

// ragStepTools are the pipeline's internal steps that the rag stream
// serves: the state machine invokes them; hosts never see them.
func ragStepTools() []*Tool {
	return []*Tool{
		{
			Name: "optimizer_vs-rephrase", Title: "Rephrase a question from its conversation",
			Description: "Internal pipeline step. Rewrites a question asked inside a conversation (thread_id or conversation_id, a memory conversation) into a standalone search query, using the conversation's summary and newest messages; only when the conversation holds more than two messages. Otherwise, or when the conversation does not exist, returns the question unchanged.",
			Family:      stepFamily, Function: "vector/rephrase", PipelineTask: "RephraseFunctionArn", Group: GroupVectorSearch,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Internal, Limits: stepLimits, Table: Read, Generates: true,
			Example: json.RawMessage(`{"question":"How often should I replace it?","thread_id":"chat_demo"}`),
		},
		{
			Name: "optimizer_vs-grade", Title: "Grade retrieved documents",
			Description: "Internal pipeline step. Judges whether the retrieved documents, together, are relevant to the question: relevant yes or no (binary). No documents grade no.",
			Family:      stepFamily, Function: "vector/grade", PipelineTask: "GradeFunctionArn", Group: GroupVectorSearch,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Internal, Limits: stepLimits, Table: Read, Generates: true,
			Example: json.RawMessage(`{"question":"How often should I replace my toothbrush?","documents":[{"doc_id":"dental-guide","chunk_id":"dental-guide#0","content":"Replace your toothbrush every three months, or sooner if the bristles fray.","score":0.83,"metadata":{"source":"dental-guide.md"},"store":"health"}]}`),
		},
	}
}
