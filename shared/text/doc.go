// Package text holds the language plumbing shared by search, ingestion and
// matching: tokenizing, English stop words and the Porter stemmer (this file's
// siblings analyze.go and stem.go), passage splitting and hashing, and the
// general-English term weights offline relevance judgements use (idf.go).
//
// The analyzer mirrors the one BEIR baselines are measured with (Anserini's
// default English analyzer: tokenize, lowercase, drop Lucene's 33 English stop
// words, Porter-stem), so BM25 scores here are comparable to published ones:
//
//	text.Terms("The mice were running")   // ["mice", "were", "run"]
//	text.Tokens("IL-6 levels, in 2019")   // ["il", "6", "levels", "in", "2019"]
//	text.Stem("generalizations")          // "gener"
package text
