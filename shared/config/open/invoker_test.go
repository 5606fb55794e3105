package open_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/open"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

func TestOpenWithoutAFunctionPrefixLeavesInvokingToLaunch(t *testing.T) {
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	deps, closeFn, err := open.Deps(context.Background(), &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if deps.Invoker != nil {
		t.Errorf("Invoker = %T, want nil: locally launch wires the in-process invoker", deps.Invoker)
	}
}

// TestOpenWithAFunctionPrefixInvokesTheStacksFunctions points the Lambda
// client at a test server through AWS_ENDPOINT_URL_LAMBDA and checks that a
// function's invoker calls the stack's function by its full name.
func TestOpenWithAFunctionPrefixInvokesTheStacksFunctions(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Write([]byte(`{"result":{"content":[]}}`))
	}))
	defer srv.Close()
	fakeAWS(t, "AWS_ENDPOINT_URL_LAMBDA", srv.URL)
	cfg := config.Local(filepath.Join(t.TempDir(), "data"))
	cfg.FunctionPrefix = "sb-"
	deps, closeFn, err := open.Deps(context.Background(), &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if deps.Invoker == nil {
		t.Fatal("Invoker is nil")
	}
	if _, err := deps.Invoker.Invoke(context.Background(), "vector/search_group", &invoke.Request{Method: invoke.MethodCallTool}); err != nil {
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

func TestLocalOpensEmbeddedStoresAndSaysTheSummariserIsOffline(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Local(filepath.Join(dir, "data"))
	var warn bytes.Buffer
	deps, closeFn, err := open.Deps(context.Background(), &cfg, &warn)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if deps.Table == nil || deps.Blobs == nil || deps.Summarizer == nil {
		t.Fatalf("Open = %+v, want a table, blobs and a summariser", deps)
	}
	if !strings.Contains(warn.String(), "WARNING: summaries come from the offline extractive summariser") {
		t.Errorf("no WARNING about the offline summariser in %q", warn.String())
	}
}
