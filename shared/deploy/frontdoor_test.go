package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdatest"
)

// progressLambda serves the Lambda Invoke API for the tool functions as
// fakeLambda does, and answers each call with the progress notifications a
// long call reports before its result, as a function that called
// lambdafn.ReportProgress answers.
type progressLambda struct{ fakeLambda }

func (f *progressLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	f.fakeLambda.ServeHTTP(rec, r)
	var resp invoke.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Header().Get("X-Amz-Function-Error") != "" {
		f.t.Errorf("the tool function failed: %s", rec.Body)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	for _, p := range []float64{1, 2} {
		resp.Notifications = append(resp.Notifications, invoke.Notification{Progress: &p, Total: 2, Message: "step"})
	}
	b, _ := invoke.Marshal(&resp)
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	w.Write(b)
}

// sseEvent is one event of an SSE body and the time its last byte arrived.
type sseEvent struct {
	Data string
	At   time.Time
}

// sseEvents splits the body of a streamed answer (after its prelude) into
// events, each with the arrival of the chunk that completed it.
func sseEvents(t *testing.T, chunks []lambdatest.Chunk) (*apigw.StreamPrelude, []sseEvent) {
	t.Helper()
	var all bytes.Buffer
	var ends []int // the offset at which each chunk ends
	for _, c := range chunks {
		all.Write(c.Data)
		ends = append(ends, all.Len())
	}
	prelude, body, err := apigw.DecodeStream(bytes.NewReader(all.Bytes()))
	if err != nil {
		t.Fatalf("the answer is not a streamed proxy response: %v\n%q", err, all.Bytes())
	}
	rest, _ := io.ReadAll(body)
	start := all.Len() - len(rest)
	arrival := func(offset int) time.Time {
		for i, end := range ends {
			if offset <= end {
				return chunks[i].At
			}
		}
		return chunks[len(chunks)-1].At
	}
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(rest))
	offset := start
	for sc.Scan() {
		offset += len(sc.Bytes()) + 1
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, sseEvent{Data: data, At: arrival(offset)})
		}
	}
	return prelude, out
}

// TestTheBuiltGatewayStreamsAnswersToTheRestApi runs the gateway's bootstrap
// against the Lambda Runtime API, as the streaming REST API invokes it: a
// tools/call whose client accepts SSE is answered as a stream whose prelude
// gives the status and headers, with the tool's progress notifications
// before its result; a request answered with JSON comes back whole in the
// same form; the HTTP API's sample events are still answered buffered. The
// tool functions run in this process behind the Lambda Invoke API,
// reporting progress.
func TestTheBuiltGatewayStreamsAnswersToTheRestApi(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway")
	}
	p := startStreamingGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tool, _ := catalog.Default().Tool("memory_get_or_create")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool.Name + `","arguments":` + string(tool.Example) + `,"_meta":{"progressToken":"p1"}}}`
	res := invokeRest(ctx, t, p, "POST", "/mcp", call, map[string]string{"Accept": "application/json, text/event-stream"})
	if res.ContentType != "application/vnd.awslambda.http-integration-response" || !res.Streamed {
		t.Errorf("answered %q, streamed %v; want a stream of the HTTP integration response type", res.ContentType, res.Streamed)
	}
	prelude, evs := sseEvents(t, res.Chunks)
	if prelude.StatusCode != 200 || !strings.HasPrefix(prelude.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("prelude %+v, want 200 and an event stream", prelude)
	}
	var methods []string
	for i, ev := range evs {
		var msg struct {
			Method string
			Params struct{ ProgressToken any }
			Result *struct{ IsError bool }
		}
		json.Unmarshal([]byte(ev.Data), &msg)
		switch {
		case msg.Method == "notifications/progress" && msg.Params.ProgressToken == "p1":
			methods = append(methods, "progress")
		case msg.Result != nil && !msg.Result.IsError:
			methods = append(methods, "result")
		default:
			methods = append(methods, ev.Data)
		}
		if i > 0 && ev.At.Before(evs[i-1].At) {
			t.Errorf("event %d arrived before event %d", i, i-1)
		}
	}
	if strings.Join(methods, " ") != "progress progress result" {
		t.Errorf("events %v, want the two progress notifications, then the result", methods)
	}

	// The HTTP API's events are still answered buffered, as the sample events show.
	for _, name := range []string{"initialize", "tools-list", "tools-call"} {
		ev := eventByPath(t, EventsDir+"/"+GatewayPath+"/"+name+".json")
		res, err := p.Invoke(ctx, readEvent(t, ev))
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %v", ev.Path, err, res)
		}
		checkAnswer(t, ev, res.Payload)
	}

	res = invokeRest(ctx, t, p, "GET", "/health", "", nil)
	prelude, body, err := apigw.DecodeStream(bytes.NewReader(res.Payload))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(body)
	if prelude.StatusCode != 200 || !strings.HasPrefix(prelude.Header().Get("Content-Type"), "application/json") || !json.Valid(b) {
		t.Errorf("GET /health answered %d %v %s; want 200 and JSON", prelude.StatusCode, prelude.Header(), b)
	}
}

// startStreamingGateway builds the gateway's bootstrap and starts it against
// lambdatest's Runtime API, its tool functions in this process behind the
// Lambda Invoke API, reporting progress.
func startStreamingGateway(t *testing.T) *lambdatest.Process {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := lambdatest.Build(filepath.Join(root, "functions", GatewayPath), bin); err != nil {
		t.Fatal(err)
	}
	const prefix = "switchboard-test-"
	dir := t.TempDir()
	tbl, blobs := openTable(t, filepath.Join(dir, "functions.db")), openBlobs(t, filepath.Join(dir, "functions"))
	seed(t, tbl, blobs)
	lam := &progressLambda{fakeLambda{t: t, prefix: prefix, stack: stack(t, tbl, blobs)}}
	mux := http.NewServeMux()
	mux.Handle("POST /2015-03-31/functions/{name}/invocations", lam)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env := append(awsEnv(t, prefix+"gateway"),
		config.EnvTable+"="+config.FilePrefix+filepath.Join(dir, "t.db"),
		config.EnvFunctionPrefix+"="+prefix,
		config.EnvAnonymousTenant+"="+SampleTenant,
		config.EnvRequestStateKeys+"="+config.FilePrefix+filepath.Join(dir, "request-state-keys.json"),
		"AWS_ENDPOINT_URL_LAMBDA="+srv.URL,
	)
	rt := lambdatest.NewRuntime(&lambdatest.Options{Timeout: StreamingGatewayTimeout(catalog.Default())})
	t.Cleanup(rt.Close)
	p, err := lambdatest.Start(rt, bin, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}

// invokeRest sends the gateway process p a REST API proxy event for a
// request, as API Gateway's streaming integration does, and returns its answer.
func invokeRest(ctx context.Context, t *testing.T, p *lambdatest.Process, method, path, body string, header map[string]string) *lambdatest.Result {
	t.Helper()
	r := httptest.NewRequest(method, "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com"+path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Protocol-Version", SampleProtocolVersion)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	e, err := apigw.RESTEvent(r, RestStage)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(e)
	res, err := p.Invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("%s %s: function error %v\n%s", method, path, res.Error, p.Output())
	}
	return res
}

// restStandIn serves HTTP as API Gateway's streaming REST API does in front
// of the gateway process p: a request under the stage becomes a REST proxy
// event, and the streamed answer is relayed to the client piece by piece as
// the runtime receives it (its prelude as the status and headers). Anything
// outside the stage is API Gateway's 403.
func restStandIn(t *testing.T, p *lambdatest.Process) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ok := strings.CutPrefix(r.URL.Path, "/"+RestStage+"/")
		if !ok {
			http.Error(w, `{"message":"Missing Authentication Token"}`, http.StatusForbidden)
			return
		}
		r.URL.Path = "/" + path
		e, err := apigw.RESTEvent(r, RestStage)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		payload, _ := json.Marshal(e)
		pr, pw := io.Pipe()
		defer func() { go io.Copy(io.Discard, pr) }() // a client gone does not hold the runtime
		go func() {
			res, err := p.InvokeStreaming(r.Context(), payload, func(c lambdatest.Chunk) { pw.Write(c.Data) })
			if err == nil && res.Error != nil {
				err = res.Error
			}
			pw.CloseWithError(err)
		}()
		prelude, body, err := apigw.DecodeStream(pr)
		if err != nil {
			t.Errorf("the gateway's answer to %s %s: %v", r.Method, r.URL.Path, err)
			http.Error(w, `{"message":"Internal server error"}`, http.StatusBadGateway)
			return
		}
		for k, vs := range prelude.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(prelude.StatusCode)
		rc := http.NewResponseController(w)
		buf := make([]byte, 32<<10)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				rc.Flush()
			}
			if err != nil {
				return
			}
		}
	}))
}

// TestAnMCPClientGetsProgressThroughTheStreamingRestApi: the go-sdk's client
// connects to the built gateway through a stand-in of the streaming REST API
// (the McpUrl's /v1/mcp), calls a tool that reports progress, and gets the
// progress notifications and the result.
func TestAnMCPClientGetsProgressThroughTheStreamingRestApi(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway")
	}
	p := startStreamingGateway(t)
	srv := restStandIn(t, p)
	defer srv.Close()
	var (
		mu       sync.Mutex
		progress []float64
	)
	client := mcp.NewClient(&mcp.Implementation{Name: "frontdoor-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params.Progress)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/" + RestStage + "/mcp", HTTPClient: srv.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool, _ := catalog.Default().Tool("memory_get_or_create")
	var args map[string]any
	json.Unmarshal(tool.Example, &args)
	params := &mcp.CallToolParams{Name: tool.Name, Arguments: args}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("tools/call answered %+v, %v", res, err)
	}
	// The client dispatches notifications on goroutines of their own, so the
	// last may land just after the result.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n == 2 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !cmp.Equal(progress, []float64{1, 2}) {
		t.Errorf("progress = %v, want 1 then 2", progress)
	}
}
