package openai

import (
	"context"
	"fmt"
	"math"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Defaults and bounds of [EmbedderOptions].
const (
	// DefaultBatchSize is how many texts one request carries by default: small
	// enough for compatible servers with low limits (96 is common), large
	// enough to amortise round trips.
	DefaultBatchSize = 96
	// MaxBatchSize is OpenAI's limit on inputs per /v1/embeddings request.
	MaxBatchSize = 2048
	// DefaultConcurrency is how many batch requests are in flight at once by default.
	DefaultConcurrency = 4
)

// KnownDims are the native vector lengths of OpenAI's embedding models, used
// when [EmbedderOptions].Dims is zero.
var KnownDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

// shortenable are the models that accept the request's "dimensions" field.
var shortenable = map[string]bool{"text-embedding-3-small": true, "text-embedding-3-large": true}

// EmbedderOptions configure an [Embedder]. A nil *EmbedderOptions is the zero value.
type EmbedderOptions struct {
	// Dims is the length of the vectors. If zero, the model's [KnownDims];
	// required for other models. For the text-embedding-3 models a Dims
	// below the native length is sent as the request's "dimensions" field
	// (they return shortened vectors); other servers are never sent the
	// field, since many reject it, and must return Dims values.
	Dims int
	// BatchSize is how many texts one request carries. If zero,
	// [DefaultBatchSize]; at most [MaxBatchSize].
	BatchSize int
	// Concurrency is how many requests are in flight at once. If zero, [DefaultConcurrency].
	Concurrency int
}

var _ provider.Embedder = (*Embedder)(nil)

// Embedder embeds texts through POST {base}/v1/embeddings. It is safe for concurrent use.
type Embedder struct {
	c           *Client
	model       string
	dims        int
	sendDims    bool
	batch       int
	concurrency int
}

// NewEmbedder returns an embedder of model through c. It does no I/O.
func NewEmbedder(c *Client, model string, opts *EmbedderOptions) (*Embedder, error) {
	if c == nil {
		return nil, fmt.Errorf("openai: embedder needs a client")
	}
	if strings.TrimSpace(model) == "" {
		return nil, fmt.Errorf("openai: embedder needs a model name")
	}
	if opts == nil {
		opts = &EmbedderOptions{}
	}
	e := &Embedder{c: c, model: model, dims: opts.Dims, batch: opts.BatchSize, concurrency: opts.Concurrency}
	native, known := KnownDims[model]
	switch {
	case e.dims < 0:
		return nil, fmt.Errorf("openai: embedder dimensions %d is negative", e.dims)
	case e.dims == 0 && !known:
		return nil, fmt.Errorf("openai: the vector length of model %q is not known: set its dimensions", model)
	case e.dims == 0:
		e.dims = native
	case known && e.dims > native:
		return nil, fmt.Errorf("openai: model %q returns at most %d dimensions, not %d", model, native, e.dims)
	case known && e.dims < native && !shortenable[model]:
		return nil, fmt.Errorf("openai: model %q returns %d dimensions and cannot shorten them to %d", model, native, e.dims)
	}
	e.sendDims = shortenable[model] && e.dims != native
	if e.batch <= 0 {
		e.batch = DefaultBatchSize
	}
	if e.batch > MaxBatchSize {
		return nil, fmt.Errorf("openai: batch size %d is above the API's limit of %d", e.batch, MaxBatchSize)
	}
	if e.concurrency <= 0 {
		e.concurrency = DefaultConcurrency
	}
	return e, nil
}

// Provider implements [provider.Embedder]: "openai".
func (e *Embedder) Provider() string { return Name }

// Model implements [provider.Embedder].
func (e *Embedder) Model() string { return e.model }

// Dims implements [provider.Embedder].
func (e *Embedder) Dims() int { return e.dims }

type embeddingRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// Embed implements [provider.Embedder]. Texts go out in batches of
// BatchSize, several at once; the vectors come back in the order of the
// texts (the API's "index" says which input each answers), scaled to unit
// length. Purpose is ignored: these models embed queries and documents alike.
// Empty texts are refused, as the API refuses them.
func (e *Embedder) Embed(ctx context.Context, req provider.EmbedRequest) (provider.Embeddings, error) {
	out := provider.Embeddings{Vectors: make([][]float32, len(req.Texts)), Dims: e.dims, Provider: Name, Model: e.model}
	for i, t := range req.Texts {
		if strings.TrimSpace(t) == "" {
			return provider.Embeddings{}, fmt.Errorf("openai: embed: text %d is empty", i)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.concurrency)
	for start := 0; start < len(req.Texts) && gctx.Err() == nil; start += e.batch {
		end := min(start+e.batch, len(req.Texts))
		g.Go(func() error { return e.embedBatch(gctx, req.Texts[start:end], out.Vectors[start:end]) })
	}
	if err := g.Wait(); err != nil {
		return provider.Embeddings{}, err
	}
	if err := ctx.Err(); err != nil {
		return provider.Embeddings{}, fmt.Errorf("openai: embed: %w", err)
	}
	return out, nil
}

// embedBatch embeds texts into vecs (of the same length).
func (e *Embedder) embedBatch(ctx context.Context, texts []string, vecs [][]float32) error {
	in := embeddingRequest{Model: e.model, Input: texts}
	if e.sendDims {
		in.Dimensions = e.dims
	}
	var resp embeddingResponse
	if err := e.c.post(ctx, "/v1/embeddings", in, &resp); err != nil {
		return err
	}
	if len(resp.Data) != len(texts) {
		return fmt.Errorf("openai: /v1/embeddings: model %s returned %d embeddings for %d texts", e.model, len(resp.Data), len(texts))
	}
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return fmt.Errorf("openai: /v1/embeddings: model %s returned embedding index %d twice or out of range 0..%d", e.model, d.Index, len(texts)-1)
		}
		if len(d.Embedding) != e.dims {
			return fmt.Errorf("openai: /v1/embeddings: model %s returned %d dimensions, want %d", e.model, len(d.Embedding), e.dims)
		}
		if !normalize(d.Embedding) {
			return fmt.Errorf("openai: /v1/embeddings: model %s returned a zero or non-finite vector for text %d", e.model, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	return nil
}

// normalize scales v to unit length in place unless it is within rounding of
// it already. It reports false for a vector that has no direction (all zero)
// or holds NaN or infinities.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return false
	}
	if math.Abs(norm-1) > 1e-4 {
		for i := range v {
			v[i] = float32(float64(v[i]) / norm)
		}
	}
	return true
}
