package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// pacedInput and pacedOutput are the paced tool's (testdata/paced).
type (
	pacedInput struct {
		URL string `json:"url"`
	}
	pacedOutput struct {
		Done bool `json:"done"`
	}
)

// pacedTool is the catalog entry of the tool testdata/paced serves: it
// reports progress 1 of 2, waits for its url, reports 2 of 2.
var pacedTool = &catalog.Tool{
	Name: "paced", Title: "Paced", Description: "Reports progress, waits for its url, reports again.", Family: "test", Function: "test/paced",
	InputSchema: toolschema.JSON[pacedInput](nil), OutputSchema: toolschema.JSON[pacedOutput](nil), Visibility: catalog.Public,
	Limits: catalog.Limits{Timeout: 30 * time.Second, MemoryMB: 128}, Progress: true,
}

// pacedServers serves a gateway over inv, whose catalog has pacedTool, with
// the fast path and with every request going to the go-sdk; sdkCalls counts
// the tools/call requests the go-sdk served.
func pacedServers(t *testing.T, inv invoke.Invoker) (fast, sdk string, sdkCalls *atomic.Int64) {
	t.Helper()
	cat, err := catalog.New(append(catalog.Default().Tools(), pacedTool), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Catalog: cat, Invoker: inv, Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"}, AllowLocalOrigins: true})
	if err != nil {
		t.Fatal(err)
	}
	sdkCalls = new(atomic.Int64)
	g.Server().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	f := httptest.NewServer(g.Handler())
	t.Cleanup(f.Close)
	fastPathOn = false
	s := httptest.NewServer(g.Handler())
	fastPathOn = true
	t.Cleanup(s.Close)
	return f.URL + "/mcp", s.URL + "/mcp", sdkCalls
}

// seenGate is what a paced call waits for: url answers once close has been
// called (the client saw progress 1), or when the request ends.
type seenGate struct {
	url   string
	seen  chan struct{}
	close func()
}

func newSeenGate(t *testing.T) *seenGate {
	g := &seenGate{seen: make(chan struct{})}
	g.close = sync.OnceFunc(func() { close(g.seen) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-g.seen:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// callPaced calls paced through the gateway at url with a progress token,
// from the go-sdk's client, letting the tool go on once the client has
// seen its first progress notification, and checks that the call succeeds
// and every notification arrives: the call can succeed only if progress 1
// reached the client while the tool was still running.
func callPaced(t *testing.T, url string, gate *seenGate) {
	t.Helper()
	var (
		mu       sync.Mutex
		progress []float64
	)
	client := mcp.NewClient(&mcp.Implementation{Name: "stream-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
			if r.Params.Progress == 1 {
				gate.close()
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: pacedTool.Name, Arguments: pacedInput{URL: gate.url}}
	params.SetProgressToken("pace")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("paced failed (did progress 1 reach the client before the call ended?): %+v", res.Content[0])
	}
	// The client dispatches notifications on goroutines of their own, so the
	// last may land just after the result.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n == 2 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]float64{1, 2}, progress); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
}

// checkPaths calls paced through both servers of pacedServers, checking
// that each call took the path it names.
func checkPaths(t *testing.T, inv invoke.Invoker, gate func(t *testing.T) *seenGate) {
	fast, sdk, sdkCalls := pacedServers(t, inv)
	for _, tc := range []struct {
		name     string
		url      string
		sdkCalls int64
	}{
		{"on the fast path", fast, 0},
		{"through the go-sdk", sdk, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sdkCalls.Store(0)
			callPaced(t, tc.url, gate(t))
			if got := sdkCalls.Load(); got != tc.sdkCalls {
				t.Errorf("the go-sdk served %d tools/call, want %d", got, tc.sdkCalls)
			}
		})
	}
}

// A tool that reports progress, called in process: the client gets each
// notification as the function makes it, before the call ends.
func TestProgressReachesTheClientWhileTheToolRunsInProcess(t *testing.T) {
	var gate *seenGate
	h := lambdafn.Tool(pacedTool, lambdafn.Deps{}, func(ctx context.Context, _ tenant.Caller, _ pacedInput) (pacedOutput, error) {
		lambdafn.ReportProgress(ctx, 1, 2, "first")
		select {
		case <-gate.seen:
		case <-ctx.Done():
			return pacedOutput{}, ctx.Err()
		}
		lambdafn.ReportProgress(ctx, 2, 2, "second")
		return pacedOutput{Done: true}, nil
	})
	inv := invoke.NewLocal(map[string]lambda.Handler{pacedTool.Function: h}, &invoke.LocalOptions{Timeout: func(string) time.Duration { return pacedTool.Limits.Timeout }})
	checkPaths(t, inv, func(t *testing.T) *seenGate {
		gate = newSeenGate(t)
		return gate
	})
}

// A tool that reports progress, run as its built bootstrap behind the
// lambdatest Runtime API and called through the Lambda
// InvokeWithResponseStream API (lambdatest.InvokeAPI, lambdaapi): the
// client gets each notification as the function makes it, before the call
// ends.
func TestProgressReachesTheClientWhileTheToolRunsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a function")
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := lambdatest.Build("./testdata/paced", bin); err != nil {
		t.Fatal(err)
	}
	env := []string{config.EnvTable + "=" + config.FilePrefix + filepath.Join(t.TempDir(), "paced.db")}
	f := lambdatest.NewFunction(bin, env, &lambdatest.FunctionOptions{Timeout: pacedTool.Limits.Timeout})
	t.Cleanup(f.Close)
	api := httptest.NewServer(lambdatest.InvokeAPI(map[string]*lambdatest.Function{"sb-" + invoke.FunctionName(pacedTool.Function): f}, nil))
	t.Cleanup(api.Close)
	inv := lambdaapi.New(aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(api.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}, "sb-")
	checkPaths(t, inv, newSeenGate)
}
