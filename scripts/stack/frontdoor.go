package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// maxRequestBytes is API Gateway's payload limit (10 MB).
const maxRequestBytes = 10 << 20

// invokeFunc invokes the function behind the front door.
type invokeFunc func(ctx context.Context, payload []byte) (*lambdatest.Result, error)

// A frontDoor is the API Gateway stand-in for one kind of API event: it
// serves a request to one of the function's routes by invoking the function
// with the event that kind of API sends, and answers as that API answers.
// Each event format the template's front door may use is one frontDoor
// (frontDoorFor); a streaming REST API's would invoke with response
// streaming and copy the stream as it arrives.
type frontDoor interface {
	serve(w http.ResponseWriter, r *http.Request, e HTTPEvent, invoke invokeFunc)
}

// frontDoorFor returns the stand-in of e's API and payload format.
func frontDoorFor(e HTTPEvent) (frontDoor, error) {
	switch {
	case e.Type == "HttpApi" && e.PayloadFormat == "2.0":
		return httpAPI{}, nil
	}
	if e.Streaming {
		return nil, fmt.Errorf("route %s %s: this stack has no stand-in for a streaming REST API yet; run the HTTP API front door (--parameter FrontDoor=HttpApi, if the template has that parameter)", e.Method, e.Path)
	}
	return nil, fmt.Errorf("route %s %s: this stack has no stand-in for %s events of payload format %s", e.Method, e.Path, e.Type, e.PayloadFormat)
}

// frontDoorHandler routes the functions' API events to their stand-ins, as
// API Gateway routes them: ANY matches every method, {name} one path
// segment, {name+} the rest of the path. Other requests are answered 404
// {"message":"Not Found"}, as an HTTP API answers them.
func frontDoorHandler(routes []route) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Not Found"}`)
	})
	for _, rt := range routes {
		e, invoke := rt.event, rt.invoke
		door, err := frontDoorFor(e)
		if err != nil {
			return nil, err
		}
		pattern := strings.ReplaceAll(e.Path, "+}", "...}") // {proxy+}: the rest of the path
		if e.Method != "ANY" {
			pattern = e.Method + " " + pattern
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { door.serve(w, r, e, invoke) })
	}
	return mux, nil
}

// httpAPI is an API Gateway HTTP API with Lambda proxy integrations of
// payload format 2.0: it buffers the function's answer.
type httpAPI struct{}

func (httpAPI) serve(w http.ResponseWriter, r *http.Request, e HTTPEvent, invoke invokeFunc) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil || len(body) > maxRequestBytes {
		apiMessage(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	payload, err := json.Marshal(httpAPIEvent(r, body, e))
	if err != nil {
		apiMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	res, err := invoke(r.Context(), payload)
	switch {
	case err != nil:
		slog.Error("front door: invoking the gateway", "error", err)
		apiMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	case res.Error != nil && res.Error.Type == "Sandbox.Timedout":
		apiMessage(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	case res.Error != nil:
		apiMessage(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	writeHTTPAPIResponse(w, res.Payload)
}

// httpAPIEvent is the event an HTTP API sends for r (payload format 2.0):
// header names in lower case, repeated headers and query parameters joined
// with commas, cookies apart, and the body base64-encoded unless it is
// UTF-8 text.
func httpAPIEvent(r *http.Request, body []byte, e HTTPEvent) events.APIGatewayV2HTTPRequest {
	now := time.Now()
	routeKey := e.Method + " " + e.Path
	if e.Method == "ANY" {
		routeKey = "ANY " + e.Path
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Headers: map[string]string{},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: routeKey, AccountID: "123456789012", Stage: "$default", APIID: "local",
			RequestID: fmt.Sprintf("%x", now.UnixNano()), DomainName: r.Host, DomainPrefix: strings.Split(r.Host, ".")[0],
			Time: now.UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP(r), UserAgent: r.UserAgent(),
			},
		},
	}
	for k, v := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			for _, c := range v {
				for _, part := range strings.Split(c, ";") {
					ev.Cookies = append(ev.Cookies, strings.TrimSpace(part))
				}
			}
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	ev.Headers["host"] = r.Host
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, v := range q {
			ev.QueryStringParameters[k] = strings.Join(v, ",")
		}
	}
	for _, name := range pathParams(e.Path) {
		if ev.PathParameters == nil {
			ev.PathParameters = map[string]string{}
		}
		ev.PathParameters[strings.TrimSuffix(name, "+")] = r.PathValue(pathParamKey(name))
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// writeHTTPAPIResponse answers as an HTTP API does with the function's
// payload: a response object ({"statusCode": ...}) as it says; any other
// JSON as a 200 with that JSON as its body (payload format 2.0's inference).
func writeHTTPAPIResponse(w http.ResponseWriter, payload []byte) {
	var probe map[string]json.RawMessage
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(payload, &probe) != nil || probe["statusCode"] == nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(payload)
		return
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		apiMessage(w, http.StatusBadGateway, "Internal Server Error")
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			apiMessage(w, http.StatusBadGateway, "Internal Server Error")
			return
		}
		body = b
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

func apiMessage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	w.Write(b)
}

// pathParams returns the names of the {parameters} of an API path.
func pathParams(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, seg[1:len(seg)-1])
		}
	}
	return names
}

// pathParamKey is the name net/http's pattern gives the API parameter name.
func pathParamKey(name string) string { return strings.TrimSuffix(name, "+") }

func sourceIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
