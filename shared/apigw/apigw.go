// Package apigw serves an [http.Handler] behind an API Gateway HTTP API
// (payload format 2.0): it turns each event into an *http.Request and the
// handler's response into the event's answer. HTTP APIs buffer Lambda
// responses, so a streamed (SSE) body arrives whole, after the handler returns.
//
//	lambda.Start(apigw.Handler(gw.Handler()))
package apigw

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
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

// Request builds the *http.Request an API Gateway event describes.
func Request(ctx context.Context, e events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return nil, fmt.Errorf("apigw: request body is not valid base64: %w", err)
		}
		body = b
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
