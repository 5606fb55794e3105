package stepfunctions_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

const testARN = "arn:aws:states:us-east-1:123456789012:stateMachine:switchboard-rag-pipeline"

var (
	caller = tenant.Caller{Tenant: "acme", Principal: "alice"}
	doc    = pipeline.Document{DocID: "d1", ChunkID: "d1#0", Content: "Rotate keys every 90 days.", Score: 0.5, Metadata: map[string]string{"lang": "en"}, Store: "kb"}
)

// sfnServer speaks the Step Functions JSON 1.0 protocol for
// StartSyncExecution, answering with status, output, error and cause, or
// with an API error when apiError is set. It records each request's input.
func sfnServer(t *testing.T, answer map[string]any, status int) (*httptest.Server, *[]map[string]any) {
	t.Helper()
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/" ||
			r.Header.Get("X-Amz-Target") != "AWSStepFunctions.StartSyncExecution" ||
			r.Header.Get("Content-Type") != "application/x-amz-json-1.0" ||
			!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			t.Errorf("unexpected request %s %s target %q type %q", r.Method, r.URL.Path, r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"))
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("request body is not JSON: %s", body)
		}
		seen = append(seen, req)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// sfnConfig is the configuration that points the Runner at url.
func sfnConfig(url string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}
}

func TestRunStartsASyncExecutionAndDecodesItsOutput(t *testing.T) {
	want := pipeline.Output{
		Question: "q?", ContextInput: "q?", Documents: []pipeline.Document{doc}, SearchedStores: []string{"kb"},
		Relevant: "yes", Degraded: []string{"rephrase", "grade"},
		Steps: pipeline.Steps{Retrieve: pipeline.StepModel{Provider: "offline", Model: "hash-384"}},
	}
	// The state machine reports the steps that fell back as flags.
	var machine map[string]any
	b, _ := json.Marshal(want)
	json.Unmarshal(b, &machine)
	machine["fallback"] = map[string]bool{"rephrase": true, "retrieve": false, "grade": true}
	out, _ := json.Marshal(machine)
	srv, seen := sfnServer(t, map[string]any{
		"executionArn": testARN + ":x", "stateMachineArn": testARN, "status": "SUCCEEDED",
		"output": string(out), "startDate": 1.7e9, "stopDate": 1.7e9,
	}, http.StatusOK)
	r := stepfunctions.New(sfnConfig(srv.URL), testARN)
	in := pipeline.Input{Request: pipeline.Request{Caller: caller, TraceID: "t", RequestID: "r"}, Question: "q?"}
	got, err := r.Run(context.Background(), in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
	if len(*seen) != 1 {
		t.Fatalf("%d requests, want 1", len(*seen))
	}
	req := (*seen)[0]
	if req["stateMachineArn"] != testARN {
		t.Errorf("stateMachineArn = %v, want %s", req["stateMachineArn"], testARN)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(req["input"].(string)), &sent); err != nil {
		t.Fatal(err)
	}
	wantSent := map[string]any{
		"request":  map[string]any{"caller": map[string]any{"tenant": "acme", "principal": "alice"}, "trace_id": "t", "request_id": "r"},
		"question": "q?", "top_k": float64(pipeline.DefaultTopK), "mode": pipeline.DefaultMode,
	}
	if diff := cmp.Diff(wantSent, sent); diff != "" {
		t.Errorf("execution input mismatch (-want +got):\n%s", diff)
	}
}

func TestRunReportsFailedExecutionsAndApiErrors(t *testing.T) {
	tests := []struct {
		name   string
		answer map[string]any
		status int
		check  func(t *testing.T, err error)
	}{
		{"a failed execution", map[string]any{"executionArn": testARN + ":x", "status": "FAILED", "error": "States.Runtime", "cause": "bad path", "startDate": 1.7e9, "stopDate": 1.7e9}, http.StatusOK,
			func(t *testing.T, err error) {
				var e *pipeline.ExecutionError
				if !errors.As(err, &e) || *e != (pipeline.ExecutionError{Status: "FAILED", Err: "States.Runtime", Cause: "bad path"}) {
					t.Errorf("err = %v, want the FAILED execution's error and cause", err)
				}
			}},
		{"a timed-out execution", map[string]any{"executionArn": testARN + ":x", "status": "TIMED_OUT", "startDate": 1.7e9, "stopDate": 1.7e9}, http.StatusOK,
			func(t *testing.T, err error) {
				var e *pipeline.ExecutionError
				if !errors.As(err, &e) || e.Status != "TIMED_OUT" {
					t.Errorf("err = %v, want a TIMED_OUT pipeline.ExecutionError", err)
				}
			}},
		{"a state machine that does not exist", map[string]any{"__type": "com.amazonaws.swf.service.v2.model#StateMachineDoesNotExist", "message": "no such machine"}, http.StatusBadRequest,
			func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "StateMachineDoesNotExist") || !strings.Contains(err.Error(), testARN) {
					t.Errorf("err = %v, want the API error naming the state machine", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := sfnServer(t, tc.answer, tc.status)
			_, err := stepfunctions.New(sfnConfig(srv.URL), testARN).Run(context.Background(), pipeline.Input{Question: "q"})
			tc.check(t, err)
		})
	}
}

// An execution joins its caller's X-Ray trace (StartSyncExecution's
// traceHeader): the call's header from the function that runs the
// pipeline, else the trace its W3C trace id maps to.
func TestRunPassesTheCallersXRayTrace(t *testing.T) {
	const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	tests := []struct {
		name    string
		ctx     context.Context
		traceID string
		want    any
	}{
		{"the call's", callcontext.NewContext(context.Background(), callcontext.Call{XRay: header}), "4bf92f3577b34da6a3ce929d0e0e4736", header},
		{"the client's, mapped", context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736"},
		{"none", context.Background(), "t", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := sfnServer(t, map[string]any{"executionArn": testARN + ":x", "status": "SUCCEEDED", "output": `{"question":"q?"}`, "startDate": 1.7e9, "stopDate": 1.7e9}, http.StatusOK)
			in := pipeline.Input{Request: pipeline.Request{Caller: caller, TraceID: tc.traceID, RequestID: "r"}, Question: "q?"}
			if _, err := stepfunctions.New(sfnConfig(srv.URL), testARN).Run(tc.ctx, in); err != nil {
				t.Fatal(err)
			}
			if got := (*seen)[0]["traceHeader"]; got != tc.want {
				t.Errorf("traceHeader %v, want %v", got, tc.want)
			}
		})
	}
}

// The stand-in answers the Runner as the service does: the execution's
// output, a failed execution's error and cause, and the service's error.
func TestHandlerAnswersAsTheServiceDoes(t *testing.T) {
	tests := []struct {
		name    string
		execute func(ctx context.Context, input []byte) ([]byte, error)
		check   func(t *testing.T, out pipeline.Output, err error)
	}{
		{"an execution that succeeds gives its output", func(_ context.Context, input []byte) ([]byte, error) {
			var in pipeline.Input
			json.Unmarshal(input, &in)
			return json.Marshal(map[string]any{"question": in.Question, "context_input": in.Question + "!", "relevant": "yes"})
		}, func(t *testing.T, out pipeline.Output, err error) {
			if err != nil || out.Question != "q?" || out.ContextInput != "q?!" || out.Relevant != "yes" {
				t.Errorf("Run = %+v, %v; want the execution's output for its input", out, err)
			}
		}},
		{"an execution that fails gives its error and cause", func(context.Context, []byte) ([]byte, error) {
			return nil, &pipeline.ExecutionError{Status: "FAILED", Err: "States.Runtime", Cause: "bad path"}
		}, func(t *testing.T, _ pipeline.Output, err error) {
			var e *pipeline.ExecutionError
			if !errors.As(err, &e) || *e != (pipeline.ExecutionError{Status: "FAILED", Err: "States.Runtime", Cause: "bad path"}) {
				t.Errorf("err = %v, want the FAILED execution's error and cause", err)
			}
		}},
		{"any other error is the service's", func(context.Context, []byte) ([]byte, error) {
			return nil, errors.New("disk full")
		}, func(t *testing.T, _ pipeline.Output, err error) {
			var e *pipeline.ExecutionError
			if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "disk full") {
				t.Errorf("err = %v, want the service's error", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(stepfunctions.Handler(tc.execute))
			defer srv.Close()
			out, err := stepfunctions.New(sfnConfig(srv.URL), testARN).Run(context.Background(), pipeline.Input{Request: pipeline.Request{Caller: caller}, Question: "q?"})
			tc.check(t, out, err)
		})
	}
}
