package lambdaapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var creds = credentials.NewStaticCredentialsProvider("AKID", "SECRET", "TOKEN")

func request() *invoke.Request {
	return &invoke.Request{Method: invoke.MethodCallTool, Tool: "memory_get_context", Arguments: []byte(`{"conversation_id":"c"}`),
		Caller: tenant.Caller{Tenant: "acme", Principal: "alice"}}
}

// verify checks that r carries a Signature Version 4 signature of its own
// content for the Lambda service in us-east-1, by signing it again.
func verify(t *testing.T, r *http.Request, body []byte) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKID/") || !strings.Contains(auth, "/us-east-1/lambda/aws4_request") {
		t.Errorf("Authorization %q is not for lambda in us-east-1", auth)
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.EscapedPath(), nil)
	again.ContentLength = r.ContentLength
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	sum := sha256.Sum256(body)
	c, _ := creds.Retrieve(context.Background())
	if err := v4.NewSigner().SignHTTP(context.Background(), c, again, hex.EncodeToString(sum[:]), "lambda", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	if got, want := auth, again.Header.Get("Authorization"); got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
}

func TestAnInvocationIsASignedCallOfTheInvokeAPI(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		path = r.URL.Path
		verify(t, r, body)
		w.Write([]byte(`{"result":{"content":[]}}`))
	}))
	defer srv.Close()
	inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}, "sb-")
	if _, err := inv.Invoke(context.Background(), "memory/get_context", request()); err != nil {
		t.Fatal(err)
	}
	if want := "/2015-03-31/functions/sb-memory-get-context/invocations"; path != want {
		t.Errorf("invoked %s, want %s", path, want)
	}
}

// InvokeRaw gives the function's answer as it wrote it, for the gateway's
// fast path; a function's error is an *invoke.FunctionError, as from Invoke.
func TestARawInvocationGivesTheAnswerAsTheFunctionWroteIt(t *testing.T) {
	const answer = `{"result":{"content":[{"type":"text","text":"a\u003cb"}]} }`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "crash") {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`))
			return
		}
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}, "sb-")
	out, err := inv.InvokeRaw(context.Background(), "memory/get_context", request())
	if err != nil || string(out) != answer {
		t.Errorf("InvokeRaw: %q, %v; want %q", out, err, answer)
	}
	var fe *invoke.FunctionError
	if _, err := inv.InvokeRaw(context.Background(), "memory/crash", request()); !errors.As(err, &fe) || fe.Type != "Runtime.ExitError" {
		t.Errorf("a function that crashed: %v, want its FunctionError", err)
	}
}

// A throttled call is retried as the SDK's client retries it; one throttled
// every time fails with Lambda's API error, as the SDK's client reports it.
func TestAThrottledCallIsRetriedThenReported(t *testing.T) {
	for _, tc := range []struct {
		name      string
		throttled int64
		calls     int64
		ok        bool
	}{
		{"throttled once", 1, 2, true},
		{"throttled every time", 100, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= tc.throttled {
					w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException:http://internal.amazon.com/coral/com.amazonaws.awslambda/")
					w.WriteHeader(http.StatusTooManyRequests)
					w.Write([]byte(`{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`))
					return
				}
				w.Write([]byte(`{"result":{"content":[]}}`))
			}))
			defer srv.Close()
			inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 2}, "sb-")
			_, err := inv.Invoke(context.Background(), "rag/basic", request())
			var api smithy.APIError
			switch {
			case tc.ok && err != nil:
				t.Errorf("Invoke: %v", err)
			case !tc.ok && (!errors.As(err, &api) || api.ErrorCode() != "TooManyRequestsException" || api.ErrorMessage() != "Rate Exceeded."):
				t.Errorf("Invoke: %v, want Lambda's TooManyRequestsException", err)
			}
			if calls.Load() != tc.calls {
				t.Errorf("%d calls, want %d", calls.Load(), tc.calls)
			}
		})
	}
}

// endpoints is a configuration source giving the Lambda API's endpoint, as
// the SDK's environment configuration does for AWS_ENDPOINT_URL_LAMBDA.
type endpoints map[string]string

func (e endpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	url, ok := e[sdkID]
	return url, ok, nil
}

func TestTheEndpointComesFromTheConfigurationThenTheRegion(t *testing.T) {
	var hit atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit.Store(true)
		w.Write([]byte(`{"result":{"content":[]}}`))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String("http://127.0.0.1:9"),
		ConfigSources: []any{endpoints{"Lambda": srv.URL}}}
	if _, err := lambdaapi.New(cfg, "sb-").Invoke(context.Background(), "memory/get_context", request()); err != nil || !hit.Load() {
		t.Errorf("Invoke: %v, reached the service's own endpoint: %v", err, hit.Load())
	}
}

// An invocation carries the caller's X-Ray trace in X-Amzn-Trace-Id, so
// that Lambda makes the invoked function part of it: the header of the
// Lambda invocation making the call, else the trace the client's W3C trace
// id maps to, else none. The request stays validly signed.
func TestAnInvocationCarriesTheCallersXRayTrace(t *testing.T) {
	const lambdaHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	//lint:ignore SA1029 the key aws-lambda-go puts the invocation's trace header under
	inLambda := context.WithValue(context.Background(), "x-amzn-trace-id", lambdaHeader)
	tests := []struct {
		name    string
		ctx     context.Context
		traceID string
		want    string
	}{
		{"from a Lambda invocation", inLambda, "4bf92f3577b34da6a3ce929d0e0e4736", lambdaHeader},
		{"from a client's traceparent alone", context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736"},
		{"from neither", context.Background(), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				verify(t, r, body)
				got = r.Header.Values("X-Amzn-Trace-Id")
				w.Write([]byte(`{"result":{"content":[]}}`))
			}))
			defer srv.Close()
			inv := lambdaapi.New(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}, "sb-")
			req := request()
			req.TraceID = tc.traceID
			if _, err := inv.Invoke(tc.ctx, "memory/get_context", req); err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("X-Amzn-Trace-Id %q, want %q", got, want)
			}
		})
	}
}
