// Package openai holds the embedder and generator that call an
// OpenAI-compatible HTTP API: OpenAI itself, or any server speaking its
// /v1/embeddings and /v1/chat/completions wire format (vLLM, Ollama,
// LiteLLM, llama.cpp's server and others). Plain net/http, no SDK.
//
//	c, err := openai.NewClient("https://api.openai.com", key, nil)
//	emb, err := openai.NewEmbedder(c, "text-embedding-3-small", &openai.EmbedderOptions{Dims: 512})
//	gen, err := openai.NewGenerator(c, "gpt-4o-mini")
//	out, err := gen.Generate(ctx, provider.GenerateRequest{Task: provider.TaskAnswer, Question: q, Documents: docs})
//	// out.Provider == "openai", out.Model == the model that answered
//
// Requests that fail with HTTP 429 or a 5xx status, or that never reach the
// server, are retried with capped exponential backoff, honouring Retry-After;
// when the tries run out the error is a [fault.Unavailable] wrapping an [*Error].
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

// Name is the provider name results carry.
const Name = "openai"

// Defaults of [ClientOptions].
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxRetries    = 3
	DefaultMaxBackoff    = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
)

// firstBackoff is the wait before the first retry; each further retry doubles it, up to MaxBackoff.
const firstBackoff = 500 * time.Millisecond

// maxResponseBytes bounds a response body: 96 vectors of 3072 dimensions in
// JSON take about 6 MB, so 64 MiB leaves room for larger batches.
const maxResponseBytes = 64 << 20

// maxErrorBytes bounds the body of an error response read for its message.
const maxErrorBytes = 1 << 20

// ClientOptions configure a [Client]. The zero value is usable.
type ClientOptions struct {
	// HTTPClient sends the requests. If nil, a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one HTTP request (the context bounds the whole call).
	// If zero, [DefaultTimeout]. Ignored when HTTPClient is set.
	Timeout time.Duration
	// MaxRetries is how many times a failed request is retried. If zero,
	// [DefaultMaxRetries]; if negative, none.
	MaxRetries int
	// MaxBackoff caps the wait between tries. If zero, [DefaultMaxBackoff].
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for; a
	// server asking for more makes the call fail at once, as does a wait
	// that would outlast the context's deadline. If zero, [DefaultMaxRetryAfter].
	MaxRetryAfter time.Duration
}

// Client sends requests to one OpenAI-compatible API. It is safe for concurrent use.
type Client struct {
	base          string // scheme://host[/prefix], without /v1
	key           string
	http          *http.Client
	maxRetries    int
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
}

// NewClient returns a client of the API at baseURL ("https://api.openai.com",
// or "http://localhost:11434"; a trailing "/v1" is accepted and dropped),
// authenticating with apiKey as a bearer token (none is sent if it is
// empty, as local servers expect). It does no I/O.
func NewClient(baseURL, apiKey string, opts *ClientOptions) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL like https://api.openai.com", baseURL)
	}
	base := strings.TrimSuffix(strings.TrimRight(u.String(), "/"), "/v1")
	if opts == nil {
		opts = &ClientOptions{}
	}
	c := &Client{base: base, key: apiKey, http: opts.HTTPClient, maxRetries: opts.MaxRetries,
		maxBackoff: opts.MaxBackoff, maxRetryAfter: opts.MaxRetryAfter}
	if c.http == nil {
		timeout := opts.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		c.http = &http.Client{Timeout: timeout}
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.maxBackoff <= 0 {
		c.maxBackoff = DefaultMaxBackoff
	}
	if c.maxRetryAfter <= 0 {
		c.maxRetryAfter = DefaultMaxRetryAfter
	}
	return c, nil
}

// BaseURL returns the API's base URL, without /v1.
func (c *Client) BaseURL() string { return c.base }

// Error is an error response of the API: its HTTP status and the message of
// its {"error": {"message", "type", "code"}} body (or the start of the body,
// if it has another shape).
type Error struct {
	// Path is the endpoint called, such as "/v1/embeddings".
	Path       string
	StatusCode int
	Type       string
	Code       string
	Message    string
	// RetryAfter is the wait the server asked for, if it did.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai: %s: HTTP %d %s", e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Type != "" {
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// retryable reports whether a request that got status may succeed if sent again.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// post sends in as JSON to path and decodes the response into out, retrying
// as [Client] describes.
func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("openai: encoding %s request: %w", path, err)
	}
	var data []byte
	if err := c.retrying(ctx, path, func() (err error) { data, err = c.send(ctx, path, body); return err }); err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("openai: decoding %s response: %w", path, err)
	}
	return nil
}

// postStream sends in as JSON to path, asking for a stream of server-sent
// events, and returns the open body of the 2xx response for the caller to
// read and close. Only the request is retried: once the stream has begun,
// its failures are the caller's.
func (c *Client) postStream(ctx context.Context, path string, in any) (io.ReadCloser, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding %s request: %w", path, err)
	}
	var resp *http.Response
	if err := c.retrying(ctx, path, func() (err error) { resp, err = c.request(ctx, path, body, "text/event-stream"); return err }); err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// retrying calls try until it succeeds, fails for good (an API error of a
// status not worth retrying), the tries run out, or the context ends.
func (c *Client) retrying(ctx context.Context, path string, try func() error) error {
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("openai: %s: %w", path, ctx.Err())
		}
		var apiErr *Error
		isAPI := errors.As(err, &apiErr)
		if isAPI && !retryable(apiErr.StatusCode) {
			return err
		}
		tries := attempt + 1
		if attempt >= c.maxRetries {
			return fault.Unavailable(err, "%v (after %d tries)", err, tries)
		}
		wait := c.backoff(attempt)
		if isAPI && apiErr.RetryAfter > 0 {
			if apiErr.RetryAfter > c.maxRetryAfter {
				return fault.Unavailable(err, "%v (the server asks to retry after %s)", err, apiErr.RetryAfter)
			}
			wait = apiErr.RetryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fault.Unavailable(err, "%v (after %d tries; no time left to retry)", err, tries)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("openai: %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}

// backoff is the wait before retry number attempt+1: exponential from
// firstBackoff, capped, with jitter over its upper half so clients that failed
// together do not retry together.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.maxBackoff
	if attempt < 16 {
		d = min(firstBackoff<<attempt, c.maxBackoff)
	}
	return d/2 + rand.N(d/2+1)
}

// send makes one request and returns the body of a 2xx response, or an
// [*Error] for another status, or the transport's error.
func (c *Client) send(ctx context.Context, path string, body []byte) ([]byte, error) {
	resp, err := c.request(ctx, path, body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("openai: %s: reading response: %w", path, err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("openai: %s: response larger than %d bytes", path, maxResponseBytes)
	}
	return data, nil
}

// request makes one request and returns a 2xx response with its body
// unread, or an [*Error] for another status, or the transport's error.
func (c *Client) request(ctx context.Context, path string, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openai: %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openai: %s: %w", path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	if err != nil {
		return nil, fmt.Errorf("openai: %s: reading response: %w", path, err)
	}
	e := &Error{Path: path, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header)}
	var wire struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &wire) == nil && len(wire.Error) > 0 {
		var detail struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"` // a string at OpenAI, a number at some compatible servers
		}
		if json.Unmarshal(wire.Error, &detail) == nil {
			e.Message, e.Type = detail.Message, detail.Type
			if detail.Code != nil {
				e.Code = fmt.Sprint(detail.Code)
			}
		} else {
			json.Unmarshal(wire.Error, &e.Message) // {"error": "text"}
		}
	}
	if e.Message == "" {
		e.Message = clip(strings.TrimSpace(string(data)), 200)
	}
	return nil, e
}

// retryAfter reads the wait a response asks for: retry-after-ms (sent by
// some OpenAI-compatible services), or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
