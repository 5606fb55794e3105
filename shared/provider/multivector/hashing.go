package multivector

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// DefaultHashingDims is the token vector length of [NewHashing] when none is
// given: ColBERT's 128, which compresses to 34 bytes a token at 2 bits.
const DefaultHashingDims = 128

// HashingModel names the scheme of [NewHashing]'s vectors: the offline
// embedder's, applied to each token alone.
const HashingModel = offline.EmbedderModel + "-tokens"

// hashing embeds each token of a text on its own with the offline hashing
// embedder: its stem and its character n-grams, signed-hashed. A token's
// vector ignores its context (a model's would not), so MaxSim over these
// vectors is a soft lexical match: equal tokens score 1, inflections and
// shared n-grams in between, unrelated words about 0.
type hashing struct {
	e provider.Embedder
}

var _ Embedder = (*hashing)(nil)

// NewHashing returns the offline multi-vector embedder with dims-dimension
// token vectors (if dims <= 0, [DefaultHashingDims]). A text's tokens are
// [text.Tokens] without stop words (a query's without the larger query stop
// list, as BM25 does), in order, repeats kept; each is embedded as
// [offline.NewEmbedder] embeds a one-word text. Results say provider
// "offline", model [HashingModel].
func NewHashing(dims int) Embedder {
	if dims <= 0 {
		dims = DefaultHashingDims
	}
	return &hashing{e: offline.NewEmbedder(dims)}
}

// Provider implements [Embedder].
func (h *hashing) Provider() string { return offline.Name }

// Model implements [Embedder].
func (h *hashing) Model() string { return HashingModel }

// Dims implements [Embedder].
func (h *hashing) Dims() int { return h.e.Dims() }

// EmbedTokens implements [Embedder].
func (h *hashing) EmbedTokens(ctx context.Context, req Request) (Embeddings, error) {
	limit := MaxTokens(req.Purpose)
	stop := text.IsStopWord
	if req.Purpose == provider.ForQuery {
		stop = text.IsQueryStopWord
	}
	tokens := make([][]string, len(req.Texts))
	total := 0
	distinct := map[string]int{}
	var words []string
	for i, s := range req.Texts {
		for _, tok := range text.Tokens(s) {
			if len(tokens[i]) == limit {
				break
			}
			if stop(tok) {
				continue
			}
			tokens[i] = append(tokens[i], tok)
			if _, ok := distinct[tok]; !ok {
				distinct[tok] = len(words)
				words = append(words, tok)
			}
		}
		if total += len(tokens[i]); total > MaxBatchTokens {
			return Embeddings{}, errTooManyTokens(offline.Name, total)
		}
	}
	vecs, err := h.e.Embed(ctx, provider.EmbedRequest{Texts: words, Purpose: req.Purpose})
	if err != nil {
		return Embeddings{}, fmt.Errorf("offline: embed tokens: %w", err)
	}
	out := Embeddings{Tokens: make([][][]float32, len(req.Texts)), Dims: h.Dims(), Provider: offline.Name, Model: HashingModel}
	for i, toks := range tokens {
		m := make([][]float32, 0, len(toks))
		for _, tok := range toks {
			if v := vecs.Vectors[distinct[tok]]; !isZero(v) {
				m = append(m, v)
			}
		}
		out.Tokens[i] = m
	}
	return out, nil
}

// isZero reports whether v is all zeros: a token without features.
func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
