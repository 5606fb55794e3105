package apigw_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
)

func TestAnEventBecomesARequestAndTheResponseAnAnswer(t *testing.T) {
	var got struct {
		method, url, host, body, remote, proto string
		header                                 http.Header
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.url, got.host, got.body, got.remote = r.Method, r.URL.String(), r.Host, string(b), r.RemoteAddr
		got.header, got.proto = r.Header, r.Header.Get("X-Forwarded-Proto")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Add("Vary", "Origin")
		w.Header().Add("Vary", "Accept")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "event: message\ndata: {}\n\n")
	})
	resp, err := apigw.Handler(h)(context.Background(), events.APIGatewayV2HTTPRequest{
		RawPath:         "/mcp",
		RawQueryString:  "x=1&y=2",
		Cookies:         []string{"c=3", "d=4"},
		Headers:         map[string]string{"host": "abc.execute-api.eu-west-1.amazonaws.com", "content-type": "application/json", "mcp-protocol-version": "2025-11-25"},
		Body:            base64.StdEncoding.EncodeToString([]byte(`{"jsonrpc":"2.0"}`)),
		IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp", SourceIP: "203.0.113.9"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.method != "POST" || got.url != "/mcp?x=1&y=2" || got.host != "abc.execute-api.eu-west-1.amazonaws.com" ||
		got.body != `{"jsonrpc":"2.0"}` || got.remote != "203.0.113.9:0" || got.proto != "https" {
		t.Errorf("request = %+v", got)
	}
	if got.header.Get("Mcp-Protocol-Version") != "2025-11-25" || got.header.Get("Cookie") != "c=3; d=4" {
		t.Errorf("request headers = %v", got.header)
	}
	want := events.APIGatewayV2HTTPResponse{
		StatusCode: http.StatusAccepted,
		Headers:    map[string]string{"Content-Type": "text/event-stream", "Vary": "Origin, Accept"},
		Cookies:    []string{"a=1", "b=2"},
		Body:       "event: message\ndata: {}\n\n",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response mismatch (-want +got):\n%s", diff)
	}
}

func TestBinaryBodiesTravelAsBase64(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G', 0})
	})
	resp, err := apigw.Handler(h)(context.Background(), events.APIGatewayV2HTTPRequest{
		RawPath: "/x", RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET"}},
	})
	if err != nil || !resp.IsBase64Encoded || resp.Body != base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G', 0}) || resp.StatusCode != 200 {
		t.Errorf("response = %+v, %v", resp, err)
	}
	bad, _ := apigw.Handler(h)(context.Background(), events.APIGatewayV2HTTPRequest{Body: "%%%", IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST"}}})
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("an undecodable body answered %d, want 400", bad.StatusCode)
	}
}
