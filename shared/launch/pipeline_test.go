package launch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

type retrieveArgs struct {
	Question string `json:"question"`
	TopK     int    `json:"top_k"`
	Mode     string `json:"mode"`
}

type retrieveResult struct {
	Documents      []pipeline.Document `json:"documents"`
	SearchedStores []string            `json:"searched_stores"`
}

// TestTheLocalServerGivesHandlersAPipelineOverItsOwnFunctions builds the
// local server with a stand-in retriever step and a function that keeps the
// Deps it was built with, then runs that Deps' pipeline: the retriever
// answers through the server's invoker, and the other steps, failing, fall
// back.
func TestTheLocalServerGivesHandlersAPipelineOverItsOwnFunctions(t *testing.T) {
	var mu sync.Mutex
	var runner pipeline.Runner
	tool := &catalog.Tool{
		Name: "optimizer_vs-retriever", Title: "r", Description: "A stand-in retriever.", Family: "vector", Function: "vector/retriever",
		InputSchema: toolschema.JSON[retrieveArgs](nil), OutputSchema: toolschema.JSON[retrieveResult](nil),
		Visibility: catalog.Internal, Limits: catalog.Limits{Timeout: 5 * time.Second, MemoryMB: 128},
	}
	extras := Extras{Functions: map[string]handlers.Constructor{
		"vector/retriever": func(d lambdafn.Deps) lambda.Handler {
			return lambdafn.Tool(tool, d, func(_ context.Context, _ tenant.Caller, in retrieveArgs) (retrieveResult, error) {
				return retrieveResult{Documents: []pipeline.Document{{DocID: "d", ChunkID: "d#0", Content: in.Question}}, SearchedStores: []string{"kb"}}, nil
			})
		},
		// Down, whatever the real ones do once they exist.
		"vector/rephrase": func(lambdafn.Deps) lambda.Handler {
			return lambda.NewHandler(func() error { return errors.New("down") })
		},
		"vector/grade": func(lambdafn.Deps) lambda.Handler {
			return lambda.NewHandler(func() error { return errors.New("down") })
		},
		"test/keeps_deps": func(d lambdafn.Deps) lambda.Handler {
			mu.Lock()
			defer mu.Unlock()
			runner = d.Pipeline
			return lambda.NewHandler(func() error { return nil })
		},
	}}
	serveLocalWith(t, t.TempDir(), extras)
	mu.Lock()
	r := runner
	mu.Unlock()
	if _, ok := r.(*pipeline.Local); !ok {
		t.Fatalf("Deps.Pipeline = %T, want *pipeline.Local", r)
	}
	out, err := r.Run(context.Background(), pipeline.Input{
		Request:  pipeline.Request{Caller: tenant.Caller{Tenant: tenant.Local, Principal: "local"}, TraceID: "t", RequestID: "r"},
		Question: "where?",
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]pipeline.Document{{DocID: "d", ChunkID: "d#0", Content: "where?"}}, out.Documents); diff != "" {
		t.Errorf("documents mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rephrase", "grade"}, out.Degraded); diff != "" {
		t.Errorf("degraded mismatch (-want +got):\n%s", diff)
	}
}
