package config_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/invoker"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

func TestWithoutAFunctionPrefixThereIsNoInvoker(t *testing.T) {
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	inv, err := invoker.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if inv != nil {
		t.Errorf("Invoker = %T, want nil: locally the in-process one is wired by package local", inv)
	}
}

// TestOpenWithAFunctionPrefixInvokesTheStacksFunctions points the Lambda
// client at a test server through AWS_ENDPOINT_URL_LAMBDA and checks that a
// function's invoker calls the stack's function by its full name.
func TestAFunctionPrefixGivesAnInvokerOfTheStacksFunctions(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Write([]byte(`{"result":{"content":[]}}`))
	}))
	defer srv.Close()
	fakeAWS(t, "AWS_ENDPOINT_URL_LAMBDA", srv.URL)
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	cfg.FunctionPrefix = "sb-"
	inv, err := invoker.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if inv == nil {
		t.Fatal("Invoker is nil")
	}
	if _, err := inv.Invoke(context.Background(), "vector/search_group", &invoke.Request{Method: invoke.MethodCallTool}); err != nil {
		t.Fatal(err)
	}
	if want := "/2015-03-31/functions/sb-vector-search-group/invocations"; path != want {
		t.Errorf("invoked %s, want %s", path, want)
	}
}

// fakeAWS points the AWS service whose endpoint variable is endpointVar at
// url, with static credentials and no configuration files.
func fakeAWS(t *testing.T, endpointVar, url string) {
	t.Helper()
	t.Setenv(endpointVar, url)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKID")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}
