package apigw_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
)

// restEvent is a REST API proxy event as API Gateway sends it.
func restEvent() events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{
		Resource:                        "/mcp",
		Path:                            "/mcp",
		HTTPMethod:                      "POST",
		Headers:                         map[string]string{"Host": "abc.execute-api.eu-west-1.amazonaws.com", "Accept": "text/event-stream", "Content-Type": "application/json"},
		MultiValueHeaders:               map[string][]string{"Host": {"abc.execute-api.eu-west-1.amazonaws.com"}, "Accept": {"application/json", "text/event-stream"}, "Content-Type": {"application/json"}},
		QueryStringParameters:           map[string]string{"x": "2"},
		MultiValueQueryStringParameters: map[string][]string{"x": {"1", "2"}},
		Body:                            base64.StdEncoding.EncodeToString([]byte(`{"jsonrpc":"2.0"}`)),
		IsBase64Encoded:                 true,
		RequestContext: events.APIGatewayProxyRequestContext{
			Stage:      "mcp",
			DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
			Identity:   events.APIGatewayRequestIdentity{SourceIP: "203.0.113.9"},
		},
	}
}

// decode reads a streamed answer as API Gateway does: the prelude, then the body.
func decode(t *testing.T, resp io.Reader) (*apigw.StreamPrelude, []byte) {
	t.Helper()
	p, body, err := apigw.DecodeStream(resp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return p, b
}

func TestARestEventBecomesARequestAndTheAnswerAStream(t *testing.T) {
	var got struct {
		method, url, host, body, remote, proto string
		accept                                 []string
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.url, got.host, got.body, got.remote = r.Method, r.URL.String(), r.Host, string(b), r.RemoteAddr
		got.accept, got.proto = r.Header.Values("Accept"), r.Header.Get("X-Forwarded-Proto")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "25")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "event: message\ndata: {}\n\n")
	})
	resp, err := apigw.StreamingHandler(h)(context.Background(), restEvent())
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentType() != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("content type = %q", resp.ContentType())
	}
	p, body := decode(t, resp)
	if got.method != "POST" || got.url != "/mcp?x=1&x=2" || got.host != "abc.execute-api.eu-west-1.amazonaws.com" ||
		got.body != `{"jsonrpc":"2.0"}` || got.remote != "203.0.113.9:0" || got.proto != "https" ||
		!cmp.Equal(got.accept, []string{"application/json", "text/event-stream"}) {
		t.Errorf("request = %+v", got)
	}
	want := http.Header{"Content-Type": {"text/event-stream"}, "Set-Cookie": {"a=1", "b=2"}}
	if p.StatusCode != http.StatusAccepted {
		t.Errorf("status = %d, want 202", p.StatusCode)
	}
	if diff := cmp.Diff(want, p.Header()); diff != "" {
		t.Errorf("headers mismatch, Content-Length left to API Gateway (-want +got):\n%s", diff)
	}
	if string(body) != "event: message\ndata: {}\n\n" {
		t.Errorf("body = %q", body)
	}
}

// TestWhatIsFlushedReachesTheClientBeforeTheHandlerReturns: the handler
// writes a progress event, flushes, and waits until the client has read it
// before it writes the result. An adapter that buffered the answer would
// never let it go on.
func TestWhatIsFlushedReachesTheClientBeforeTheHandlerReturns(t *testing.T) {
	seen := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-time.After(30 * time.Second):
		}
		io.WriteString(w, "event: message\ndata: {\"result\":{}}\n\n")
	})
	done := make(chan struct{})
	var lines []string
	go func() {
		defer close(done)
		resp, err := apigw.StreamingHandler(h)(context.Background(), restEvent())
		if err != nil {
			t.Error(err)
			return
		}
		_, body, err := apigw.DecodeStream(resp)
		if err != nil {
			t.Error(err)
			return
		}
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				lines = append(lines, sc.Text())
				if len(lines) == 1 {
					close(seen)
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the flushed progress event did not reach the client while the handler waited for it")
	}
	want := []string{`data: {"method":"notifications/progress"}`, `data: {"result":{}}`}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestAPanicIsAServerErrorOrABrokenStream(t *testing.T) {
	t.Run("before the header, a 500", func(t *testing.T) {
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
		resp, _ := apigw.StreamingHandler(h)(context.Background(), restEvent())
		p, body, err := apigw.DecodeStream(resp)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(body)
		if p.StatusCode != http.StatusInternalServerError || string(b) != "Internal Server Error\n" || err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("answered %d %q, error %v; want 500 and the panic as the stream's error", p.StatusCode, b, err)
		}
	})
	t.Run("after the header, the stream's error", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic("boom")
		})
		resp, _ := apigw.StreamingHandler(h)(context.Background(), restEvent())
		p, body, err := apigw.DecodeStream(resp)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(body)
		if p.StatusCode != http.StatusOK || string(b) != "partial" || err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("answered %d %q, error %v; want 200, the partial body and the panic as the stream's error", p.StatusCode, b, err)
		}
	})
}

func TestServeAnswersEachFrontDoorInItsOwnForm(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"`+r.URL.Path+`"}`)
	})
	serve := func(ctx context.Context, payload json.RawMessage) (any, error) {
		var e apigw.Event
		if err := json.Unmarshal(payload, &e); err != nil {
			return nil, err
		}
		return apigw.Serve(h)(ctx, e)
	}
	rest, _ := json.Marshal(restEvent())
	httpAPI, _ := json.Marshal(events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/health",
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET"}}})

	got, err := serve(context.Background(), httpAPI)
	if v2, ok := got.(events.APIGatewayV2HTTPResponse); err != nil || !ok || v2.StatusCode != 200 || v2.Body != `{"path":"/health"}` {
		t.Errorf("an HTTP API event answered %#v, %v; want a buffered response", got, err)
	}
	got, err = serve(context.Background(), rest)
	stream, ok := got.(*events.APIGatewayProxyStreamingResponse)
	if err != nil || !ok {
		t.Fatalf("a REST API event answered %#v, %v; want a streamed response", got, err)
	}
	if p, body := decode(t, stream); p.StatusCode != 200 || string(body) != `{"path":"/mcp"}` {
		t.Errorf("a REST API event answered %d %s", p.StatusCode, body)
	}
	// rawjson refuses an escaped key; encoding/json reads it.
	escaped := `{"version":"2.0","rawPath":"/health","requestContext":{"http":{"method":"GET"}},"x\u0041":1}`
	if got, err := serve(context.Background(), json.RawMessage(escaped)); err != nil {
		t.Errorf("an HTTP API event with an escaped key: %v", err)
	} else if _, ok := got.(events.APIGatewayV2HTTPResponse); !ok {
		t.Errorf("an HTTP API event with an escaped key answered %#v", got)
	}
	for name, payload := range map[string]string{"not an object": `[1]`, "neither front door's": `{"version":"1.0"}`, "not JSON": `{"version":`} {
		if _, err := serve(context.Background(), json.RawMessage(payload)); err == nil {
			t.Errorf("an event %s was served", name)
		}
	}
}

func TestRESTEventCarriesTheRequestAsAPIGatewayDoes(t *testing.T) {
	in := httptest.NewRequest("POST", "https://api.example.com/mcp?x=1&x=2&y=3", strings.NewReader(`{"jsonrpc":"2.0"}`))
	in.Header.Add("Accept", "application/json")
	in.Header.Add("Accept", "text/event-stream")
	in.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	e, err := apigw.RESTEvent(in, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	if e.HTTPMethod != "POST" || e.Path != "/mcp" || e.Headers["Accept"] != "text/event-stream" || e.QueryStringParameters["x"] != "2" ||
		e.RequestContext.Stage != "mcp" || e.RequestContext.Path != "/mcp/mcp" || e.RequestContext.Identity.SourceIP != "192.0.2.1" {
		t.Errorf("event = %+v", e)
	}
	// What RESTRequest makes of the event is the request it came from.
	out, err := apigw.RESTRequest(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(out.Body)
	if out.Method != "POST" || out.URL.String() != "/mcp?x=1&x=2&y=3" || out.Host != "api.example.com" || string(body) != `{"jsonrpc":"2.0"}` ||
		!cmp.Equal(out.Header.Values("Accept"), []string{"application/json", "text/event-stream"}) || out.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("request from the event: %s %s host %s body %s headers %v", out.Method, out.URL, out.Host, body, out.Header)
	}
}

func TestDecodeStreamRefusesWhatIsNotAPrelude(t *testing.T) {
	for name, in := range map[string]string{
		"no delimiter":          `{"statusCode":200}`,
		"a short delimiter":     "{\"statusCode\":200}\x00\x00\x00",
		"not JSON":              "status 200\x00\x00\x00\x00\x00\x00\x00\x00",
		"a prelude over 64 KiB": `{"headers":{"x":"` + strings.Repeat("a", 70<<10) + `"}}` + "\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := apigw.DecodeStream(strings.NewReader(in)); err == nil {
				t.Error("decoded")
			}
		})
	}
	p, body, err := apigw.DecodeStream(bytes.NewReader(append([]byte(`{"headers":{"A":"1"}}`), append(apigw.StreamDelimiter, "\x00body"...)...)))
	b, _ := io.ReadAll(body)
	if err != nil || p.StatusCode != 200 || p.Header().Get("A") != "1" || string(b) != "\x00body" {
		t.Errorf("decoded %+v %q %v; want status 200 by default and the body after exactly eight NULs", p, b, err)
	}
}
