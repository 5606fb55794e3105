package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// standIn is a function at path whose handler h is, whatever Deps it gets.
func standIn(path string, h lambda.Handler) lambdafn.Function {
	return lambdafn.Function{Path: path, Build: func(lambdafn.Deps) lambda.Handler { return h }}
}

var caller = tenant.Caller{Tenant: "acme", Principal: "alice"}

type retrieveArgs struct {
	Question string `json:"question"`
	TopK     int    `json:"top_k"`
	Mode     string `json:"mode"`
}

type retrieveResult struct {
	Documents      []pipeline.Document `json:"documents"`
	SearchedStores []string            `json:"searched_stores"`
}

// The functions of a stack get the stack itself as their invoker and the
// pipeline run in process over it: a stand-in retriever answers the
// pipeline's retrieve step, and the other steps, failing, fall back.
func TestFunctionsGetAPipelineAndAnInvokerOverTheirStack(t *testing.T) {
	tool := &catalog.Tool{
		Name: "optimizer_vs-retriever", Title: "r", Description: "A stand-in retriever.", Family: "vector", Function: "vector/retriever",
		InputSchema: toolschema.JSON[retrieveArgs](nil), OutputSchema: toolschema.JSON[retrieveResult](nil),
		Visibility: catalog.Internal, Limits: catalog.Limits{Timeout: 5 * time.Second, MemoryMB: 128},
	}
	down := lambda.NewHandler(func() error { return errors.New("down") })
	var kept lambdafn.Deps
	s, err := local.New(local.Options{Functions: []lambdafn.Function{
		{Path: "vector/retriever", Build: func(d lambdafn.Deps) lambda.Handler {
			return lambdafn.Tool(tool, d, func(_ context.Context, _ tenant.Caller, in retrieveArgs) (retrieveResult, error) {
				return retrieveResult{Documents: []pipeline.Document{{DocID: "d", ChunkID: "d#0", Content: in.Question}}, SearchedStores: []string{"kb"}}, nil
			})
		}},
		standIn("vector/rephrase", down),
		standIn("vector/grade", down),
		{Path: "test/keeps_deps", Build: func(d lambdafn.Deps) lambda.Handler {
			kept = d
			return down
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Invoker != s || kept.Pipeline != s.Pipeline() {
		t.Fatalf("a function got invoker %T and pipeline %T, want the stack and its pipeline", kept.Invoker, kept.Pipeline)
	}
	if _, ok := s.Pipeline().(*pipeline.Local); !ok {
		t.Fatalf("Pipeline = %T, want *pipeline.Local", s.Pipeline())
	}
	out, err := s.Pipeline().Run(context.Background(), pipeline.Input{
		Request: pipeline.Request{Caller: caller, TraceID: "t", RequestID: "r"}, Question: "where?",
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

// Seed 002's limit of 5 concurrent queries per pipeline is its functions'
// reserved concurrency in the catalog; the stack applies it as Lambda does:
// a sixth concurrent call is refused at once, while another pipeline has its
// own five.
func TestTheSixthConcurrentCallOfAPipelineIsThrottled(t *testing.T) {
	limit := catalog.Default().ReservedConcurrency("rag/basic")
	if limit != 5 {
		t.Fatalf("rag/basic has reserved concurrency %d, want seed 002's 5", limit)
	}
	started, release := make(chan struct{}, 2*limit), make(chan struct{})
	blocking := lambda.NewHandler(func(context.Context, json.RawMessage) (invoke.Response, error) {
		started <- struct{}{}
		<-release
		return invoke.Response{Result: json.RawMessage(`{}`)}, nil
	})
	s, err := local.New(local.Options{Functions: []lambdafn.Function{standIn("rag/basic", blocking), standIn("rag/crag", blocking)}})
	if err != nil {
		t.Fatal(err)
	}
	req := &invoke.Request{Method: invoke.MethodCallTool, Tool: "rag_basic", Arguments: json.RawMessage(`{"query":"q"}`), Caller: caller}
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			if _, err := s.Invoke(context.Background(), "rag/basic", req); err != nil {
				t.Errorf("a call within the limit: %v", err)
			}
		})
	}
	for range limit {
		<-started
	}
	var te *invoke.ThrottledError
	if _, err := s.Invoke(context.Background(), "rag/basic", req); !errors.As(err, &te) || te.Function != "rag/basic" {
		t.Errorf("the sixth call got %v, want it throttled", err)
	}
	wg.Go(func() {
		if _, err := s.Invoke(context.Background(), "rag/crag", req); err != nil {
			t.Errorf("another pipeline's call: %v", err)
		}
	})
	<-started
	close(release)
	wg.Wait()
	if _, err := s.Invoke(context.Background(), "rag/basic", req); err != nil {
		t.Errorf("after the others finished: %v", err)
	}
}

// closing is a handler that holds something to close.
type closing struct {
	lambda.Handler
	closed int
}

func (c *closing) Close() error {
	c.closed++
	return nil
}

// Closing a stack closes the functions that hold connections (a handler
// with a Close method, as the connectors' proxy function's is), once each,
// and leaves the others alone.
func TestClosingAStackClosesTheFunctionsThatHoldConnections(t *testing.T) {
	holder := &closing{Handler: lambda.NewHandler(func() error { return nil })}
	s, err := local.New(local.Options{Functions: []lambdafn.Function{
		standIn("connectors/proxy", holder),
		standIn("memory/add_message", lambda.NewHandler(func() error { return nil })),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil || holder.closed != 1 {
		t.Fatalf("Close = %v, closing the holder %d times; want once", err, holder.closed)
	}
}
