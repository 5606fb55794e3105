// Package jina is the remote multi-vector embedder: POST /v1/multi-vector of
// Jina AI's Search Foundation API (https://api.jina.ai/openapi.json,
// operation Multivector_generateVectorRepresentations), which returns one
// vector per token of each input, as its ColBERT models (jina-colbert-v2)
// compute them. Any server speaking that wire format works: the base URL is
// configurable.
//
//	e, err := jina.NewEmbedder("https://api.jina.ai", key, "jina-colbert-v2", nil)
//	out, err := e.EmbedTokens(ctx, multivector.Request{Texts: chunks, Purpose: provider.ForDocument})
//
// The request is {"model", "input": [texts], "input_type": "query" or
// "document", "embedding_type": "float", "dimensions"}; the answer is
// {"model", "data": [{"index", "embeddings": [[token vector], ...]}],
// "usage": {"total_tokens"}}. An error answer carries FastAPI's {"detail"}.
// Calls are not retried: a 429 or 5xx answer is a [fault.Unavailable], so the
// pipeline falls back at once rather than spend its deadline waiting.
package jina

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
)

// Name is the provider name results carry.
const Name = "jina"

// path is the endpoint called.
const path = "/v1/multi-vector"

// Defaults and bounds of [Options].
const (
	DefaultTimeout = 30 * time.Second
	// DefaultBatchSize is how many texts one request carries.
	DefaultBatchSize = 16
	// MaxBatchSize bounds BatchSize so one answer stays within [maxResponseBytes].
	MaxBatchSize = 64
)

// maxResponseBytes bounds a response body: 64 texts of 512 tokens of 128
// values, written as JSON (about 12 bytes a value), take about 50 MB.
const maxResponseBytes = 64 << 20

// KnownDims are the token vector lengths of Jina's ColBERT models, used when
// [Options].Dims is zero.
var KnownDims = map[string]int{"jina-colbert-v2": 128, "jina-colbert-v1-en": 128}

// Options configure an [Embedder]. A nil *Options is the zero value.
type Options struct {
	// HTTPClient sends the requests. If nil, a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one request (the context bounds the call). If zero,
	// [DefaultTimeout]. Ignored when HTTPClient is set.
	Timeout time.Duration
	// Dims is the token vector length, sent as "dimensions". If zero, the
	// model's [KnownDims]; required for other models.
	Dims int
	// BatchSize is how many texts one request carries. If zero,
	// [DefaultBatchSize]; at most [MaxBatchSize].
	BatchSize int
}

// Embedder embeds texts into token vectors through the API. It is safe for concurrent use.
type Embedder struct {
	base, key, model string
	dims, batch      int
	http             *http.Client
}

var _ multivector.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder of model through the API at baseURL
// ("https://api.jina.ai"), authenticating with apiKey as a bearer token (none
// is sent if it is empty). It does no I/O.
func NewEmbedder(baseURL, apiKey, model string, opts *Options) (*Embedder, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("jina: base URL %q is not an http(s) URL like https://api.jina.ai", baseURL)
	}
	if strings.TrimSpace(model) == "" {
		return nil, fmt.Errorf("jina: embedder needs a model name")
	}
	if opts == nil {
		opts = &Options{}
	}
	e := &Embedder{base: strings.TrimSuffix(strings.TrimRight(u.String(), "/"), "/v1"), key: apiKey, model: model,
		dims: opts.Dims, batch: opts.BatchSize, http: opts.HTTPClient}
	switch {
	case e.dims < 0 || e.dims > multivector.MaxDims:
		return nil, fmt.Errorf("jina: dimensions %d is outside 1..%d", e.dims, multivector.MaxDims)
	case e.dims == 0 && KnownDims[model] == 0:
		return nil, fmt.Errorf("jina: the token vector length of model %q is not known: set its dimensions", model)
	case e.dims == 0:
		e.dims = KnownDims[model]
	}
	switch {
	case e.batch == 0:
		e.batch = DefaultBatchSize
	case e.batch < 0 || e.batch > MaxBatchSize:
		return nil, fmt.Errorf("jina: batch size %d is outside 1..%d", e.batch, MaxBatchSize)
	}
	if e.http == nil {
		timeout := opts.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		e.http = &http.Client{Timeout: timeout}
	}
	return e, nil
}

// Provider implements [multivector.Embedder]: "jina".
func (e *Embedder) Provider() string { return Name }

// Model implements [multivector.Embedder].
func (e *Embedder) Model() string { return e.model }

// Dims implements [multivector.Embedder].
func (e *Embedder) Dims() int { return e.dims }

type request struct {
	Model         string   `json:"model"`
	Input         []string `json:"input"`
	InputType     string   `json:"input_type"`
	EmbeddingType string   `json:"embedding_type"`
	Dimensions    int      `json:"dimensions"`
}

type response struct {
	Model string `json:"model"`
	Data  []struct {
		Index      int         `json:"index"`
		Embeddings [][]float32 `json:"embeddings"`
	} `json:"data"`
}

// EmbedTokens implements [multivector.Embedder]. Texts go out BatchSize at a
// time, one request after another; a text's tokens past
// [multivector.MaxTokens] are dropped, and an answer whose tokens pass
// [multivector.MaxBatchTokens] over the call fails it. Empty texts are
// refused, as the API refuses them.
func (e *Embedder) EmbedTokens(ctx context.Context, req multivector.Request) (multivector.Embeddings, error) {
	for i, t := range req.Texts {
		if strings.TrimSpace(t) == "" {
			return multivector.Embeddings{}, fmt.Errorf("jina: embed tokens: text %d is empty", i)
		}
	}
	inputType := "document"
	if req.Purpose == provider.ForQuery {
		inputType = "query"
	}
	limit := multivector.MaxTokens(req.Purpose)
	out := multivector.Embeddings{Tokens: make([][][]float32, len(req.Texts)), Dims: e.dims, Provider: Name, Model: e.model}
	total := 0
	for start := 0; start < len(req.Texts); start += e.batch {
		texts := req.Texts[start:min(start+e.batch, len(req.Texts))]
		resp, err := e.post(ctx, request{Model: e.model, Input: texts, InputType: inputType, EmbeddingType: "float", Dimensions: e.dims})
		if err != nil {
			return multivector.Embeddings{}, err
		}
		if len(resp.Data) != len(texts) {
			return multivector.Embeddings{}, fmt.Errorf("jina: %s: model %s returned %d results for %d texts", path, e.model, len(resp.Data), len(texts))
		}
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(texts) || out.Tokens[start+d.Index] != nil {
				return multivector.Embeddings{}, fmt.Errorf("jina: %s: model %s returned result index %d twice or out of range 0..%d", path, e.model, d.Index, len(texts)-1)
			}
			toks := d.Embeddings[:min(len(d.Embeddings), limit)]
			if total += len(toks); total > multivector.MaxBatchTokens {
				return multivector.Embeddings{}, fmt.Errorf("jina: %s: more than %d tokens in one call: send fewer texts", path, multivector.MaxBatchTokens)
			}
			for j, v := range toks {
				if len(v) != e.dims {
					return multivector.Embeddings{}, fmt.Errorf("jina: %s: model %s returned %d dimensions for token %d of text %d, want %d", path, e.model, len(v), j, start+d.Index, e.dims)
				}
				if !multivector.Normalize(v) {
					return multivector.Embeddings{}, fmt.Errorf("jina: %s: model %s returned a zero or non-finite vector for token %d of text %d", path, e.model, j, start+d.Index)
				}
			}
			out.Tokens[start+d.Index] = append(make([][]float32, 0, len(toks)), toks...)
		}
	}
	return out, nil
}

// post sends one request and decodes its answer. A 429, 408 or 5xx status,
// or a request that never reached the server, is [fault.Unavailable].
func (e *Embedder) post(ctx context.Context, in request) (response, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return response{}, fmt.Errorf("jina: encoding %s request: %w", path, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, bytes.NewReader(body))
	if err != nil {
		return response{}, fmt.Errorf("jina: %s: %w", path, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if e.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+e.key)
	}
	hresp, err := e.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return response{}, fmt.Errorf("jina: %s: %w", path, ctx.Err())
		}
		return response{}, fault.Unavailable(err, "jina: %s: %v", path, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes+1))
	if err != nil {
		return response{}, fmt.Errorf("jina: %s: reading response: %w", path, err)
	}
	if len(data) > maxResponseBytes {
		return response{}, fmt.Errorf("jina: %s: response larger than %d bytes", path, maxResponseBytes)
	}
	if hresp.StatusCode/100 != 2 {
		err := fmt.Errorf("jina: %s: HTTP %d %s: %s", path, hresp.StatusCode, http.StatusText(hresp.StatusCode), detail(data))
		if s := hresp.StatusCode; s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500 {
			return response{}, fault.Unavailable(err, "%v", err)
		}
		return response{}, err
	}
	var out response
	if err := json.Unmarshal(data, &out); err != nil {
		return response{}, fmt.Errorf("jina: decoding %s response: %w", path, err)
	}
	return out, nil
}

// detail returns the message of an error answer: FastAPI's {"detail": "..."},
// the first {"detail": [{"msg"}]} of a validation error, or the body's start.
func detail(data []byte) string {
	var wire struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &wire) == nil && len(wire.Detail) > 0 {
		var s string
		if json.Unmarshal(wire.Detail, &s) == nil {
			return s
		}
		var items []struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(wire.Detail, &items) == nil && len(items) > 0 {
			return items[0].Msg
		}
	}
	s := []rune(strings.TrimSpace(string(data)))
	if len(s) > 200 {
		return string(s[:200]) + "…"
	}
	return string(s)
}
