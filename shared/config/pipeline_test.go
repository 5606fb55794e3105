package config_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
)

func TestPipelineArnIsReadAndChecked(t *testing.T) {
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:switchboard-RagPipeline"
	cfg := config.FromEnv(func(k string) string {
		return map[string]string{config.EnvTable: "t", config.EnvPipelineARN: arn}[k]
	})
	if cfg.PipelineARN != arn {
		t.Errorf("PipelineARN = %q, want %q", cfg.PipelineARN, arn)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	cfg.PipelineARN = "switchboard-RagPipeline"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), config.EnvPipelineARN) {
		t.Errorf("Validate of a name that is no ARN: %v, want an error naming %s", err, config.EnvPipelineARN)
	}
}

func TestOpenWithoutAPipelineArnLeavesThePipelineToLaunch(t *testing.T) {
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	deps, closeFn, err := cfg.Open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if deps.Pipeline != nil {
		t.Errorf("Pipeline = %T, want nil: locally launch wires pipeline.Local", deps.Pipeline)
	}
}

// TestOpenWithAPipelineArnRunsTheStateMachine points the Step Functions
// client at a test server through AWS_ENDPOINT_URL_SFN, as an emulator
// would be, and checks that the runner reaches it (without the sync- host
// prefix, which a custom endpoint cannot take).
func TestOpenWithAPipelineArnRunsTheStateMachine(t *testing.T) {
	var target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target = r.Header.Get("X-Amz-Target")
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		json.NewEncoder(w).Encode(map[string]any{"status": "SUCCEEDED", "output": `{"question":"q","relevant":"yes","degraded":[]}`, "startDate": 1.7e9, "stopDate": 1.7e9})
	}))
	defer srv.Close()
	fakeAWS(t, "AWS_ENDPOINT_URL_SFN", srv.URL)
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	cfg.PipelineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:rag"
	deps, closeFn, err := cfg.Open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if _, ok := deps.Pipeline.(*pipeline.StepFunctions); !ok {
		t.Fatalf("Pipeline = %T, want *pipeline.StepFunctions", deps.Pipeline)
	}
	out, err := deps.Pipeline.Run(context.Background(), pipeline.Input{Question: "q"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Relevant != "yes" || target != "AWSStepFunctions.StartSyncExecution" {
		t.Errorf("Run = %+v with target %q, want the test server's output from StartSyncExecution", out, target)
	}
}
