package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Defaults of [EmbedderOptions].
const (
	// DefaultEmbeddingModel is Amazon Titan Text Embeddings V2.
	DefaultEmbeddingModel = "amazon.titan-embed-text-v2:0"
	// DefaultDims is Titan V2's own default vector length.
	DefaultDims = 1024
	// DefaultConcurrency is how many InvokeModel calls are in flight at once
	// by default: Titan embeds one text per call, so a batch of chunks is a
	// burst of calls, kept below the account's default requests-per-minute quota.
	DefaultConcurrency = 8
)

// EmbedderOptions configure an [Embedder]. A nil *EmbedderOptions is the zero value.
type EmbedderOptions struct {
	// Model is the model id, or the ARN of a provisioned model or inference
	// profile serving it. It must take Titan Text Embeddings V2's request
	// body. If empty, [DefaultEmbeddingModel].
	Model string
	// Dims is the vector length: 256, 512 or 1024. If zero, [DefaultDims].
	Dims int
	// Concurrency is how many calls are in flight at once. If zero, [DefaultConcurrency].
	Concurrency int
}

var _ provider.Embedder = (*Embedder)(nil)

// Embedder embeds texts with Titan Text Embeddings V2, one InvokeModel call
// per text, asking for normalised vectors of Dims values. It is safe for
// concurrent use.
type Embedder struct {
	rt          Runtime
	model       string
	dims        int
	concurrency int
}

// NewEmbedder returns an embedder calling rt. It does no I/O.
func NewEmbedder(rt Runtime, opts *EmbedderOptions) (*Embedder, error) {
	if rt == nil {
		return nil, fmt.Errorf("bedrock: embedder needs a Bedrock Runtime client")
	}
	if opts == nil {
		opts = &EmbedderOptions{}
	}
	e := &Embedder{rt: rt, model: opts.Model, dims: opts.Dims, concurrency: opts.Concurrency}
	if e.model == "" {
		e.model = DefaultEmbeddingModel
	}
	if e.dims == 0 {
		e.dims = DefaultDims
	}
	if e.dims != 256 && e.dims != 512 && e.dims != 1024 {
		return nil, fmt.Errorf("bedrock: Titan Text Embeddings V2 makes vectors of 256, 512 or 1024 dimensions, not %d", e.dims)
	}
	if e.concurrency <= 0 {
		e.concurrency = DefaultConcurrency
	}
	return e, nil
}

// Provider implements [provider.Embedder]: "bedrock".
func (e *Embedder) Provider() string { return Name }

// Model implements [provider.Embedder].
func (e *Embedder) Model() string { return e.model }

// Dims implements [provider.Embedder].
func (e *Embedder) Dims() int { return e.dims }

// titanRequest is Titan Text Embeddings V2's InvokeModel body.
type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	Normalize  bool   `json:"normalize"`
}

// titanResponse is its answer.
type titanResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

// Embed implements [provider.Embedder]. Vectors come back in the order of
// the texts. Purpose is ignored: Titan embeds queries and documents alike.
// Empty texts are refused, as Bedrock refuses them. The first failing call
// cancels the others and its error is returned.
func (e *Embedder) Embed(ctx context.Context, req provider.EmbedRequest) (provider.Embeddings, error) {
	for i, t := range req.Texts {
		if strings.TrimSpace(t) == "" {
			return provider.Embeddings{}, fmt.Errorf("bedrock: embed: text %d is empty", i)
		}
	}
	out := provider.Embeddings{Vectors: make([][]float32, len(req.Texts)), Dims: e.dims, Provider: Name, Model: e.model}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.concurrency)
	for i, text := range req.Texts {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() (err error) {
			out.Vectors[i], err = e.embed(gctx, text)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return provider.Embeddings{}, err
	}
	if err := ctx.Err(); err != nil {
		return provider.Embeddings{}, fmt.Errorf("bedrock: embed: %w", err)
	}
	return out, nil
}

// embed embeds one text.
func (e *Embedder) embed(ctx context.Context, text string) ([]float32, error) {
	body, err := json.Marshal(titanRequest{InputText: text, Dimensions: e.dims, Normalize: true})
	if err != nil {
		return nil, fmt.Errorf("bedrock: encoding request: %w", err)
	}
	resp, err := e.rt.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(e.model),
		Body:        body,
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
	})
	if err != nil {
		return nil, classify(err, "invoke model", e.model)
	}
	var r titanResponse
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		return nil, fmt.Errorf("bedrock: invoke model %s: decoding response: %w", e.model, err)
	}
	if len(r.Embedding) != e.dims {
		return nil, fmt.Errorf("bedrock: invoke model %s: returned %d dimensions, want %d", e.model, len(r.Embedding), e.dims)
	}
	if !normalize(r.Embedding) {
		return nil, fmt.Errorf("bedrock: invoke model %s: returned a zero or non-finite vector", e.model)
	}
	return r.Embedding, nil
}

// normalize scales v to unit length in place unless it is within rounding of
// it already (Titan normalises when asked; this guards models that do not).
// It reports false for an all-zero vector or one holding NaN or infinities.
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
