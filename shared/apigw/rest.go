package apigw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
)

// StreamDelimiter ends the JSON prelude (status and headers) of a streamed
// Lambda proxy response; the body follows it as the function writes it.
// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html
var StreamDelimiter = []byte{0, 0, 0, 0, 0, 0, 0, 0}

// maxPrelude bounds the prelude [DecodeStream] reads before its delimiter.
const maxPrelude = 64 << 10

// StreamingHandler returns the Lambda handler that serves h behind an API
// Gateway REST API whose Lambda proxy integration streams
// (ResponseTransferMode STREAM, the InvokeWithResponseStream URI): h runs
// while its answer travels, and what it writes reaches the client at each
// Flush, or when its buffer fills, instead of when it returns. The function
// answers once h has written its header (or returned), so the status and
// headers go first, in the prelude API Gateway reads. A REST API streams for
// up to 15 minutes, beyond the 29 s of a buffered integration.
func StreamingHandler(h http.Handler) func(context.Context, events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error) {
	return func(ctx context.Context, e events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error) {
		r, err := RESTRequest(ctx, e)
		if err != nil {
			return &events.APIGatewayProxyStreamingResponse{StatusCode: http.StatusBadRequest, Body: strings.NewReader(err.Error())}, nil
		}
		return Stream(h, r), nil
	}
}

// Stream serves r with h and returns its answer as a streamed Lambda proxy
// response, once h has written its header or returned. A panic in h after
// the header is sent ends the body with the panic as its error, which the
// Lambda runtime reports in its error trailers; before, it is a 500.
func Stream(h http.Handler, r *http.Request) *events.APIGatewayProxyStreamingResponse {
	pr, pw := io.Pipe()
	w := &streamWriter{header: http.Header{}, pipe: pw, ready: make(chan struct{})}
	w.buf = bufio.NewWriterSize(pw, 32<<10)
	go w.serve(h, r)
	<-w.ready
	return &events.APIGatewayProxyStreamingResponse{
		StatusCode:        w.status,
		MultiValueHeaders: preludeHeaders(w.sent),
		Body:              pr,
	}
}

// streamWriter is the http.ResponseWriter of a streamed answer: a buffer in
// front of a pipe the Lambda runtime reads from.
type streamWriter struct {
	header http.Header
	sent   http.Header // the header as it was when WriteHeader was called
	status int
	buf    *bufio.Writer
	pipe   *io.PipeWriter
	ready  chan struct{} // closed when status and sent are set
	once   sync.Once
}

func (w *streamWriter) serve(h http.Handler, r *http.Request) {
	defer func() {
		p := recover()
		if p == nil {
			w.WriteHeader(http.StatusOK) // a handler that wrote nothing answers 200, as net/http does
			w.pipe.CloseWithError(w.buf.Flush())
			return
		}
		if p == http.ErrAbortHandler {
			w.WriteHeader(http.StatusInternalServerError)
			w.pipe.CloseWithError(errors.New("apigw: handler aborted the response"))
			return
		}
		headerSent := true
		w.once.Do(func() {
			headerSent = false
			w.status, w.sent = http.StatusInternalServerError, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
			close(w.ready)
		})
		if !headerSent {
			w.buf.WriteString("Internal Server Error\n")
			w.buf.Flush()
		}
		w.pipe.CloseWithError(fmt.Errorf("apigw: handler panicked: %v", p))
	}()
	h.ServeHTTP(w, r)
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(b)
}

// Flush sends what has been written so far to the client.
func (w *streamWriter) Flush() {
	w.WriteHeader(http.StatusOK)
	w.buf.Flush()
}

// preludeHeaders is h without the headers that describe a connection or a
// length: API Gateway frames the streamed body to the client itself.
func preludeHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Trailer", "Upgrade":
			continue
		}
		out[k] = vs
	}
	return out
}

// RESTRequest builds the *http.Request an API Gateway REST API (Lambda
// proxy, payload format 1.0) event describes. Repeated headers and query
// parameters come from the event's multi-value maps when it has them.
func RESTRequest(ctx context.Context, e events.APIGatewayProxyRequest) (*http.Request, error) {
	body, err := eventBody(e.Body, e.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	query := url.Values{}
	for k, v := range e.QueryStringParameters {
		query.Set(k, v)
	}
	for k, vs := range e.MultiValueQueryStringParameters {
		query[k] = vs
	}
	target := e.Path
	if target == "" {
		target = "/"
	}
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	r, err := http.NewRequestWithContext(withPrefix(ctx, stagePrefix(e)), e.HTTPMethod, target, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("apigw: %w", err)
	}
	for k, v := range e.Headers {
		r.Header.Set(k, v)
	}
	for k, vs := range e.MultiValueHeaders {
		r.Header.Del(k)
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	r.Host = r.Header.Get("Host")
	if r.Host == "" {
		r.Host = e.RequestContext.DomainName
	}
	if r.Header.Get("X-Forwarded-Proto") == "" {
		r.Header.Set("X-Forwarded-Proto", "https")
	}
	r.RemoteAddr = e.RequestContext.Identity.SourceIP + ":0"
	r.RequestURI = target
	r.ContentLength = int64(len(body))
	return r, nil
}

// stagePrefix is the part of the path the client asked for that a REST
// API's event leaves out of its path: "/<stage>" on the execute-api URL,
// the base path of a custom domain's mapping, nothing at a custom domain's
// root. It is "" unless the request context's path ends with the event's
// path after a prefix of plain path segments.
func stagePrefix(e events.APIGatewayProxyRequest) string {
	prefix, ok := strings.CutSuffix(e.RequestContext.Path, e.Path)
	if !ok || e.Path == "" || !validPrefix(prefix) {
		return ""
	}
	return prefix
}

// RESTEvent is the Lambda proxy event an API Gateway REST API sends for r
// (payload format 1.0), for stand-ins of API Gateway: the body travels
// base64-encoded, headers and query parameters in both their single and
// multi-value maps (the single one holds the last value, as API Gateway's
// does), X-Forwarded-Proto the scheme r came by. Its resource is the path
// itself: a stand-in knows no resource patterns, and the gateway reads the
// path. Its request context's path is the stage's and the path: a stand-in
// of a custom domain at its root sets it to the path. The body is read
// whole.
func RESTEvent(r *http.Request, stage string) (events.APIGatewayProxyRequest, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return events.APIGatewayProxyRequest{}, fmt.Errorf("apigw: reading request body: %w", err)
	}
	e := events.APIGatewayProxyRequest{
		Resource:          r.URL.Path,
		Path:              r.URL.Path,
		HTTPMethod:        r.Method,
		Headers:           map[string]string{},
		MultiValueHeaders: map[string][]string{},
		Body:              base64.StdEncoding.EncodeToString(body),
		IsBase64Encoded:   true,
		RequestContext: events.APIGatewayProxyRequestContext{
			Stage:        stage,
			DomainName:   r.Host,
			HTTPMethod:   r.Method,
			Path:         "/" + stage + r.URL.Path,
			ResourcePath: r.URL.Path,
			Protocol:     r.Proto,
			Identity:     events.APIGatewayRequestIdentity{SourceIP: hostOf(r.RemoteAddr), UserAgent: r.UserAgent()},
		},
	}
	for k, vs := range r.Header {
		e.Headers[k] = vs[len(vs)-1]
		e.MultiValueHeaders[k] = vs
	}
	if r.Host != "" {
		e.Headers["Host"], e.MultiValueHeaders["Host"] = r.Host, []string{r.Host}
	}
	// API Gateway says which scheme its client used (https on AWS), so a
	// stand-in serving HTTP says http: the links the gateway builds work.
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	e.Headers["X-Forwarded-Proto"], e.MultiValueHeaders["X-Forwarded-Proto"] = proto, []string{proto}
	if q := r.URL.Query(); len(q) > 0 {
		e.QueryStringParameters, e.MultiValueQueryStringParameters = map[string]string{}, map[string][]string(q)
		for k, vs := range q {
			e.QueryStringParameters[k] = vs[len(vs)-1]
		}
	}
	return e, nil
}

// hostOf is the host of a host:port address, or addr if it has no port.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// StreamPrelude is the status and headers a streamed Lambda proxy response
// begins with.
type StreamPrelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

// Header merges the prelude's headers and cookies (as Set-Cookie) into one
// http.Header, as API Gateway sends them to the client.
func (p *StreamPrelude) Header() http.Header {
	h := http.Header{}
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	keys := make([]string, 0, len(p.MultiValueHeaders))
	for k := range p.MultiValueHeaders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Del(k)
		for _, v := range p.MultiValueHeaders[k] {
			h.Add(k, v)
		}
	}
	for _, c := range p.Cookies {
		h.Add("Set-Cookie", c)
	}
	return h
}

// DecodeStream reads the prelude of a streamed Lambda proxy response from r,
// as API Gateway does, and returns it with a reader of the body that follows
// (the rest of r). A status of zero means 200. A prelude over 64 KiB, one
// that is not JSON or a stream that ends before the delimiter is an error.
func DecodeStream(r io.Reader) (*StreamPrelude, io.Reader, error) {
	br := bufio.NewReader(r)
	var prelude []byte
	for {
		b, err := br.ReadSlice(0)
		prelude = append(prelude, b...)
		if len(prelude) > maxPrelude+len(StreamDelimiter) {
			return nil, nil, fmt.Errorf("apigw: streamed response prelude exceeds %d bytes", maxPrelude)
		}
		if bytes.HasSuffix(prelude, StreamDelimiter) {
			prelude = prelude[:len(prelude)-len(StreamDelimiter)]
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("apigw: streamed response ended before its prelude delimiter: %w", err)
		}
	}
	p := &StreamPrelude{}
	if err := json.Unmarshal(prelude, p); err != nil {
		return nil, nil, fmt.Errorf("apigw: streamed response prelude: %w", err)
	}
	if p.StatusCode == 0 {
		p.StatusCode = http.StatusOK
	}
	return p, br, nil
}

// RelayStream answers w as API Gateway's streaming REST API answers a client
// with a function's streamed Lambda proxy response: invoke runs on a
// goroutine of its own and writes the response stream to the writer it is
// given as the function sends it (returning the function's error, if any);
// the prelude becomes the status and headers, and each piece of the body is
// flushed to the client as it arrives. It reports whether it wrote the
// header: if not, the function failed or sent no valid prelude, and the
// caller answers for API Gateway; if so, an error means the stream broke
// off midway. A client that goes away does not hold invoke up: the rest of
// the stream is read and dropped.
func RelayStream(w http.ResponseWriter, invoke func(io.Writer) error) (wroteHeader bool, err error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(invoke(pw)) }()
	defer func() { go io.Copy(io.Discard, pr) }()
	prelude, body, err := DecodeStream(pr)
	if err != nil {
		return false, err
	}
	for k, vs := range prelude.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(prelude.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return true, werr
			}
			rc.Flush()
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return true, err
		}
	}
}
