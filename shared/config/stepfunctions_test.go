package config_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	sfnrunner "github.com/switchboard-dev/switchboard/shared/pipeline/stepfunctions"
)

func TestWithoutAPipelineArnThereIsNoStepFunctionsRunner(t *testing.T) {
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	r, err := stepfunctions.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		t.Errorf("Pipeline = %T, want nil: locally package local wires pipeline.Local", r)
	}
}

// TestOpenWithAPipelineArnRunsTheStateMachine points the Step Functions
// client at a test server through AWS_ENDPOINT_URL_SFN, as an emulator
// would be, and checks that the runner reaches it (without the sync- host
// prefix, which a custom endpoint cannot take).
func TestAPipelineArnGivesARunnerOfTheStateMachine(t *testing.T) {
	var target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target = r.Header.Get("X-Amz-Target")
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		json.NewEncoder(w).Encode(map[string]any{"status": "SUCCEEDED", "output": `{"question":"q","relevant":"yes","fallback":{"rephrase":false,"retrieve":false,"grade":false}}`, "startDate": 1.7e9, "stopDate": 1.7e9})
	}))
	defer srv.Close()
	fakeAWS(t, "AWS_ENDPOINT_URL_SFN", srv.URL)
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	cfg.PipelineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:rag"
	r, err := stepfunctions.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*sfnrunner.Runner); !ok {
		t.Fatalf("Pipeline = %T, want *stepfunctions.Runner", r)
	}
	out, err := r.Run(context.Background(), pipeline.Input{Question: "q"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Relevant != "yes" || target != "AWSStepFunctions.StartSyncExecution" {
		t.Errorf("Run = %+v with target %q, want the test server's output from StartSyncExecution", out, target)
	}
}
