package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// VectorFamily names the vector store and retrieval tools.
const VectorFamily = "vector"

// vectorTool completes t as a public tool of the vector family that mutates
// (and is audited) unless its annotations say it only reads.
func vectorTool(t *Tool) *Tool {
	t.Family, t.Visibility, t.Mutates = VectorFamily, Public, !t.Annotations.ReadOnlyHint
	return t
}

func vectorTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	replacing := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	small := Limits{Timeout: 10 * time.Second, MemoryMB: 256}
	return []*Tool{
		vectorTool(&Tool{
			Name: "optimizer_vs-retriever", Function: "vector/retriever", Title: "Search vector stores",
			Description: "Retrieves the passages of your vector stores that best answer a question: BM25 keyword search, exact vector search, or both fused by reciprocal rank (hybrid, the default), with optional metadata filters. Without stores, picks the stores that fit the question (the configured language model chooses from their descriptions with the prompt optimizer_vs-table-selection; offline, or when its choice fails, the stores whose description and content best fit) and merges their results; each document names its store and store_selection says how they were chosen. Stores, top_k and mode left out come from the thread's settings (thread_id, else your default thread; settings_update).",
			Annotations: readOnly, Limits: Limits{Timeout: 30 * time.Second, MemoryMB: 2048}, Table: Read, Blobs: Read, Embeds: true,
			// A hosted generator chooses the stores a search names none of.
			Generates:    true,
			PipelineTask: "RetrieverFunctionArn", Group: GroupVectorSearch,
			// A search of more shards than one group fans out to search_group.
			Invokes: []string{searchGroupFunction},
			Example: json.RawMessage(`{"question":"How do I rotate the API keys?","top_k":5}`),
		}),
		searchGroupTool(),
		embedTextsTool(),
		vectorTool(&Tool{
			Name: "optimizer_vs-storage", Function: "vector/storage", Title: "List searchable vector stores",
			Description: "Lists your vector stores that a search can use, with alias, description and embedding model. Stores built with an embedding model other than the configured one are listed apart as hidden, with the reason.",
			Annotations: readOnly, Limits: small, Table: Read, Example: json.RawMessage(`{}`), Group: GroupVectorSearch,
		}),
		vectorTool(&Tool{
			Name: "vector_store_create", Function: "vector/store_create", Title: "Create a vector store",
			Description: "Creates an empty vector store. It records the configured embedding model and dimensions, which every later ingest and search must use, and the chunking settings (passage size and overlap in characters). Give it a description: searches that name no store pick stores by it.",
			Annotations: additive, Limits: small, Table: ReadWrite,
			Example: json.RawMessage(`{"alias":"handbooks","description":"Employee handbooks and HR policies"}`),
		}),
		vectorTool(&Tool{
			Name: "vector_store_get", Function: "vector/store_get", Title: "Describe a vector store",
			Description: "Returns a vector store's description, embedding model and dimensions, chunking settings, document and chunk counts, and manifest version.",
			Annotations: readOnly, Limits: small, Table: Read, Example: json.RawMessage(`{"alias":"manuals"}`),
		}),
		vectorTool(&Tool{
			Name: "vector_store_list", Function: "vector/store_list", Title: "List vector stores",
			Description: "Lists your vector stores by alias, a page at a time; pass next_cursor back as cursor to continue.",
			Annotations: readOnly, Limits: small, Table: Read, Example: json.RawMessage(`{}`),
		}),
		vectorTool(&Tool{
			Name: "vector_document_ingest", Function: "vector/document_ingest", Title: "Add a document to a vector store",
			Description: "Adds a document (text, Markdown, PDF or DOCX) to a vector store: given inline as content (text), as content_base64 (binary), or as the key of an object under your tenant's prefix. It is cut into overlapping passages, embedded and written as a new shard. Ingesting the same doc_id again with the same text does nothing (status unchanged); with different text it replaces the old chunks. Each store and tenant has storage quotas (documents, chunks, bytes); an ingest that would pass one fails with quota_exceeded, naming the quota and current use, and stores nothing: delete documents or stores to make room. Uploading to documents/<store>/ in the bucket ingests too.",
			Annotations: replacing, Limits: Limits{Timeout: 300 * time.Second, MemoryMB: 2048}, Table: ReadWrite, Blobs: ReadWrite, Embeds: true,
			Generates: true, MaxRequestBytes: IngestRequestBytes, Progress: true,
			Example: json.RawMessage(`{"store":"manuals","file_name":"setup.md","content":"# Setup\n\nRun the installer, then sign in with your API key.","metadata":{"product":"switchboard"}}`),
		}),
		vectorTool(&Tool{
			Name: "vector_document_list", Function: "vector/document_list", Title: "List a store's documents",
			Description: "Lists the documents of a vector store by id, with their chunk counts, content hashes, formats, sources and metadata; pass next_cursor back as cursor to continue.",
			Annotations: readOnly, Limits: small, Table: Read, Example: json.RawMessage(`{"store":"manuals"}`),
		}),
		vectorTool(&Tool{
			Name: "vector_document_delete", Function: "vector/document_delete", Title: "Remove a document from a vector store",
			Description: "Removes a document from a vector store: its chunks leave search at once.",
			Annotations: destructive, Limits: Limits{Timeout: 60 * time.Second, MemoryMB: 512}, Table: ReadWrite, Deletes: true, Blobs: ReadWrite,
			Example: json.RawMessage(`{"store":"manuals","doc_id":"setup.md"}`),
		}),
		vectorTool(&Tool{
			Name: "vector_store_delete", Function: "vector/store_delete", Title: "Delete a vector store",
			Description: "Deletes a vector store with all its documents, shards and manifests. If interrupted, calling it again finishes the job.",
			Annotations: destructive, Limits: Limits{Timeout: 120 * time.Second, MemoryMB: 256}, Table: ReadWrite, Deletes: true, Blobs: ReadWrite,
			Example: json.RawMessage(`{"alias":"manuals"}`),
		}),
	}
}

const searchGroupFunction = "vector/search_group"

// shardKeys is the IAM pattern of the object keys of vector store shards,
// the only objects the search worker may read: vector.ShardKeys, which a
// test checks it equals.
const shardKeys = "tenants/*/vector/*/shards/*.seg"

// centroidKeys is the IAM pattern of a store's IVF centroids, which the
// search worker reads to probe clusters: vector.CentroidKeys, which a test
// checks it equals.
const centroidKeys = "tenants/*/vector/*/ivf/*.cen"

// searchGroupLimits: 3008 MB holds a group of vector.DefaultGroupBytes of
// shards (768 MiB; about 960 MiB decoded, which the process cache keeps)
// with room for the read buffers of a cold load and the Go heap's headroom,
// and buys about 1.7 vCPUs to decode shards in parallel. Lambda allows up to
// 10 GB, which would fit groups three times larger, but some accounts are held
// to 3008 MB, and a larger group lengthens every worker's cold load and scan:
// more groups search in parallel instead. The timeout is under the
// retriever's, so that a stuck worker fails the search with its own error.
var searchGroupLimits = Limits{Timeout: 20 * time.Second, MemoryMB: 3008}

// searchGroupTool is the worker of a search fanned out over functions
// (vector.Service.SearchGroup): the retriever invokes it once per group of
// shards when a search spans more than one group. It reads shard objects
// and nothing else.
func searchGroupTool() *Tool {
	return &Tool{
		Name: "optimizer_vs-search-group", Title: "Search a group of shards",
		Description: "Internal step of a search too large for one function. Runs one operation over a group of the caller's shards: stats (BM25 statistics of the query's terms), search (per-modality rankings with the collection's statistics, and the ranked chunks) or vectors (the vectors of hits it ranked). The retriever merges the groups' answers.",
		Family:      VectorFamily, Function: searchGroupFunction, Group: GroupVectorSearch,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		Visibility:  Internal, Limits: searchGroupLimits,
		Blobs: Read, BlobKeys: []string{shardKeys, centroidKeys},
		Example: json.RawMessage(`{"op":"search","group":{"shards":[{"store":"manuals","key":"tenants/demo/vector/manuals/shards/0000000000000000.seg","chunks":1}]},"query":{"text":"How do I rotate the API keys?","mode":"bm25","k":5}}`),
	}
}

// EmbedTextsTool embeds texts with the configured embedder for the
// deployed gateway, which links no provider's client: its tool_search ranks
// by these embeddings as well as BM25 when the stack configures a hosted
// embedder (config.EnvEmbedder).
const EmbedTextsTool = "vector_embed_texts"

// embedTextsTool is [EmbedTextsTool]: internal, and one the gateway calls.
func embedTextsTool() *Tool {
	return &Tool{
		Name: EmbedTextsTool, Title: "Embed texts",
		Description: "Internal: embeds up to 64 texts (each at most 8192 bytes) with the configured embedder, for the gateway's tool_search: the provider, the model and one vector a text, in order.",
		Family:      VectorFamily, Function: "vector/embed_texts",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(true)},
		Visibility:  Internal, GatewayCalls: true, Embeds: true,
		Limits:  Limits{Timeout: 10 * time.Second, MemoryMB: 256},
		Example: json.RawMessage(`{"texts":["Find tools by what they do"],"purpose":"query"}`),
	}
}

// vectorTriggers lists the indexer: S3 invokes it for every object created
// or removed under tenants/, and it acts on those under
// tenants/<tenant>/documents/<store>/ (S3 filters cannot match the middle of
// a key). It writes shards and manifests, so it needs the bucket read-write;
// its memory covers a compaction of up to vector.MaxShardChunks chunks.
func vectorTriggers() []*Trigger {
	return []*Trigger{{
		Function: "vector/indexer", Family: VectorFamily,
		Description: "Indexes documents uploaded to tenants/<tenant>/documents/<store>/ into that vector store, and removes deleted ones.",
		Limits:      Limits{Timeout: 5 * time.Minute, MemoryMB: 2048},
		Table:       ReadWrite, Blobs: ReadWrite, Embeds: true, Generates: true, Deletes: true,
		S3: &S3Events{Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Prefix: "tenants/"},
	}}
}
