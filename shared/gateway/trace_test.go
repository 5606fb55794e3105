package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The gateway invokes a tool's function within the caller's X-Ray trace
// (X-Amzn-Trace-Id on the Invoke request, which the Lambda stand-in
// records): the trace of the gateway's own Lambda invocation, which
// aws-lambda-go puts in the request's context, or else the one the client's
// traceparent maps to; on the fast path and the go-sdk's alike.
func TestTheGatewayInvokesFunctionsWithinTheCallersXRayTrace(t *testing.T) {
	const lambdaHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	var mu sync.Mutex
	var seen []string
	lambda := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Amzn-Trace-Id"))
		mu.Unlock()
		fmt.Fprint(w, `{"result":{"_meta":{"`+invoke.TraceMetaKey+`":"t"},"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`)
	}))
	t.Cleanup(lambda.Close)
	gw, err := gateway.New(gateway.Options{
		Catalog: catalog.Default(),
		Invoker: lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(lambda.URL), RetryMaxAttempts: 1,
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}, "sb-"),
		Anonymous: &tenant.Caller{Tenant: "acme", Principal: "p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		inLambda    bool
		traceparent string
		want        string
	}{
		{"in a Lambda invocation", true, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", lambdaHeader},
		{"from the client's traceparent", false, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736"},
	} {
		for _, sdkPath := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, go-sdk path %v", tc.name, sdkPath), func(t *testing.T) {
				h := gw.Handler()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.inLambda {
						//lint:ignore SA1029 the key aws-lambda-go puts the invocation's trace header under
						r = r.WithContext(context.WithValue(r.Context(), "x-amzn-trace-id", lambdaHeader))
					}
					h.ServeHTTP(w, r)
				}))
				defer srv.Close()
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(callBody("memory_get_context", sdkPath)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				req.Header.Set("Traceparent", tc.traceparent)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || isToolError(string(body)) {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				mu.Lock()
				got := seen[len(seen)-1]
				mu.Unlock()
				if got != tc.want {
					t.Errorf("X-Amzn-Trace-Id %q, want %q", got, tc.want)
				}
			})
		}
	}
}
