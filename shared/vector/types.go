package vector

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// Store describes a vector store, as the store tools return it.
type Store struct {
	Alias       string `json:"alias" jsonschema:"the store's name, unique in your tenant"`
	Description string `json:"description" jsonschema:"what the store holds; the retriever matches questions against it when no store is named"`
	// Embedder is fixed when the store is created: every ingest and query must
	// use the same provider, model and dimensions.
	Provider     string    `json:"provider" jsonschema:"the embedding provider the store was built with"`
	Model        string    `json:"model" jsonschema:"the embedding model the store was built with"`
	Dims         int       `json:"dims" jsonschema:"the embedding dimensions"`
	ChunkSize    int       `json:"chunk_size" jsonschema:"passage length in characters"`
	ChunkOverlap int       `json:"chunk_overlap" jsonschema:"characters consecutive passages share"`
	Documents    int64     `json:"documents" jsonschema:"documents in the store"`
	Chunks       int64     `json:"chunks" jsonschema:"searchable chunks (passages) in the store"`
	Shards       int       `json:"shards" jsonschema:"shard objects the store's manifest lists"`
	Version      int64     `json:"version" jsonschema:"the manifest version: bumped by every ingest, delete and compaction"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// CreateStoreInput is the input of vector_store_create.
type CreateStoreInput struct {
	Alias        string `json:"alias" jsonschema:"the new store's name: 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit"`
	Description  string `json:"description,omitempty" jsonschema:"what the store holds, in a sentence or two; used to pick stores for a question"`
	ChunkSize    int    `json:"chunk_size,omitempty" jsonschema:"passage length in characters (default 1500)"`
	ChunkOverlap int    `json:"chunk_overlap,omitempty" jsonschema:"characters consecutive passages share (default 200)"`
}

// StoreInput names a store; it is the whole input of several tools.
type StoreInput struct {
	Alias string `json:"alias" jsonschema:"the store's name"`
}

// ListStoresInput is the input of vector_store_list.
type ListStoresInput struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size (default 100)"`
}

// ListStoresOutput is the output of vector_store_list.
type ListStoresOutput struct {
	Stores     []Store `json:"stores"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"set when more stores remain; pass it back as cursor"`
}

// DeleteStoreOutput is the output of vector_store_delete.
type DeleteStoreOutput struct {
	Status    string `json:"status" jsonschema:"deleted"`
	Alias     string `json:"alias"`
	Documents int    `json:"removed_documents" jsonschema:"document records removed"`
	Objects   int    `json:"removed_objects" jsonschema:"shard, graph, report and manifest objects removed"`
}

// IngestInput is the input of vector_document_ingest. Exactly one of
// Content, ContentBase64 and Key gives the document.
type IngestInput struct {
	Store         string            `json:"store" jsonschema:"the store to add the document to"`
	DocID         string            `json:"doc_id,omitempty" jsonschema:"the document's id in the store (default: the file name, or the key's part after documents/<store>/); ingesting an id again replaces that document"`
	Content       string            `json:"content,omitempty" jsonschema:"the document as text or Markdown"`
	ContentBase64 string            `json:"content_base64,omitempty" jsonschema:"the document's bytes in base64, for PDF or DOCX"`
	Key           string            `json:"key,omitempty" jsonschema:"an object key under your tenant (tenants/<tenant>/...) holding the document"`
	FileName      string            `json:"file_name,omitempty" jsonschema:"the file name; its extension gives the format (.txt, .md, .pdf, .docx)"`
	Format        string            `json:"format,omitempty" jsonschema:"the format when no file name says it: txt, md, pdf or docx"`
	Metadata      map[string]string `json:"metadata,omitempty" jsonschema:"string attributes stored with every chunk, for filters"`
}

// IngestOutput is the output of vector_document_ingest.
type IngestOutput struct {
	Store  string `json:"store"`
	DocID  string `json:"doc_id"`
	Status string `json:"status" jsonschema:"added, replaced, or unchanged (same content as stored: nothing was done)"`
	// Chunks is the document's chunk count now; Removed how many chunks of the
	// previous version left search.
	Chunks      int    `json:"chunks" jsonschema:"chunks the document has in the store"`
	Removed     int    `json:"removed_chunks" jsonschema:"chunks of the previous version removed from search"`
	ContentHash string `json:"content_hash" jsonschema:"hash of the extracted text; re-ingesting the same text is skipped"`
	Format      string `json:"format" jsonschema:"the format the document was read as"`
	Title       string `json:"title,omitempty"`
	Provider    string `json:"provider" jsonschema:"the embedding provider used"`
	Model       string `json:"model" jsonschema:"the embedding model used"`
	Dims        int    `json:"dims"`
	// GraphFallbacks counts the chunks whose entities the configured
	// generator failed to extract (a refused reply, an error), extracted
	// offline instead.
	GraphFallbacks int `json:"graph_fallback_chunks,omitempty" jsonschema:"chunks whose entity graph was extracted offline because the configured generator's extraction failed or was refused"`
}

// DocumentInfo describes a stored document (not its chunks).
type DocumentInfo struct {
	DocID       string            `json:"doc_id"`
	Chunks      int               `json:"chunks"`
	ContentHash string            `json:"content_hash"`
	Format      string            `json:"format"`
	Title       string            `json:"title,omitempty"`
	Source      string            `json:"source,omitempty" jsonschema:"the file name or object key it came from"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	IngestedAt  time.Time         `json:"ingested_at"`
}

// ListDocumentsInput is the input of vector_document_list.
type ListDocumentsInput struct {
	Store  string `json:"store" jsonschema:"the store to list"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size (default 100)"`
}

// ListDocumentsOutput is the output of vector_document_list.
type ListDocumentsOutput struct {
	Store      string         `json:"store"`
	Documents  []DocumentInfo `json:"documents"`
	NextCursor string         `json:"next_cursor,omitempty" jsonschema:"set when more documents remain; pass it back as cursor"`
}

// DeleteDocumentInput is the input of vector_document_delete.
type DeleteDocumentInput struct {
	Store string `json:"store" jsonschema:"the store holding the document"`
	DocID string `json:"doc_id" jsonschema:"the document to remove"`
}

// DeleteDocumentOutput is the output of vector_document_delete.
type DeleteDocumentOutput struct {
	Status  string `json:"status" jsonschema:"deleted"`
	Store   string `json:"store"`
	DocID   string `json:"doc_id"`
	Removed int    `json:"removed_chunks" jsonschema:"chunks removed from search"`
}

// RetrieveInput is [query.RetrieveInput].
type RetrieveInput = query.RetrieveInput

// Document is [query.Document].
type Document = query.Document

// RetrieveOutput is [query.RetrieveOutput].
type RetrieveOutput = query.RetrieveOutput

// StorageInput is the input of optimizer_vs-storage.
type StorageInput struct {
	ThreadID string `json:"thread_id,omitempty" jsonschema:"the conversation asking; accepted and ignored"`
}

// StorageStore is one store as optimizer_vs-storage lists it.
type StorageStore struct {
	Alias       string `json:"alias"`
	Description string `json:"description"`
	Model       string `json:"model" jsonschema:"the embedding model"`
	Provider    string `json:"provider"`
	Dims        int    `json:"dims"`
	Documents   int64  `json:"documents"`
	Chunks      int64  `json:"chunks"`
}

// HiddenStore is a store optimizer_vs-storage does not offer, and why.
type HiddenStore struct {
	Alias  string `json:"alias"`
	Model  string `json:"model"`
	Reason string `json:"reason"`
}

// StorageOutput is the output of optimizer_vs-storage.
type StorageOutput struct {
	Stores []StorageStore `json:"stores" jsonschema:"the stores a search can use"`
	Hidden []HiddenStore  `json:"hidden,omitempty" jsonschema:"stores built with an embedding model other than the configured one; searching them is refused"`
}
