package catalog

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// RAGFamily names the RAG pipeline tools.
const RAGFamily = "rag"

// stepFamily is the family of the pipeline's internal steps: they belong
// with the retriever, in the vector family (VectorFamily), whose functions live
// under functions/vector/.
const stepFamily = "vector"

// ragLimits are seed 002's resource limits of each pipeline: 5 concurrent
// queries (reserved concurrency; the template sets it) and a 30 s timeout.
// The pipeline's own deadline is the same 30 s, cut short to answer cleanly
// when the invocation's deadline comes first.
var ragLimits = Limits{Timeout: rag.DefaultLimits.Timeout, MemoryMB: 512, ReservedConcurrency: rag.DefaultLimits.MaxConcurrent}

var stepLimits = Limits{Timeout: 15 * time.Second, MemoryMB: 256}

// ragRequest tightens the parameters every pipeline tool shares.
func ragRequest(p map[string]*jsonschema.Schema) {
	p["query"].MinLength, p["query"].MaxLength = ptr(1), ptr(rag.MaxQueryChars)
	p["top_k"].Minimum, p["top_k"].Maximum, p["top_k"].Default = ptr(1.0), ptr(float64(rag.MaxTopK)), json.RawMessage(fmt.Sprint(rag.DefaultTopK))
	p["include_sources"].Default, p["include_metadata"].Default = json.RawMessage("true"), json.RawMessage("true")
	p["request_id"].Pattern = rag.UUIDv4Pattern
	for _, f := range []string{"thread_id", "conversation_id"} {
		p[f].Pattern, p[f].MaxLength = memory.IDPattern, ptr(128)
	}
	// The retriever's own rules (vectorTools), so that it never refuses what passed here.
	p["stores"].MaxItems = ptr(vector.MaxSearchStores)
	storeAlias(p["stores"].Items)
	p["mode"].Enum, p["mode"].Default = enum(rag.Modes...), json.RawMessage(`"hybrid"`)
	p["filter"].MaxProperties = ptr(vector.MaxFilterKeys)
	p["filter"].AdditionalProperties.MinItems, p["filter"].AdditionalProperties.MaxItems = ptr(1), ptr(vector.MaxFilterValues)
}

// ragResponse is the output schema of a pipeline tool, its pipeline_name fixed.
func ragResponse(pipeline string) func() *jsonschema.Schema {
	return SchemaFor[rag.Response](func(s *jsonschema.Schema) {
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

func ragTool(name, pipeline, title, description string, in func() *jsonschema.Schema, example string) *Tool {
	return &Tool{
		Name: name, Title: title, Description: description,
		Family: RAGFamily, Function: RAGFamily + "/" + pipeline,
		Input: in, Output: ragResponse(pipeline),
		// Recording the call's outcome for rag_health_check is bookkeeping,
		// not a change the caller asked for: to a host the tool only reads.
		// That recording (a get, then a conditional put) is all it writes.
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Visibility:  Public, Limits: ragLimits, Table: ReadPut,
		Pipeline: true, Generates: true,
		Example: json.RawMessage(example),
	}
}

// common is the part of every pipeline tool's description that says what it returns.
const ragReturns = " Returns the answer, the documents it used (doc_id, content, score, metadata), their deduplicated sources for citation, metadata on how the pipeline ran (pipeline_name, the query used, the relevance grade, any step that fell back, the provider and model of the answer and of each step), performance_metrics, and response_id (your request_id, or a generated one). Naming a store that does not exist is an error."

func ragTools() []*Tool {
	const example = `{"query":"How often should I replace my toothbrush?","top_k":5}`
	return []*Tool{
		ragTool("rag_basic", rag.PipelineBasic, "Answer from your documents",
			"Basic RAG: answers a question from your vector stores. Rephrases it from the conversation when thread_id (or conversation_id) names one with more than two messages, retrieves the top_k passages (hybrid keyword and vector search), checks they are relevant, and writes the answer from them; if they are not relevant, the answer is written without them. Best for general questions about your documents."+ragReturns,
			schemaFor[rag.BasicInput](ragRequest), example),
		ragTool("rag_basic_rerank", rag.PipelineBasicRerank, "Answer from your documents, reranked",
			"RAG with reranking: like rag_basic, but retrieves a larger candidate pool (candidate_pool, default max(4*top_k, 20)) and reranks it by how completely and how closely each passage matches the question's terms before keeping the top_k. Better precision when the answer hinges on exact terms; a little slower."+ragReturns,
			schemaFor[rag.RerankInput](func(p map[string]*jsonschema.Schema) {
				ragRequest(p)
				p["candidate_pool"].Minimum, p["candidate_pool"].Maximum = ptr(1.0), ptr(float64(rag.MaxCandidatePool))
			}), `{"query":"How often should I replace my toothbrush?","top_k":3,"candidate_pool":20}`),
		ragTool("rag_crag", rag.PipelineCRAG, "Answer from your documents, self-correcting",
			"Corrective RAG: like rag_basic, but scores its confidence in what it retrieved (0..1: how much of the question's content the best passage covers, its rarer words counting more; 0 if graded irrelevant); below confidence_threshold (default 0.8) it corrects the query (correction_strategy rewrite: the generator rewrites it from the passages found and the conversation; expand: informative words of the best passages are added) and retrieves again, grading what it finds against your question; it answers from the correction only when that is more confident (from the first retrieval, when too little time is left for a second), so a question the documents cannot answer still gets no documents. Best when questions may be phrased unlike the documents."+ragReturns,
			schemaFor[rag.CRAGInput](func(p map[string]*jsonschema.Schema) {
				ragRequest(p)
				p["confidence_threshold"].Minimum, p["confidence_threshold"].Maximum = ptr(0.0), ptr(1.0)
				p["confidence_threshold"].Default = json.RawMessage(fmt.Sprint(rag.DefaultConfidenceThreshold))
				p["correction_strategy"].Enum, p["correction_strategy"].Default = enum(rag.Strategies...), json.RawMessage(`"rewrite"`)
			}), `{"query":"How often should I replace my toothbrush?","confidence_threshold":0.8,"correction_strategy":"rewrite"}`),
		{
			Name: "rag_health_check", Title: "Check the RAG pipelines' health",
			Description: "Reports whether the RAG pipelines are working for you: each pipeline's status (healthy below a 10% error rate or with no calls, degraded below 50%, else unavailable), error rate, last success and latency over your calls in the last hour; the table's reachability and latency; and an overall status (unavailable if the table is unreachable or every pipeline is; healthy if every pipeline is; else degraded).",
			Family:      RAGFamily, Function: "rag/health_check",
			Input: schemaFor[rag.HealthInput](nil),
			Output: SchemaFor[rag.HealthOutput](func(s *jsonschema.Schema) {
				statuses := []any{rag.Healthy, rag.Degraded, rag.Unavailable}
				s.Properties["overall_status"].Enum = statuses
				s.Properties["pipeline_statuses"].AdditionalProperties.Properties["status"].Enum = statuses
			}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Public, Limits: Limits{Timeout: 10 * time.Second, MemoryMB: 256}, Table: Read,
			Example: json.RawMessage(`{}`),
		},
	}
}

// ragStepTools are the pipeline's internal steps that the rag stream
// serves: the state machine invokes them; hosts never see them.
func ragStepTools() []*Tool {
	question := func(p map[string]*jsonschema.Schema) {
		p["question"].MinLength, p["question"].MaxLength = ptr(1), ptr(rag.MaxQueryChars)
	}
	return []*Tool{
		{
			Name: "optimizer_vs-rephrase", Title: "Rephrase a question from its conversation",
			Description: "Internal pipeline step. Rewrites a question asked inside a conversation (thread_id or conversation_id, a memory conversation) into a standalone search query, using the conversation's summary and newest messages; only when the conversation holds more than two messages. Otherwise, or when the conversation does not exist, returns the question unchanged.",
			Family:      stepFamily, Function: "vector/rephrase",
			Input: schemaFor[rag.RephraseInput](func(p map[string]*jsonschema.Schema) {
				question(p)
				for _, f := range []string{"thread_id", "conversation_id"} {
					p[f].Pattern, p[f].MaxLength = memory.IDPattern, ptr(128)
				}
			}),
			Output:      schemaFor[rag.RephraseOutput](nil),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Internal, Limits: stepLimits, Table: Read, Generates: true,
			Example: json.RawMessage(`{"question":"How often should I replace it?","thread_id":"chat_demo"}`),
		},
		{
			Name: "optimizer_vs-grade", Title: "Grade retrieved documents",
			Description: "Internal pipeline step. Judges whether the retrieved documents, together, are relevant to the question: relevant yes or no (binary). No documents grade no.",
			Family:      stepFamily, Function: "vector/grade",
			Input: schemaFor[rag.GradeInput](func(p map[string]*jsonschema.Schema) {
				question(p)
				p["documents"].MaxItems = ptr(rag.MaxGradeDocuments)
			}),
			Output: schemaFor[rag.GradeOutput](func(p map[string]*jsonschema.Schema) {
				p["relevant"].Enum = []any{"yes", "no"}
			}),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			Visibility:  Internal, Limits: stepLimits, Generates: true,
			Example: json.RawMessage(`{"question":"How often should I replace my toothbrush?","documents":[{"doc_id":"dental-guide","chunk_id":"dental-guide#0","content":"Replace your toothbrush every three months, or sooner if the bristles fray.","score":0.83,"metadata":{"source":"dental-guide.md"},"store":"health"}]}`),
		},
	}
}
