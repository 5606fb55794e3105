// Package apigw serves an [http.Handler] behind API Gateway: it turns each
// event into an *http.Request and the handler's response into the event's
// answer. Behind an HTTP API (payload format 2.0, [Handler]) the answer is
// buffered, so a streamed (SSE) body arrives whole, after the handler
// returns, within 29 s. Behind a REST API whose Lambda proxy integration
// streams ([StreamingHandler]) it reaches the client as the handler flushes
// it, for up to 15 minutes. [Serve] answers either, as its event says.
//
//	lambda.Start(apigw.Serve(gw.Handler()))
//
// [RESTEvent] and [DecodeStream] are the other side, for a stand-in of API
// Gateway's REST API: the event it sends for a request, and the reading of a
// streamed answer.
package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// Handler returns the Lambda handler that serves h.
func Handler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		r, err := Request(ctx, e)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusBadRequest, Body: err.Error()}, nil
		}
		w := &recorder{header: http.Header{}}
		h.ServeHTTP(w, r)
		return w.response(), nil
	}
}

// Serve returns the Lambda handler that serves h behind either front door:
// an HTTP API event is answered buffered, as [Handler] answers it; a REST
// API proxy event is answered streamed, as [StreamingHandler] answers it.
func Serve(h http.Handler) func(context.Context, Event) (any, error) {
	httpAPI, rest := Handler(h), StreamingHandler(h)
	return func(ctx context.Context, e Event) (any, error) {
		if e.HTTPAPI != nil {
			return httpAPI(ctx, *e.HTTPAPI)
		}
		return rest(ctx, *e.REST)
	}
}

// Event is an API Gateway event of either front door: exactly one of its
// fields is set when it has been decoded.
type Event struct {
	// HTTPAPI is an HTTP API event (payload format 2.0, "version": "2.0").
	HTTPAPI *events.APIGatewayV2HTTPRequest
	// REST is a REST API proxy event (payload format 1.0, with "httpMethod").
	REST *events.APIGatewayProxyRequest
}

// UnmarshalJSON decodes an event of either front door, as its top-level
// members tell, and refuses anything else naming what was expected.
func (e *Event) UnmarshalJSON(b []byte) error {
	var probe struct {
		Version    string `json:"version"`
		HTTPMethod string `json:"httpMethod"`
	}
	// The top-level members are read without decoding the rest, which the
	// typed decoding below reads; encoding/json reads what rawjson refuses.
	s := &rawjson.Scanner{Data: b}
	ok := s.Object(func(key []byte) bool {
		var v []byte
		var ok bool
		switch string(key) {
		case "version":
			v, ok = s.PlainString()
			probe.Version = string(v)
		case "httpMethod":
			v, ok = s.PlainString()
			probe.HTTPMethod = string(v)
		default:
			ok = s.Value()
		}
		return ok
	}) && s.AtEnd()
	if !ok {
		if err := json.Unmarshal(b, &probe); err != nil {
			return fmt.Errorf("apigw: event is not a JSON object: %w", err)
		}
	}
	switch {
	case probe.Version == "2.0":
		e.HTTPAPI = &events.APIGatewayV2HTTPRequest{}
		if err := json.Unmarshal(b, e.HTTPAPI); err != nil {
			return fmt.Errorf("apigw: HTTP API event: %w", err)
		}
	case probe.HTTPMethod != "":
		e.REST = &events.APIGatewayProxyRequest{}
		if err := json.Unmarshal(b, e.REST); err != nil {
			return fmt.Errorf("apigw: REST API event: %w", err)
		}
	default:
		return errors.New(`apigw: event is neither an HTTP API event ("version": "2.0") nor a REST API proxy event ("httpMethod")`)
	}
	return nil
}

// Request builds the *http.Request an API Gateway event describes.
func Request(ctx context.Context, e events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	body, err := eventBody(e.Body, e.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	path := e.RawPath
	if path == "" {
		path = e.RequestContext.HTTP.Path
	}
	url := path
	if e.RawQueryString != "" {
		url += "?" + e.RawQueryString
	}
	r, err := http.NewRequestWithContext(ctx, e.RequestContext.HTTP.Method, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("apigw: %w", err)
	}
	for k, v := range e.Headers {
		// API Gateway joins repeated headers with commas, which HTTP allows
		// for every header but cookies, and sends cookies separately.
		r.Header.Set(k, v)
	}
	if len(e.Cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(e.Cookies, "; "))
	}
	r.Host = r.Header.Get("Host")
	if r.Host == "" {
		r.Host = e.RequestContext.DomainName
	}
	if r.Header.Get("X-Forwarded-Proto") == "" {
		r.Header.Set("X-Forwarded-Proto", "https")
	}
	r.RemoteAddr = e.RequestContext.HTTP.SourceIP + ":0"
	r.RequestURI = url
	r.ContentLength = int64(len(body))
	return r, nil
}

// prefixKey is where the adapters put the path prefix the front door strips.
type prefixKey struct{}

func withPrefix(ctx context.Context, prefix string) context.Context {
	if prefix == "" {
		return ctx
	}
	return context.WithValue(ctx, prefixKey{}, prefix)
}

// Prefix returns the path prefix the front door took off the path of the
// request ctx serves, which a link to this server must put back: "/v1"
// behind a REST API reached at its execute-api URL, whose stage "v1" leads
// every path; "" behind a custom domain mapped at its root, behind an HTTP
// API (stage $default) and for a request that no adapter of this package
// built (the local server). Only the adapters set it, from the event,
// never from a header a client could send.
func Prefix(ctx context.Context) string {
	p, _ := ctx.Value(prefixKey{}).(string)
	return p
}

// validPrefix reports whether p is "" or "/"-led path segments of letters,
// digits and "-._~", as stage names and base paths are: nothing a link could
// be bent with.
func validPrefix(p string) bool {
	if p == "" {
		return true
	}
	for _, seg := range strings.Split(p, "/")[1:] {
		if seg == "" || seg == "." || seg == ".." || len(seg) > 128 {
			return false
		}
		for _, c := range seg {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-._~", c)) {
				return false
			}
		}
	}
	return p[0] == '/'
}

// recorder collects a response in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush is a no-op: the response is sent whole when the handler returns.
func (w *recorder) Flush() {}

func (w *recorder) response() events.APIGatewayV2HTTPResponse {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	resp := events.APIGatewayV2HTTPResponse{StatusCode: w.status, Headers: map[string]string{}}
	for k, vs := range w.header {
		if k == "Set-Cookie" {
			resp.Cookies = append(resp.Cookies, vs...)
			continue
		}
		resp.Headers[k] = strings.Join(vs, ", ")
	}
	if textual(w.header.Get("Content-Type")) {
		resp.Body = w.body.String()
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(w.body.Bytes())
		resp.IsBase64Encoded = true
	}
	return resp
}

func textual(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return contentType == "" || strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// eventBody returns an event's body, decoded when API Gateway sent it in
// base64 (a binary body).
func eventBody(body string, isBase64 bool) ([]byte, error) {
	if !isBase64 {
		return []byte(body), nil
	}
	b, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("apigw: request body is not valid base64: %w", err)
	}
	return b, nil
}
