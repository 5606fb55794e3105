// Package multivector defines the embedders behind late interaction: a text
// in, one vector per token out, as ColBERT models produce. Two backends:
// [NewHashing], per-token vectors of the offline hashing embedder (no model,
// no network), and the remote one in package jina (an HTTP API returning
// per-token vectors).
//
//	e := multivector.NewHashing(multivector.DefaultHashingDims)
//	out, err := e.EmbedTokens(ctx, multivector.Request{Texts: chunks, Purpose: provider.ForDocument})
//	// out.Tokens[i] holds chunk i's token vectors, each of out.Dims unit values
//
// Every embedder bounds what it returns: at most [MaxDocumentTokens] tokens a
// document text ([MaxQueryTokens] a query; later tokens are dropped, as
// ColBERT truncates), at most [MaxBatchTokens] tokens a call.
package multivector

import (
	"context"
	"fmt"
	"math"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Bounds every [Embedder] holds its results to.
const (
	// MaxDocumentTokens is the most tokens a document text keeps (ColBERTv2
	// indexes 180-300; a 1,000-character chunk has about 150 words).
	MaxDocumentTokens = 512
	// MaxQueryTokens is the most tokens a query keeps (ColBERT's query_maxlen).
	MaxQueryTokens = 32
	// MaxBatchTokens is the most tokens one call returns over all its texts:
	// 65,536 tokens of 128 float32 values are 32 MiB.
	MaxBatchTokens = 65536
	// MaxDims is the longest token vector accepted.
	MaxDims = 1024
)

// Request asks for the token vectors of Texts.
type Request struct {
	Texts []string
	// Purpose says whether Texts are queries or documents: ColBERT models
	// encode them differently, and bound them to [MaxQueryTokens] or [MaxDocumentTokens].
	Purpose provider.Purpose
}

// Embeddings are an embedder's answer: Tokens[i][j] is the vector of Texts[i]'s
// token j, of Dims values and unit length. A text may have no tokens. The
// vectors are read-only: an embedder may share one among equal tokens.
type Embeddings struct {
	Tokens   [][][]float32
	Dims     int
	Provider string
	Model    string
}

// Count returns the number of token vectors in e.
func (e Embeddings) Count() int {
	n := 0
	for _, t := range e.Tokens {
		n += len(t)
	}
	return n
}

// Embedder turns texts into per-token vectors. Implementations are safe for
// concurrent use and refuse a call whose answer would pass [MaxBatchTokens].
// A late-interaction index records the provider, model and dimensions it was
// built with, and refuses an embedder that differs.
type Embedder interface {
	EmbedTokens(ctx context.Context, req Request) (Embeddings, error)
	// Provider, Model and Dims name what EmbedTokens produces, without calling it.
	Provider() string
	Model() string
	Dims() int
}

// MaxTokens returns the most tokens a text of purpose p keeps.
func MaxTokens(p provider.Purpose) int {
	if p == provider.ForQuery {
		return MaxQueryTokens
	}
	return MaxDocumentTokens
}

// errTooManyTokens is the error of a call whose answer passes [MaxBatchTokens].
func errTooManyTokens(who string, n int) error {
	return fmt.Errorf("%s: embed tokens: %d tokens in one call, more than %d: send fewer texts", who, n, MaxBatchTokens)
}

// Normalize scales v to unit length in place. It reports false for a vector
// that has no direction (all zero) or holds NaN or infinities, which a
// backend must refuse rather than store.
func Normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return false
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return true
}
