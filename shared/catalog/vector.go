package catalog

import (
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// VectorFamily names the vector store and retrieval tools.
const VectorFamily = "vector"

func storeAlias(s *jsonschema.Schema) {
	s.Pattern, s.MaxLength = vector.AliasPattern, ptr(64)
}

func docID(s *jsonschema.Schema) {
	s.MinLength, s.MaxLength = ptr(1), ptr(vector.MaxDocIDBytes)
}

func pageLimit(s *jsonschema.Schema) {
	s.Minimum, s.Maximum = ptr(1.0), ptr(float64(vector.MaxListLimit))
}

func vectorTool(name, function, title, description string, in, out func() *jsonschema.Schema, ann *mcp.ToolAnnotations, limits Limits, table, blobs Access, example string) *Tool {
	embeds := function == "vector/retriever" || function == "vector/document_ingest"
	return &Tool{
		Embeds: embeds,
		Name:   name, Title: title, Description: description,
		Family: VectorFamily, Function: function,
		Input: in, Output: out, Annotations: ann,
		Visibility: Public, Mutates: !ann.ReadOnlyHint, Limits: limits, Table: table, Blobs: blobs,
		Example: json.RawMessage(example),
	}
}

func vectorTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	replacing := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	small := Limits{Timeout: 10 * time.Second, MemoryMB: 256}
	storeIn := schemaFor[vector.StoreInput](func(p map[string]*jsonschema.Schema) { storeAlias(p["alias"]) })
	storeOut := schemaFor[vector.Store](nil)
	retriever := vectorTool("optimizer_vs-retriever", "vector/retriever", "Search vector stores",
		"Retrieves the passages of your vector stores that best answer a question: BM25 keyword search, exact vector search, or both fused by reciprocal rank (hybrid, the default), with optional metadata filters. Without stores, picks the stores whose description and content best fit the question and merges their results; each document names its store.",
		schemaFor[vector.RetrieveInput](func(p map[string]*jsonschema.Schema) {
			p["question"].MinLength, p["question"].MaxLength = ptr(1), ptr(vector.MaxQuestionChars)
			p["stores"].MaxItems = ptr(vector.MaxSearchStores)
			storeAlias(p["stores"].Items)
			p["top_k"].Minimum, p["top_k"].Maximum = ptr(1.0), ptr(float64(vector.MaxTopK))
			p["nprobe"].Minimum, p["nprobe"].Maximum = ptr(1.0), ptr(float64(retrieval.MaxClusters))
			p["mode"].Enum = []any{"bm25", "vector", "hybrid"}
			p["filter"].MaxProperties = ptr(vector.MaxFilterKeys)
			p["filter"].AdditionalProperties.MaxItems = ptr(vector.MaxFilterValues)
			p["thread_id"].MaxLength = ptr(128)
		}), schemaFor[vector.RetrieveOutput](nil), readOnly,
		Limits{Timeout: 30 * time.Second, MemoryMB: 2048}, Read, Read,
		`{"question":"How do I rotate the API keys?","top_k":5}`)
	// A search of more shards than one group fans out to search_group.
	retriever.Invokes = []string{searchGroupFunction}
	return []*Tool{
		retriever,
		searchGroupTool(),
		vectorTool("optimizer_vs-storage", "vector/storage", "List searchable vector stores",
			"Lists your vector stores that a search can use, with alias, description and embedding model. Stores built with an embedding model other than the configured one are listed apart as hidden, with the reason.",
			schemaFor[vector.StorageInput](func(p map[string]*jsonschema.Schema) { p["thread_id"].MaxLength = ptr(128) }),
			schemaFor[vector.StorageOutput](nil), readOnly, small, Read, NoAccess, `{}`),
		vectorTool("vector_store_create", "vector/store_create", "Create a vector store",
			"Creates an empty vector store. It records the configured embedding model and dimensions, which every later ingest and search must use, and the chunking settings (passage size and overlap in characters). Give it a description: searches that name no store pick stores by it.",
			schemaFor[vector.CreateStoreInput](func(p map[string]*jsonschema.Schema) {
				storeAlias(p["alias"])
				p["description"].MaxLength = ptr(vector.MaxDescriptionChars)
				p["chunk_size"].Minimum, p["chunk_size"].Maximum = ptr(float64(vector.MinChunkSize)), ptr(float64(vector.MaxChunkSize))
				p["chunk_overlap"].Minimum, p["chunk_overlap"].Maximum = ptr(0.0), ptr(float64(vector.MaxChunkSize/2))
			}), storeOut, additive, small, ReadWrite, NoAccess,
			`{"alias":"handbooks","description":"Employee handbooks and HR policies"}`),
		vectorTool("vector_store_get", "vector/store_get", "Describe a vector store",
			"Returns a vector store's description, embedding model and dimensions, chunking settings, document and chunk counts, and manifest version.",
			storeIn, storeOut, readOnly, small, Read, NoAccess, `{"alias":"manuals"}`),
		vectorTool("vector_store_list", "vector/store_list", "List vector stores",
			"Lists your vector stores by alias, a page at a time; pass next_cursor back as cursor to continue.",
			schemaFor[vector.ListStoresInput](func(p map[string]*jsonschema.Schema) { pageLimit(p["limit"]) }),
			schemaFor[vector.ListStoresOutput](nil), readOnly, small, Read, NoAccess, `{}`),
		vectorTool("vector_document_ingest", "vector/document_ingest", "Add a document to a vector store",
			"Adds a document (text, Markdown, PDF or DOCX) to a vector store: given inline as content (text), as content_base64 (binary), or as the key of an object under your tenant's prefix. It is cut into overlapping passages, embedded and written as a new shard. Ingesting the same doc_id again with the same text does nothing (status unchanged); with different text it replaces the old chunks. Uploading to documents/<store>/ in the bucket ingests too.",
			schemaFor[vector.IngestInput](func(p map[string]*jsonschema.Schema) {
				storeAlias(p["store"])
				docID(p["doc_id"])
				p["content"].MaxLength = ptr(vector.MaxInlineBytes)
				p["content_base64"].MaxLength = ptr(vector.MaxInlineBytes/3*4 + 4)
				p["key"].MaxLength = ptr(1024)
				p["file_name"].MaxLength = ptr(vector.MaxDocIDBytes)
				p["format"].Enum = []any{"txt", "md", "pdf", "docx"}
				p["metadata"].MaxProperties = ptr(vector.MaxMetadataKeys)
				p["metadata"].PropertyNames = &jsonschema.Schema{Type: "string", MaxLength: ptr(vector.MaxMetadataKeyBytes)}
				p["metadata"].AdditionalProperties.MaxLength = ptr(vector.MaxMetadataValue)
			}), schemaFor[vector.IngestOutput](nil), replacing,
			Limits{Timeout: 300 * time.Second, MemoryMB: 2048}, ReadWrite, ReadWrite,
			`{"store":"manuals","file_name":"setup.md","content":"# Setup\n\nRun the installer, then sign in with your API key.","metadata":{"product":"switchboard"}}`,
		).withRequestBytes(IngestRequestBytes),
		vectorTool("vector_document_list", "vector/document_list", "List a store's documents",
			"Lists the documents of a vector store by id, with their chunk counts, content hashes, formats, sources and metadata; pass next_cursor back as cursor to continue.",
			schemaFor[vector.ListDocumentsInput](func(p map[string]*jsonschema.Schema) {
				storeAlias(p["store"])
				pageLimit(p["limit"])
			}), schemaFor[vector.ListDocumentsOutput](nil), readOnly, small, Read, NoAccess, `{"store":"manuals"}`),
		vectorTool("vector_document_delete", "vector/document_delete", "Remove a document from a vector store",
			"Removes a document from a vector store: its chunks leave search at once.",
			schemaFor[vector.DeleteDocumentInput](func(p map[string]*jsonschema.Schema) {
				storeAlias(p["store"])
				docID(p["doc_id"])
			}), schemaFor[vector.DeleteDocumentOutput](nil), destructive,
			Limits{Timeout: 60 * time.Second, MemoryMB: 512}, ReadWrite, ReadWrite, `{"store":"manuals","doc_id":"setup.md"}`),
		vectorTool("vector_store_delete", "vector/store_delete", "Delete a vector store",
			"Deletes a vector store with all its documents, shards and manifests. If interrupted, calling it again finishes the job.",
			storeIn, schemaFor[vector.DeleteStoreOutput](nil), destructive,
			Limits{Timeout: 120 * time.Second, MemoryMB: 256}, ReadWrite, ReadWrite, `{"alias":"manuals"}`),
	}
}

const searchGroupFunction = "vector/search_group"

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
		Family:      VectorFamily, Function: searchGroupFunction,
		Input: schemaFor[vector.SearchGroupInput](func(p map[string]*jsonschema.Schema) {
			p["op"].Enum = enum(vector.SearchGroupOps...)
			shard := p["group"].Properties["shards"].Items.Properties
			storeAlias(shard["store"])
			shard["key"].MaxLength = ptr(1024)
			shard["chunks"].Minimum = ptr(0.0)
			q := p["query"].Properties
			q["mode"].Enum = enum(vector.Modes...)
			q["k"].Minimum = ptr(1.0)
			q["nprobe"].Minimum, q["nprobe"].Maximum = ptr(0.0), ptr(float64(retrieval.MaxClusters))
		}),
		Output:      schemaFor[vector.SearchGroupOutput](nil),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		Visibility:  Internal, Limits: searchGroupLimits,
		Blobs: Read, BlobKeys: []string{vector.ShardKeys, vector.CentroidKeys},
		Example: json.RawMessage(`{"op":"search","group":{"shards":[{"store":"manuals","key":"tenants/demo/vector/manuals/shards/0000000000000000.seg","chunks":1}]},"query":{"text":"How do I rotate the API keys?","mode":"bm25","k":5}}`),
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
		Table:       ReadWrite, Blobs: ReadWrite, Embeds: true,
		S3: &S3Events{Events: []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}, Prefix: "tenants/"},
	}}
}
