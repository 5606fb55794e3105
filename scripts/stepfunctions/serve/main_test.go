package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/infra"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

type echoIn struct {
	Question string `json:"question"`
}

type echoOut struct {
	Question  string `json:"question"`
	Rephrased bool   `json:"rephrased"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
}

// testServer serves one stand-in function, vector/rephrase, which echoes
// the question.
func testServer(t *testing.T) (*server, *lambdaapi.Invoker) {
	t.Helper()
	tool := &catalog.Tool{
		Name: "optimizer_vs-rephrase", Title: "r", Description: "A stand-in.", Family: "vector", Function: "vector/rephrase",
		InputSchema: toolschema.JSON[echoIn](nil), OutputSchema: toolschema.JSON[echoOut](nil),
		Visibility: catalog.Internal, Limits: catalog.Limits{Timeout: 5 * time.Second, MemoryMB: 128},
	}
	h := lambdafn.Tool(tool, lambdafn.Deps{}, func(_ context.Context, _ tenant.Caller, in echoIn) (echoOut, error) {
		return echoOut{Question: in.Question + "?", Rephrased: true, Provider: "echo", Model: "e1"}, nil
	})
	s, err := newServer([]lambdafn.Function{{Path: "vector/rephrase", Build: func(lambdafn.Deps) lambda.Handler { return h }}}, lambdafn.Deps{}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	s.self = srv.URL
	cfg := aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}
	return s, lambdaapi.New(cfg, Prefix)
}

func setFaults(t *testing.T, s *server, faults map[string]string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	body, _ := json.Marshal(faults)
	s.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/faults", bytes.NewReader(body)))
	return rec.Code
}

func TestTheServerAnswersAsTheLambdaInvokeApiWithItsFaults(t *testing.T) {
	req := &invoke.Request{Method: invoke.MethodCallTool, Tool: "optimizer_vs-rephrase", Arguments: json.RawMessage(`{"question":"q"}`),
		Caller: tenant.Caller{Tenant: "demo", Principal: "ci"}, RequestID: "r", TraceID: "t"}
	tests := []struct {
		name     string
		function string
		fault    string
		check    func(t *testing.T, resp *invoke.Response, err error)
	}{
		{"a call answers the real handler's response", "vector/rephrase", "", func(t *testing.T, resp *invoke.Response, err error) {
			if err != nil || resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"structuredContent":{"question":"q?"`)) {
				t.Errorf("Invoke = %+v, %v; want the echoed question", resp, err)
			}
		}},
		{"function-error fails the function outright", "vector/rephrase", FunctionError, func(t *testing.T, resp *invoke.Response, err error) {
			var fe *invoke.FunctionError
			if !errors.As(err, &fe) || fe.Type != "Runtime.ExitError" {
				t.Errorf("Invoke = %+v, %v; want a Runtime.ExitError function error", resp, err)
			}
		}},
		{"tool-error makes the real tool refuse its arguments", "vector/rephrase", ToolError, func(t *testing.T, resp *invoke.Response, err error) {
			if err != nil || resp.Error == nil || resp.Error.Kind != "invalid_argument" || !bytes.Contains(resp.Result, []byte(`"isError":true`)) {
				t.Errorf("Invoke = %+v, %v; want an isError answer classified invalid_argument", resp, err)
			}
		}},
		{"tool-unavailable answers a tool error classified unavailable", "vector/rephrase", ToolUnavailable, func(t *testing.T, resp *invoke.Response, err error) {
			if err != nil || resp.Error == nil || resp.Error.Kind != "unavailable" || !bytes.Contains(resp.Result, []byte(`"isError":true`)) {
				t.Errorf("Invoke = %+v, %v; want an isError answer classified unavailable", resp, err)
			}
		}},
		{"bare-is-error answers isError without an error member", "vector/rephrase", BareIsError, func(t *testing.T, resp *invoke.Response, err error) {
			if err != nil || resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"isError":true`)) {
				t.Errorf("Invoke = %+v, %v; want isError and no error member", resp, err)
			}
		}},
		{"malformed answers a success without the step's fields", "vector/rephrase", Malformed, func(t *testing.T, resp *invoke.Response, err error) {
			if err != nil || resp.Error != nil || bytes.Contains(resp.Result, []byte(`"isError"`)) || bytes.Contains(resp.Result, []byte(`"question"`)) {
				t.Errorf("Invoke = %+v, %v; want a success without a question", resp, err)
			}
		}},
		{"throttle-once refuses the first call with TooManyRequestsException", "vector/rephrase", ThrottleOnce, func(t *testing.T, resp *invoke.Response, err error) {
			var api smithy.APIError
			if !errors.As(err, &api) || api.ErrorCode() != "TooManyRequestsException" {
				t.Errorf("Invoke = %+v, %v; want TooManyRequestsException", resp, err)
			}
		}},
		{"a function the build lacks is ResourceNotFoundException", "vector/grade", "", func(t *testing.T, resp *invoke.Response, err error) {
			var api smithy.APIError
			if !errors.As(err, &api) || api.ErrorCode() != "ResourceNotFoundException" {
				t.Errorf("Invoke = %+v, %v; want ResourceNotFoundException", resp, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, inv := testServer(t)
			faults := map[string]string{}
			if tc.fault != "" {
				faults[tc.function] = tc.fault
			}
			if code := setFaults(t, s, faults); code != http.StatusNoContent {
				t.Fatalf("POST /faults: %d", code)
			}
			resp, err := inv.Invoke(context.Background(), tc.function, req)
			tc.check(t, resp, err)
		})
	}
	s, _ := testServer(t)
	if code := setFaults(t, s, map[string]string{"vector/rephrase": "explode"}); code != http.StatusBadRequest {
		t.Errorf("POST /faults with an unknown fault: %d, want 400", code)
	}
}

func TestThrottleOnceRefusesOnlyTheFirstCallAndThrottleAlwaysEvery(t *testing.T) {
	req := &invoke.Request{Method: invoke.MethodCallTool, Tool: "optimizer_vs-rephrase", Arguments: json.RawMessage(`{"question":"q"}`),
		Caller: tenant.Caller{Tenant: "demo", Principal: "ci"}}
	for _, tc := range []struct {
		fault string
		want  []bool // refused, per call
	}{
		{ThrottleOnce, []bool{true, false, false}},
		{ThrottleAlways, []bool{true, true, true}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			s, inv := testServer(t)
			setFaults(t, s, map[string]string{"vector/rephrase": tc.fault})
			var got []bool
			for range tc.want {
				_, err := inv.Invoke(context.Background(), "vector/rephrase", req)
				var api smithy.APIError
				got = append(got, errors.As(err, &api) && api.ErrorCode() == "TooManyRequestsException")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refused calls mismatch (-want +got):\n%s", diff)
			}
			rec := httptest.NewRecorder()
			s.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/calls", nil))
			if want := fmt.Sprintf(`{"vector/rephrase":%d}`, len(tc.want)); rec.Body.String() != want {
				t.Errorf("GET /calls = %s, want %s", rec.Body, want)
			}
		})
	}
}

func TestASeedCallToAFunctionTheBuildLacksFails(t *testing.T) {
	s, _ := testServer(t)
	file := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(file, []byte(`[{"function":"vector/store_create","tool":"vector_store_create","arguments":{"alias":"kb"}}]`), 0o600)
	if err := s.seed(file, tenant.Caller{Tenant: "demo", Principal: "ci"}); err == nil || !strings.Contains(err.Error(), "no function vector/store_create") {
		t.Errorf("seed: %v, want an error naming the missing function", err)
	}
}

func TestRunLocalRunsTheGoInterpreterThroughTheServer(t *testing.T) {
	s, _ := testServer(t)
	input := `{"request":{"caller":{"tenant":"demo","principal":"ci"},"trace_id":"t","request_id":"r"},"question":"q","top_k":3,"mode":"hybrid"}`
	body, _ := json.Marshal(map[string]any{"definition": json.RawMessage(infra.RAGPipeline), "input": json.RawMessage(input)})
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run-local", bytes.NewReader(body)))
	var got struct {
		Output json.RawMessage
		Error  string
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Error != "" {
		t.Fatalf("POST /run-local: %v %s", err, rec.Body)
	}
	out, err := pipeline.DecodeOutput(got.Output)
	if err != nil {
		t.Fatal(err)
	}
	// The rephrase step answers through the server; the two it lacks fall back.
	want := pipeline.Output{
		Question: "q", ContextInput: "q?", Rephrased: true, Documents: []pipeline.Document{}, SearchedStores: []string{},
		Relevant: "yes", Degraded: []string{"retrieve", "grade"}, Steps: pipeline.Steps{Rephrase: pipeline.StepModel{Provider: "echo", Model: "e1"}},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
}
