// Package query holds what a search of the vector stores takes and returns
// (a retrieval, a late-interaction search, the community reports of global
// search) and the rules its arguments follow (store aliases, filters, how
// many stores a search names). Package vector serves these searches and
// names the same types; package rag builds and reads them without linking
// the stores' code (retrieval, documents, late interaction), which every
// pipeline tool's bootstrap would otherwise initialise at each cold start
// (issue 11).
//
//	if err := query.ValidateAlias("stores", name); err != nil { ... }
//	out, err := retriever.Retrieve(ctx, caller, query.RetrieveInput{Question: q, Stores: []string{name}})
package query

import (
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/vector/alias"
)

// Limits of a search's arguments.
const (
	// MaxSearchStores bounds the stores one search names.
	MaxSearchStores = 20
	// MaxFilterKeys and MaxFilterValues bound a metadata filter.
	MaxFilterKeys   = 16
	MaxFilterValues = 64
	// MaxRankDepth bounds a ranking of documents (vector.Service.RankDocuments).
	MaxRankDepth = 1000
	// MaxLateK bounds how many chunks a late-interaction search returns.
	MaxLateK = MaxRankDepth
)

// RetrieveInput is the input of optimizer_vs-retriever and vector.Service.Retrieve.
type RetrieveInput struct {
	Question string              `json:"question" jsonschema:"what to search for"`
	Stores   []string            `json:"stores,omitempty" jsonschema:"aliases of the stores to search; omit to let the retriever pick the stores whose description and content best fit the question"`
	TopK     int                 `json:"top_k,omitempty" jsonschema:"how many documents to return (default 5)"`
	Mode     string              `json:"mode,omitempty" jsonschema:"bm25 (keywords), vector (embeddings) or hybrid (both, fused by reciprocal rank; the default)"`
	Filter   map[string][]string `json:"filter,omitempty" jsonschema:"metadata key -> accepted values; a chunk must match every key"`
	NProbe   int                 `json:"nprobe,omitempty" jsonschema:"for stores large enough to have an inverted-file index: how many of its clusters the vector search scans, 1-2048 (default: a sixteenth of them, at least 8); more finds more of the exact nearest chunks, slower"`
	ThreadID string              `json:"thread_id,omitempty" jsonschema:"the thread this search serves: its settings (settings_get) give the stores, top_k and mode this call leaves out; default: your default thread"`
	// EmbeddingModel overrides the configured embedder for this search.
	EmbeddingModel string `json:"embedding_model,omitempty" jsonschema:"the embedding model to search with, among those the server allows (default: the configured one); a store built with another model is refused"`
	// GraphTraversalDepth, when set, fuses the stores' entity graphs into
	// the ranking (rag_graphrag).
	GraphTraversalDepth *int `json:"graph_traversal_depth,omitempty" jsonschema:"set to also rank chunks by the stores' entity graphs: entities the question names, expanded this many relations (0-5), chunks scored by Personalized PageRank and fused with hybrid search by reciprocal rank (each document's score is then its rrf_score); mode must be hybrid"`
}

// Document is one retrieved chunk.
type Document struct {
	DocID    string            `json:"doc_id"`
	ChunkID  string            `json:"chunk_id"`
	Content  string            `json:"content"`
	Score    float64           `json:"score"`
	Metadata map[string]string `json:"metadata"`
	Store    string            `json:"store" jsonschema:"alias of the store it came from"`
}

// RetrieveOutput is the output of optimizer_vs-retriever and vector.Service.Retrieve.
type RetrieveOutput struct {
	Documents      []Document   `json:"documents" jsonschema:"best first"`
	SearchedStores []string     `json:"searched_stores" jsonschema:"aliases of the stores searched"`
	ContextInput   string       `json:"context_input" jsonschema:"the question used for the search"`
	Mode           string       `json:"mode"`
	Provider       string       `json:"provider" jsonschema:"the embedding provider used for the question; empty when no embedding was needed (mode bm25)"`
	Model          string       `json:"model" jsonschema:"the embedding model used; empty in mode bm25"`
	Graph          *GraphSearch `json:"graph,omitempty" jsonschema:"what the entity graph contributed, when graph_traversal_depth was set"`
	// Selection says how the stores were chosen when the search named none.
	Selection *StoreSelection `json:"store_selection,omitempty" jsonschema:"how the stores searched were chosen, when the search named none"`
}

// GraphSearch describes the graph's part of a retrieval with
// graph_traversal_depth ([RetrieveInput.GraphTraversalDepth]).
type GraphSearch struct {
	EntitiesMatched []string `json:"entities_matched" jsonschema:"names of the entities of the stores' graphs that the question names, the seeds of the walk"`
	Depth           int      `json:"graph_traversal_depth" jsonschema:"how many relations from the matched entities the walk went"`
	EntitiesReached int      `json:"entities_reached" jsonschema:"entities the walk reached"`
	GraphChunks     int      `json:"graph_chunks" jsonschema:"chunks the graph ranked (Personalized PageRank)"`
	GraphOnly       int      `json:"graph_only_documents" jsonschema:"returned documents that only the graph found, not hybrid search"`
	// ExtractionFallbacks counts the chunks of the graphs' documents whose
	// entities the configured generator failed to extract.
	ExtractionFallbacks int `json:"extraction_fallback_chunks" jsonschema:"chunks of the searched graphs whose entities were extracted offline because the configured generator's extraction failed or was refused"`
}

// ReportsInput is the input of vector.Service.CommunityReports.
type ReportsInput struct {
	Question string
	// Stores are the stores to read; if empty, store selection picks them
	// for Question, as for a retrieval.
	Stores []string
	// EmbeddingModel, if set, picks the stores built with that embedding
	// model (among those the server allows) instead of the configured one's.
	EmbeddingModel string
}

// StoreReports are one store's community reports.
type StoreReports struct {
	Store   string
	Reports []graph.Report
	// Version is the manifest version they were built from; Behind how many
	// versions the store has moved on since (0: current).
	Version, Behind int64
	// Built is true when this call built them.
	Built bool
}

// The candidate sources of a late-interaction search.
const (
	// LateFromCentroids finds candidates by PLAID's centroid pruning over
	// the whole store.
	LateFromCentroids = "centroid"
	// LateFromHybrid reranks candidates another search found (the hybrid top-k).
	LateFromHybrid = "hybrid"
)

// LateInput asks for a late-interaction search.
type LateInput struct {
	// Question is what to search for.
	Question string
	// Stores are the stores to search (the ones the pipeline's retrieval
	// searched); at least one.
	Stores []string
	// Candidates, if set, are the chunks to rerank (LateFromHybrid); if
	// empty, candidates come from centroid pruning (LateFromCentroids).
	Candidates []LateCandidate
	// K is how many chunks to return, 1..[MaxLateK].
	K int
	// Filter keeps only chunks whose metadata matches it.
	Filter map[string][]string
	// Threshold is seed 002's interaction_threshold, 0..1 (0: plain MaxSim).
	Threshold float64
}

// LateCandidate names one chunk to rerank.
type LateCandidate struct {
	Store, ChunkID string
}

// LateHit is one chunk a late-interaction search found, with its MaxSim score.
type LateHit struct {
	Store    string
	ChunkID  string
	DocID    string
	Content  string
	Metadata map[string]string
	Score    float64
}

// LateOutput is a late-interaction search's answer.
type LateOutput struct {
	// Hits are the best chunks, best first.
	Hits []LateHit
	// Source is LateFromCentroids or LateFromHybrid.
	Source string
	// Candidates is how many chunks were scored exactly, TokenInteractions
	// how many query-token × chunk-token similarities that took.
	Candidates        int
	TokenInteractions int64
	// CompressionRatio is float32 token vectors' size over their compressed
	// size (0 when no store held tokens).
	CompressionRatio float64
	// Provider, Model and Dims name the multi-vector embedder.
	Provider, Model string
	Dims            int
	// IndexBytes and Tokens are the memory and token vectors of the searched stores' indexes.
	IndexBytes int64
	Tokens     int64
}

// AliasPattern is what a store alias must match ([alias.Pattern]).
const AliasPattern = alias.Pattern

// ValidateAlias checks a store alias against [AliasPattern]; field names the
// argument it came from.
func ValidateAlias(field, name string) error {
	if !alias.Valid(name) {
		return fault.Invalid(field, "%q is not a store alias: use 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// ValidateFilter checks a metadata filter against [MaxFilterKeys] and
// [MaxFilterValues]: every key named, with 1 to MaxFilterValues accepted
// values. field names the argument it came from.
func ValidateFilter(field string, f map[string][]string) error {
	if len(f) > MaxFilterKeys {
		return fault.Invalid(field, "has %d keys, more than %d", len(f), MaxFilterKeys)
	}
	for k, vs := range f {
		if k == "" || len(vs) == 0 || len(vs) > MaxFilterValues {
			if r := []rune(k); len(r) > 60 {
				k = string(r[:60]) + "…"
			}
			return fault.Invalid(field, "key %q needs a name and 1-%d accepted values", k, MaxFilterValues)
		}
	}
	return nil
}

// StoreSelection says how a search that named no stores chose them.
type StoreSelection struct {
	By       string   `json:"by" jsonschema:"model: the generator chose them (prompt optimizer_vs-table-selection); score: the stores whose description and content best fit the question"`
	Provider string   `json:"provider,omitempty" jsonschema:"the generator that chose, or answered before the score chose"`
	Model    string   `json:"model,omitempty"`
	Fallback string   `json:"fallback,omitempty" jsonschema:"why the model's choice was not used, when the model was asked and the score chose instead"`
	Ignored  []string `json:"ignored,omitempty" jsonschema:"names in the model's reply that are not stores it could choose, ignored"`
}
