package lambdagateway

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A call whose function cannot record itself is recorded by the gateway,
// for the function's family: Lambda's throttle as a throttle, a function
// that failed outright or an Invoke API that failed as a fault; an answer,
// even a tool error, is the function's to record.
func TestTheGatewayRecordsTheCallsAFunctionCannot(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   []string // in the record; none for no record
	}{
		{"an answer", func(w http.ResponseWriter) {
			w.Write([]byte(`{"result":{"content":[],"isError":true},"error":{"kind":"not_found","message":"m"}}`))
		}, nil},
		{"a throttle", func(w http.ResponseWriter) {
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"Rate Exceeded."}`))
		}, []string{`"Throttles":1`, `"ErrorKind":"rate_limited"`}},
		{"a function that crashed", func(w http.ResponseWriter) {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`))
		}, []string{`"Faults":1`, `"ErrorKind":"internal"`, `"ColdStarts":0`}},
		{"an Invoke API that failed", func(w http.ResponseWriter) {
			w.Header().Set("X-Amzn-ErrorType", "ServiceException")
			w.WriteHeader(http.StatusInternalServerError)
		}, []string{`"Faults":1`, `"ErrorKind":"unavailable"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.answer(w) }))
			defer srv.Close()
			var out bytes.Buffer
			inv := &measuredInvoker{inv: lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
				Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}, "sb-"), cat: catalog.Default(), m: metrics.New(&out)}
			req := &invoke.Request{Method: invoke.MethodCallTool, Tool: "rag_basic", Arguments: []byte(`{}`), Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "t1"}
			tool, _ := catalog.Default().Tool("rag_basic")
			inv.InvokeRaw(context.Background(), tool.Function, req)
			if tc.want == nil {
				if out.Len() != 0 {
					t.Errorf("recorded %s", out.String())
				}
				return
			}
			for _, w := range append([]string{`"Family":"rag"`, `"Function":"rag_basic"`, `"tenant":"acme"`, `"trace_id":"t1"`}, tc.want...) {
				if !strings.Contains(out.String(), w) {
					t.Errorf("record %s lacks %s", out.String(), w)
				}
			}
		})
	}
}

// The gateway records each of its invocations, the first a cold start.
func TestTheGatewayRecordsEachInvocation(t *testing.T) {
	var out bytes.Buffer
	m := metrics.New(&out)
	h := measure(func(_ context.Context, fail bool) (string, error) {
		if fail {
			return "", errors.New("boom")
		}
		return "x", nil
	}, m)
	h(context.Background(), false)
	h(context.Background(), true)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d records, want 2", len(lines))
	}
	for i, want := range [][]string{{`"Family":"gateway"`, `"ColdStarts":1`, `"Errors":0`}, {`"ColdStarts":0`, `"Faults":1`}} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("record %d %s lacks %s", i, lines[i], w)
			}
		}
	}
}
