// Command paced is a tool function for the gateway's streaming tests, built
// and run behind the lambdatest Runtime API as Lambda runs a function: its
// one tool, paced, which reports progress ([catalog.Tool.Progress]),
// reports 1 of 2, then waits until a GET of its url argument answers (the
// test answers once its client has seen that progress), reports 2 of 2 and
// returns.
package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Input is paced's arguments.
type Input struct {
	URL string `json:"url"`
}

// Output is paced's result.
type Output struct {
	Done bool `json:"done"`
}

// Tool is paced's catalog entry, as the gateway's tests list it too.
var Tool = &catalog.Tool{
	Name: "paced", Title: "Paced", Description: "Reports progress, waits for its url, reports again.", Family: "test", Function: "test/paced",
	InputSchema: toolschema.JSON[Input](nil), OutputSchema: toolschema.JSON[Output](nil), Visibility: catalog.Public,
	Limits: catalog.Limits{Timeout: 30 * time.Second, MemoryMB: 128}, Progress: true,
}

func paced(ctx context.Context, _ tenant.Caller, in Input) (Output, error) {
	lambdafn.ReportProgress(ctx, 1, 2, "first")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.URL, nil)
	if err != nil {
		return Output{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Output{}, fmt.Errorf("waiting for the client to see progress 1: %w", err)
	}
	resp.Body.Close()
	lambdafn.ReportProgress(ctx, 2, 2, "second")
	return Output{Done: true}, nil
}

func main() {
	cat, err := catalog.New([]*catalog.Tool{Tool}, nil, nil)
	if err != nil {
		panic(err)
	}
	lambdafn.StartIn(cat, lambdafn.Function{Path: Tool.Function, Build: func(d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(Tool, d, paced)
	}}, lambdafn.Openers{})
}
