package rag

import "github.com/switchboard-dev/switchboard/shared/text"

// terms analyses text for reranking and expansion with the analyser BM25
// indexes with (Lucene's stop words, Porter stemming), so "causes" in a
// passage matches "cause" in a question as retrieval does.
var terms = text.Terms
