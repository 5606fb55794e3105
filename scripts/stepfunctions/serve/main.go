// Command serve is test support for scripts/stepfunctions/run.mjs: it serves
// the Lambda Invoke API (POST /2015-03-31/functions/{name}/invocations)
// backed by Switchboard's real handlers (handlers.All) over a fresh embedded
// store, seeded by calling tools listed in a JSON file, and it can make any
// function fail in the ways the RAG pipeline must survive. It also runs the
// pipeline itself with the Go interpreter (pipeline.Local, invoking the
// functions through this same HTTP API), so that run.mjs can check that
// aws-local-stepfunctions and shared/statemachine agree.
//
//	go run ./scripts/stepfunctions/serve --seed scripts/stepfunctions/seed.json
//	# prints: serving the Lambda Invoke API at http://127.0.0.1:PORT
//
// Endpoints besides the Invoke API:
//
//	GET  /tasks      the catalog's pipeline tasks and the function paths this build has
//	POST /faults     {"vector/rephrase": "tool-error", ...}: how each function fails from now on; resets the call counts
//	GET  /calls      {"vector/retriever": 2, ...}: invocations per function since the last POST /faults
//	POST /run-local  {"definition": ASL, "input": pipeline input}: the Go interpreter's output
//
// Faults: function-error (the function fails outright, Runtime.ExitError);
// tool-error (the real tool refuses its arguments, replaced by invalid ones:
// isError, error kind invalid_argument); tool-unavailable (isError, error
// kind unavailable, as a tool whose store failed answers); bare-is-error
// (result.isError true and no error member); malformed (a success without
// the fields the pipeline reads); timeout (the answer comes after --slow);
// throttle-once (the first call is refused with TooManyRequestsException,
// then it answers); throttle-always (every call is refused so).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/invoke/lambdaapi"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Prefix begins every function name this server answers to, as a stack
// name does on AWS.
const Prefix = "switchboard-ci-"

// The faults a function can be given.
const (
	FunctionError   = "function-error"
	ToolError       = "tool-error"
	ToolUnavailable = "tool-unavailable"
	BareIsError     = "bare-is-error"
	Malformed       = "malformed"
	Timeout         = "timeout"
	ThrottleOnce    = "throttle-once"
	ThrottleAlways  = "throttle-always"
)

type server struct {
	local  *local.Stack
	paths  map[string]string // function name (invoke.FunctionName) -> path
	slow   time.Duration
	self   string // this server's URL
	mu     sync.Mutex
	faults map[string]string
	calls  map[string]int
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "`host:port` to listen on")
	seed := flag.String("seed", "", "JSON `file` of tool calls to make first: [{function, tool, arguments}]")
	slow := flag.Duration("slow", 2*time.Second, "how late a function with the timeout fault answers")
	tenantName := flag.String("tenant", "demo", "the tenant the seed calls act for")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("serve: ")

	dir, err := os.MkdirTemp("", "switchboard-stepfunctions-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := config.Local(dir)
	deps, closeFn, err := lambdafn.Open(context.Background(), &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	defer closeFn()
	s, err := newServer(handlers.All(), deps, *slow)
	if err != nil {
		log.Fatal(err)
	}
	if *seed != "" {
		if err := s.seed(*seed, tenant.Caller{Tenant: *tenantName, Principal: "ci"}); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	s.self = "http://" + ln.Addr().String()
	fmt.Printf("serving the Lambda Invoke API at %s\n", s.self)
	log.Fatal((&http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}).Serve(ln))
}

// newServer serves functions, built from deps and run as package local runs
// them (with their catalog limits).
func newServer(functions []lambdafn.Function, deps lambdafn.Deps, slow time.Duration) (*server, error) {
	stack, err := local.New(local.Options{Deps: deps, Functions: functions})
	if err != nil {
		return nil, err
	}
	s := &server{
		local: stack,
		paths: map[string]string{}, slow: slow, faults: map[string]string{}, calls: map[string]int{},
	}
	for _, f := range functions {
		s.paths[invoke.FunctionName(f.Path)] = f.Path
	}
	return s, nil
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", s.invocation)
	mux.HandleFunc("GET /tasks", s.tasks)
	mux.HandleFunc("POST /faults", s.setFaults)
	mux.HandleFunc("GET /calls", s.callCounts)
	mux.HandleFunc("POST /run-local", s.runLocal)
	return mux
}

// seed makes the tool calls in file, in order. A call to a function this
// build does not have, or that fails, is fatal: the seed or the build is
// wrong, and every scenario would quietly test less than it says.
func (s *server) seed(file string, caller tenant.Caller) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var calls []struct {
		Function, Tool string
		Arguments      json.RawMessage
	}
	if err := json.Unmarshal(data, &calls); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for i, c := range calls {
		if _, ok := s.paths[invoke.FunctionName(c.Function)]; !ok {
			return fmt.Errorf("seed %d (%s): this build has no function %s", i, c.Tool, c.Function)
		}
		resp, err := s.local.Invoke(context.Background(), c.Function, &invoke.Request{
			Method: invoke.MethodCallTool, Tool: c.Tool, Arguments: c.Arguments, Caller: caller,
			RequestID: fmt.Sprintf("seed-%d", i), TraceID: "seed",
		})
		if err != nil {
			return fmt.Errorf("seed %d (%s): %w", i, c.Tool, err)
		}
		if resp.Error != nil {
			return fmt.Errorf("seed %d (%s): %s: %s", i, c.Tool, resp.Error.Kind, resp.Error.Message)
		}
	}
	return nil
}

func (s *server) tasks(w http.ResponseWriter, _ *http.Request) {
	var have []string
	for _, p := range s.paths {
		have = append(have, p)
	}
	sort.Strings(have)
	writeJSON(w, http.StatusOK, map[string]any{"tasks": catalog.Default().PipelineTasks(), "functions": have, "prefix": Prefix})
}

func (s *server) setFaults(w http.ResponseWriter, r *http.Request) {
	var faults map[string]string
	if err := json.NewDecoder(r.Body).Decode(&faults); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for fn, f := range faults {
		switch f {
		case FunctionError, ToolError, ToolUnavailable, BareIsError, Malformed, Timeout, ThrottleOnce, ThrottleAlways:
		default:
			http.Error(w, fmt.Sprintf("%s: unknown fault %q", fn, f), http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	s.faults, s.calls = faults, map[string]int{}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) callCounts(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.calls)
}

// invocation answers as the Lambda Invoke API does: the payload with 200; a
// function error with 200 and X-Amz-Function-Error; an API error with its
// status and X-Amzn-ErrorType.
func (s *server) invocation(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if i := strings.LastIndex(name, ":function:"); i >= 0 {
		name = name[i+len(":function:"):]
	}
	path, ok := s.paths[strings.TrimPrefix(name, Prefix)]
	if !ok || !strings.HasPrefix(name, Prefix) {
		apiError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	var req invoke.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	s.mu.Lock()
	injected := s.faults[path]
	s.calls[path]++
	n := s.calls[path]
	s.mu.Unlock()
	switch injected {
	case FunctionError:
		functionError(w, "Runtime.ExitError", "RequestId: injected Error: Runtime exited with error: exit status 2")
		return
	case ToolError:
		req.Arguments = json.RawMessage(`{"question":42}`) // no step's schema takes a number
	case ToolUnavailable:
		writeJSON(w, http.StatusOK, invoke.Response{
			Result: json.RawMessage(`{"content":[{"type":"text","text":"the table did not answer; retry"}],"isError":true}`),
			Error:  &invoke.Error{Kind: string(fault.KindUnavailable), Message: "the table did not answer; retry"},
		})
		return
	case BareIsError:
		writeJSON(w, http.StatusOK, invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"failed"}],"isError":true}`)})
		return
	case Malformed:
		writeJSON(w, http.StatusOK, invoke.Response{Result: json.RawMessage(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"unexpected":true}}`)})
		return
	case Timeout:
		select {
		case <-time.After(s.slow):
		case <-r.Context().Done():
			return
		}
	case ThrottleOnce, ThrottleAlways:
		if n == 1 || injected == ThrottleAlways {
			apiError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.")
			return
		}
	}
	resp, err := s.local.Invoke(r.Context(), path, &req)
	var fe *invoke.FunctionError
	switch {
	case errors.As(err, &fe):
		functionError(w, fe.Type, fe.Message)
		return
	case err != nil:
		apiError(w, http.StatusInternalServerError, "ServiceException", err.Error())
		return
	}
	payload, err := invoke.EncodeResponse(resp)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "ServiceException", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	w.Write(payload)
}

func functionError(w http.ResponseWriter, typ, msg string) {
	w.Header().Set("X-Amz-Function-Error", "Unhandled")
	writeJSON(w, http.StatusOK, map[string]any{"errorType": typ, "errorMessage": msg})
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ)
	writeJSON(w, status, map[string]string{"Type": "User", "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := invoke.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// runLocal runs the pipeline with the Go interpreter, its steps invoked
// through this server's Invoke API (with the same faults) by invoke.Lambda.
func (s *server) runLocal(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Definition json.RawMessage `json:"definition"`
		Input      json.RawMessage `json:"input"`
	}
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(data, &body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cfg := aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(s.self), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}
	runner, err := pipeline.NewLocalDefinition(body.Definition, catalog.Default(), lambdaapi.New(cfg, Prefix))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := runner.Execute(r.Context(), body.Input)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"output": json.RawMessage(out)})
}
