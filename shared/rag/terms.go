package rag

import "github.com/switchboard-dev/switchboard/shared/text"

// terms and tokens analyse text for reranking, confidence and expansion with
// the analyser BM25 indexes with (Lucene's stop words, Porter stemming), so
// "causes" in a passage matches "cause" in a question as retrieval does.
var (
	terms  = text.Terms
	tokens = text.Tokens
)
