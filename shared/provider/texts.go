package provider

import (
	"cmp"
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The bounds of one call of vector_embed_texts ([Texts.Embed]): enough for a
// catalog's tools in a few calls, and small enough that a batch's vectors
// fit a function's answer (64 texts of 1024 dimensions are about 1.3 MB of
// JSON, under Lambda's 6 MB).
const (
	MaxEmbedTexts     = 64
	MaxEmbedTextBytes = 8192
)

// TextsInput is what vector_embed_texts embeds.
type TextsInput struct {
	Texts   []string `json:"texts" jsonschema:"the texts to embed, one vector each"`
	Purpose Purpose  `json:"purpose,omitempty" jsonschema:"query or document (default)"`
}

// TextsOutput is its answer: Vectors[i] embeds Texts[i].
type TextsOutput struct {
	Provider string      `json:"provider"`
	Model    string      `json:"model"`
	Vectors  [][]float32 `json:"vectors"`
}

// Texts embeds bounded batches of texts with Embedder, for a caller that
// links no provider's client: the deployed gateway's tool_search, through
// the internal tool vector_embed_texts.
type Texts struct{ Embedder Embedder }

// Embed embeds in.Texts (1 to [MaxEmbedTexts], each 1 to
// [MaxEmbedTextBytes] bytes); the embedder batches them as it does any
// request.
func (t Texts) Embed(ctx context.Context, _ tenant.Caller, in TextsInput) (TextsOutput, error) {
	switch {
	case len(in.Texts) == 0:
		return TextsOutput{}, fault.Invalid("texts", "give at least one text")
	case len(in.Texts) > MaxEmbedTexts:
		return TextsOutput{}, fault.Invalid("texts", "%d texts, at most %d a call", len(in.Texts), MaxEmbedTexts)
	case in.Purpose != "" && in.Purpose != ForQuery && in.Purpose != ForDocument:
		return TextsOutput{}, fault.Invalid("purpose", "%q, query or document", in.Purpose)
	}
	for i, s := range in.Texts {
		if s == "" || len(s) > MaxEmbedTextBytes {
			return TextsOutput{}, fault.Invalid(fmt.Sprintf("texts[%d]", i), "%d bytes, from 1 to %d", len(s), MaxEmbedTextBytes)
		}
	}
	if t.Embedder == nil {
		return TextsOutput{}, fault.Unavailable(nil, "no embedder is configured")
	}
	e, err := t.Embedder.Embed(ctx, EmbedRequest{Texts: in.Texts, Purpose: cmp.Or(in.Purpose, ForDocument)})
	if err != nil {
		return TextsOutput{}, fmt.Errorf("embed texts: %w", err)
	}
	if len(e.Vectors) != len(in.Texts) {
		return TextsOutput{}, fmt.Errorf("embed texts: %d vectors for %d texts", len(e.Vectors), len(in.Texts))
	}
	return TextsOutput{Provider: e.Provider, Model: e.Model, Vectors: e.Vectors}, nil
}
