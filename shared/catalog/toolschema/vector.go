package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func storeAlias(s *jsonschema.Schema) {
	s.Pattern, s.MaxLength = vector.AliasPattern, ptr(64)
}

func docID(s *jsonschema.Schema) {
	s.MinLength, s.MaxLength = ptr(1), ptr(vector.MaxDocIDBytes)
}

func pageLimit(s *jsonschema.Schema) {
	s.Minimum, s.Maximum = ptr(1.0), ptr(float64(vector.MaxListLimit))
}

// vectorSchemas returns the schemas of the vector family's tools.
func vectorSchemas() map[string]pair {
	storeIn := schemaFor[vector.StoreInput](func(p map[string]*jsonschema.Schema) { storeAlias(p["alias"]) })
	storeOut := schemaFor[vector.Store](nil)
	return map[string]pair{
		"optimizer_vs-retriever": {schemaFor[vector.RetrieveInput](func(p map[string]*jsonschema.Schema) {
			p["question"].MinLength, p["question"].MaxLength = ptr(1), ptr(vector.MaxQuestionChars)
			p["stores"].MaxItems = ptr(vector.MaxSearchStores)
			storeAlias(p["stores"].Items)
			p["top_k"].Minimum, p["top_k"].Maximum = ptr(1.0), ptr(float64(vector.MaxTopK))
			p["nprobe"].Minimum, p["nprobe"].Maximum = ptr(1.0), ptr(float64(retrieval.MaxClusters))
			p["mode"].Enum = []any{"bm25", "vector", "hybrid"}
			p["filter"].MaxProperties = ptr(vector.MaxFilterKeys)
			p["filter"].AdditionalProperties.MaxItems = ptr(vector.MaxFilterValues)
			p["thread_id"].MaxLength = ptr(128)
			p["graph_traversal_depth"].Minimum, p["graph_traversal_depth"].Maximum = ptr(0.0), ptr(float64(graph.MaxDepth))
		}), schemaFor[vector.RetrieveOutput](nil)},
		"vector_embed_texts": {schemaFor[provider.TextsInput](func(p map[string]*jsonschema.Schema) {
			p["texts"].MinItems, p["texts"].MaxItems = ptr(1), ptr(provider.MaxEmbedTexts)
			p["texts"].Items.MinLength, p["texts"].Items.MaxLength = ptr(1), ptr(provider.MaxEmbedTextBytes)
			p["purpose"].Enum = enum(string(provider.ForQuery), string(provider.ForDocument))
		}), schemaFor[provider.TextsOutput](nil)},
		"optimizer_vs-search-group": {schemaFor[vector.SearchGroupInput](func(p map[string]*jsonschema.Schema) {
			p["op"].Enum = enum(vector.SearchGroupOps...)
			shard := p["group"].Properties["shards"].Items.Properties
			storeAlias(shard["store"])
			shard["key"].MaxLength = ptr(1024)
			shard["chunks"].Minimum = ptr(0.0)
			q := p["query"].Properties
			q["mode"].Enum = enum(vector.Modes...)
			q["k"].Minimum = ptr(1.0)
			q["nprobe"].Minimum, q["nprobe"].Maximum = ptr(0.0), ptr(float64(retrieval.MaxClusters))
		}), schemaFor[vector.SearchGroupOutput](nil)},
		"optimizer_vs-storage": {schemaFor[vector.StorageInput](func(p map[string]*jsonschema.Schema) { p["thread_id"].MaxLength = ptr(128) }),
			schemaFor[vector.StorageOutput](nil)},
		"vector_store_create": {schemaFor[vector.CreateStoreInput](func(p map[string]*jsonschema.Schema) {
			storeAlias(p["alias"])
			p["description"].MaxLength = ptr(vector.MaxDescriptionChars)
			p["chunk_size"].Minimum, p["chunk_size"].Maximum = ptr(float64(vector.MinChunkSize)), ptr(float64(vector.MaxChunkSize))
			p["chunk_overlap"].Minimum, p["chunk_overlap"].Maximum = ptr(0.0), ptr(float64(vector.MaxChunkSize/2))
		}), storeOut},
		"vector_store_get": {storeIn, storeOut},
		"vector_store_list": {schemaFor[vector.ListStoresInput](func(p map[string]*jsonschema.Schema) { pageLimit(p["limit"]) }),
			schemaFor[vector.ListStoresOutput](nil)},
		"vector_document_ingest": {schemaFor[vector.IngestInput](func(p map[string]*jsonschema.Schema) {
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
		}), schemaFor[vector.IngestOutput](nil)},
		"vector_document_list": {schemaFor[vector.ListDocumentsInput](func(p map[string]*jsonschema.Schema) {
			storeAlias(p["store"])
			pageLimit(p["limit"])
		}), schemaFor[vector.ListDocumentsOutput](nil)},
		"vector_document_delete": {schemaFor[vector.DeleteDocumentInput](func(p map[string]*jsonschema.Schema) {
			storeAlias(p["store"])
			docID(p["doc_id"])
		}), schemaFor[vector.DeleteDocumentOutput](nil)},
		"vector_store_delete": {storeIn, schemaFor[vector.DeleteStoreOutput](nil)},
	}
}
