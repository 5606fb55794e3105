package invoke_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// recorder is a Lambda handler that remembers the payloads it was handed.
type recorder struct {
	mu       sync.Mutex
	payloads [][]byte
	answer   func(payload []byte) ([]byte, error)
}

func (r *recorder) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	r.mu.Lock()
	r.payloads = append(r.payloads, append([]byte(nil), payload...))
	r.mu.Unlock()
	return r.answer(payload)
}

func (r *recorder) last() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.payloads[len(r.payloads)-1]
}

// lambdaAPI is an HTTP server speaking the Lambda Invoke API
// (POST /2015-03-31/functions/{name}/invocations). It records what arrives
// and answers through fn, or with a function error when fnErr is set.
type lambdaAPI struct {
	*httptest.Server
	mu     sync.Mutex
	name   string
	body   []byte
	answer func(payload []byte) (status int, header http.Header, body []byte)
}

func newLambdaAPI(t *testing.T, answer func([]byte) (int, http.Header, []byte)) *lambdaAPI {
	api := &lambdaAPI{answer: answer}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
		name, ok2 := strings.CutSuffix(name, "/invocations")
		if r.Method != http.MethodPost || !ok || !ok2 {
			http.Error(w, "not the Invoke API: "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		api.mu.Lock()
		api.name, api.body = name, body
		api.mu.Unlock()
		status, header, out := api.answer(body)
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.WriteHeader(status)
		w.Write(out)
	}))
	t.Cleanup(api.Close)
	return api
}

func newLambdaInvoker(api *lambdaAPI, prefix string) *lambdaapi.Invoker {
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(api.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}
	return lambdaapi.New(cfg, prefix)
}

func sampleRequest() *invoke.Request {
	return &invoke.Request{
		Method:          invoke.MethodCallTool,
		Tool:            "memory_add_message",
		Arguments:       json.RawMessage(`{"conversation_id":"chat_1","role":"user","content":"héllo <b>&</b>"}`),
		Caller:          tenant.Caller{Tenant: "acme", Principal: "alice", Scopes: []string{"memory"}},
		RequestID:       "req-1",
		TraceID:         "4bf92f3577b34da6a3ce929d0e0e4736",
		ProtocolVersion: "2025-11-25",
	}
}

func echoAnswer(payload []byte) ([]byte, error) {
	var req invoke.Request
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, err
	}
	return json.Marshal(invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"` + req.Tool + `"}]}`)})
}

func TestTheLambdaInvokerSendsExactlyTheEnvelopeTheLocalOneHandsOver(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{answer: echoAnswer}
	local := invoke.NewLocal(map[string]lambda.Handler{"memory/add_message": rec}, nil)
	api := newLambdaAPI(t, func(payload []byte) (int, http.Header, []byte) {
		out, err := rec.Invoke(ctx, payload) // the same handler, behind the wire
		if err != nil {
			return 500, nil, []byte(err.Error())
		}
		return 200, nil, out
	})
	remote := newLambdaInvoker(api, "switchboard-")

	localResp, err := local.Invoke(ctx, "memory/add_message", sampleRequest())
	if err != nil {
		t.Fatalf("local Invoke: %v", err)
	}
	handedOver := rec.last()
	remoteResp, err := remote.Invoke(ctx, "memory/add_message", sampleRequest())
	if err != nil {
		t.Fatalf("lambda Invoke: %v", err)
	}
	if api.name != "switchboard-memory-add-message" {
		t.Errorf("invoked function %q, want switchboard-memory-add-message", api.name)
	}
	if string(api.body) != string(handedOver) {
		t.Errorf("the wire carried\n%s\nbut the local invoker handed over\n%s", api.body, handedOver)
	}
	if diff := cmp.Diff(localResp, remoteResp); diff != "" {
		t.Errorf("responses differ (-local +lambda):\n%s", diff)
	}
	var got invoke.Request
	if err := json.Unmarshal(api.body, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sampleRequest(), &got); diff != "" {
		t.Errorf("the envelope does not round-trip (-sent +received):\n%s", diff)
	}
}

func TestFunctionFailuresBecomeFunctionErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		inv      func(t *testing.T) invoke.Invoker
		wantType string
		wantMsg  string
	}{
		{"LambdaUnhandledError", func(t *testing.T) invoke.Invoker {
			return newLambdaInvoker(newLambdaAPI(t, func([]byte) (int, http.Header, []byte) {
				return 200, http.Header{"X-Amz-Function-Error": {"Unhandled"}},
					[]byte(`{"errorMessage":"RequestId: 1 Error: Runtime exited with error: exit status 2","errorType":"Runtime.ExitError"}`)
			}), "sb-")
		}, "Runtime.ExitError", "Runtime exited"},
		{"LambdaErrorWithoutJSON", func(t *testing.T) invoke.Invoker {
			return newLambdaInvoker(newLambdaAPI(t, func([]byte) (int, http.Header, []byte) {
				return 200, http.Header{"X-Amz-Function-Error": {"Unhandled"}}, []byte(`killed`)
			}), "sb-")
		}, "Unhandled", "killed"},
		{"LambdaAnswerThatIsNotAResponse", func(t *testing.T) invoke.Invoker {
			return newLambdaInvoker(newLambdaAPI(t, func([]byte) (int, http.Header, []byte) {
				return 200, nil, []byte(`{"unexpected":true}`)
			}), "sb-")
		}, "InvalidResponse", "neither a result nor an error"},
		{"LocalHandlerError", func(t *testing.T) invoke.Invoker {
			return invoke.NewLocal(map[string]lambda.Handler{"f": lambda.NewHandler(func(context.Context, invoke.Request) (invoke.Response, error) {
				return invoke.Response{}, errors.New("boom")
			})}, nil)
		}, "errorString", "boom"},
		{"LocalPanic", func(t *testing.T) invoke.Invoker {
			return invoke.NewLocal(map[string]lambda.Handler{"f": lambda.NewHandler(func(context.Context, invoke.Request) (invoke.Response, error) {
				panic("nil map")
			})}, nil)
		}, "Runtime.Panic", "nil map"},
		{"LocalTimeout", func(t *testing.T) invoke.Invoker {
			return invoke.NewLocal(map[string]lambda.Handler{"f": lambda.NewHandler(func(ctx context.Context, _ invoke.Request) (invoke.Response, error) {
				<-ctx.Done()
				return invoke.Response{}, ctx.Err()
			})}, &invoke.LocalOptions{Timeout: func(string) time.Duration { return 20 * time.Millisecond }})
		}, "Sandbox.Timedout", "Task timed out"},
		{"LocalUnknownFunction", func(t *testing.T) invoke.Invoker {
			return invoke.NewLocal(nil, nil)
		}, "ResourceNotFoundException", "no such function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.inv(t).Invoke(ctx, "f", sampleRequest())
			var fe *invoke.FunctionError
			if !errors.As(err, &fe) {
				t.Fatalf("Invoke error = %v, want a *FunctionError", err)
			}
			if fe.Type != tc.wantType || !strings.Contains(fe.Message, tc.wantMsg) {
				t.Errorf("FunctionError = %+v, want type %q and a message containing %q", fe, tc.wantType, tc.wantMsg)
			}
		})
	}
}

func TestTheLocalInvokerGivesHandlersALambdaContextAndDeadline(t *testing.T) {
	var deadline bool
	h := lambda.NewHandler(func(ctx context.Context, req invoke.Request) (invoke.Response, error) {
		_, deadline = ctx.Deadline()
		return invoke.Response{Result: json.RawMessage(`{}`)}, nil
	})
	inv := invoke.NewLocal(map[string]lambda.Handler{"f": h}, &invoke.LocalOptions{Timeout: func(string) time.Duration { return time.Second }})
	if _, err := inv.Invoke(context.Background(), "f", sampleRequest()); err != nil {
		t.Fatal(err)
	}
	if !deadline {
		t.Error("the handler's context has no deadline; Lambda always gives one")
	}
}

func TestFunctionNamesFollowOneRule(t *testing.T) {
	for path, want := range map[string][2]string{
		"memory/add_message":         {"memory-add-message", "MemoryAddMessageFunction"},
		"operations/get_audit_trace": {"operations-get-audit-trace", "OperationsGetAuditTraceFunction"},
		"memory/resource":            {"memory-resource", "MemoryResourceFunction"},
	} {
		if got := invoke.FunctionName(path); got != want[0] {
			t.Errorf("FunctionName(%q) = %q, want %q", path, got, want[0])
		}
		if got := invoke.LogicalID(path); got != want[1] {
			t.Errorf("LogicalID(%q) = %q, want %q", path, got, want[1])
		}
	}
}

// A function with reserved concurrency runs that many calls at once; one
// more is refused at once, as Lambda throttles it, with the error Lambda's
// API gives (code TooManyRequestsException); other functions are not held
// up, and a slot frees when a call ends.
func TestTheLocalInvokerRefusesACallPastTheReservedConcurrency(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	blocking := lambda.NewHandler(func(ctx context.Context, _ invoke.Request) (invoke.Response, error) {
		started <- struct{}{}
		<-release
		return invoke.Response{Result: json.RawMessage(`{}`)}, nil
	})
	inv := invoke.NewLocal(map[string]lambda.Handler{"limited": blocking, "free": blocking}, &invoke.LocalOptions{
		ReservedConcurrency: func(f string) int {
			if f == "limited" {
				return 2
			}
			return 0
		},
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := inv.Invoke(ctx, "limited", sampleRequest()); err != nil {
				t.Errorf("a call within the limit: %v", err)
			}
		})
	}
	<-started
	<-started
	_, err := inv.Invoke(ctx, "limited", sampleRequest())
	var te *invoke.ThrottledError
	var api smithy.APIError
	if !errors.As(err, &te) || te.Limit != 2 || !errors.As(err, &api) || api.ErrorCode() != "TooManyRequestsException" {
		t.Errorf("the third call got %v, want it throttled with TooManyRequestsException", err)
	}
	wg.Go(func() {
		if _, err := inv.Invoke(ctx, "free", sampleRequest()); err != nil {
			t.Errorf("a function without reserved concurrency: %v", err)
		}
	})
	<-started
	close(release)
	wg.Wait()
	if _, err := inv.Invoke(ctx, "limited", sampleRequest()); err != nil {
		t.Errorf("after the calls ended: %v", err)
	}
}
