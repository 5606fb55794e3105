// Package lambdatest runs built Lambda bootstrap binaries outside Lambda, for
// tests and benchmarks: [Runtime] serves the part of the Lambda Runtime API
// that a Go function uses (next invocation, response, error, init error, and
// the Extensions API for internal extensions: registration, as
// lambda.WithEnableSIGTERM performs it, and INVOKE events), and [Start] runs
// a bootstrap against it.
//
// Responses may be streamed, as a response-streaming function sends them: a
// chunked body (with the Lambda-Runtime-Function-Response-Mode: streaming
// header the Runtime API documents, or without it, as aws-lambda-go sends an
// io.Reader answer), ended by the error trailers
// Lambda-Runtime-Function-Error-Type and -Body if the function failed midway.
// [Result.Chunks] records each piece as it arrived, and
// [Runtime.InvokeStreaming] hands each one over before the answer is complete.
//
// As Lambda does, the runtime hands out the next invocation only once the
// previous one has settled: answered, and every extension registered for
// INVOKE events has asked for its next event ([Result.Settled]).
//
//	rt := lambdatest.NewRuntime(nil)
//	defer rt.Close()
//	p, err := lambdatest.Start(rt, "bin/gateway/bootstrap", env)
//	if err != nil { ... }
//	defer p.Stop()
//	res, err := p.Invoke(ctx, event) // res.Payload, or res.Error if the function failed
//
// The Runtime API is documented at
// https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html.
package lambdatest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The Runtime API paths a function calls.
const (
	pathNext      = "/2018-06-01/runtime/invocation/next"
	pathInvoke    = "/2018-06-01/runtime/invocation/"
	pathInitError = "/2018-06-01/runtime/init/error"
	pathRegister  = "/2020-01-01/extension/register"
	pathExtNext   = "/2020-01-01/extension/event/next"
)

// The headers and trailers of a streamed response.
const (
	HeaderResponseMode = "Lambda-Runtime-Function-Response-Mode"
	TrailerErrorType   = "Lambda-Runtime-Function-Error-Type"
	TrailerErrorBody   = "Lambda-Runtime-Function-Error-Body"
)

// The headers of a next-invocation answer.
const (
	HeaderRequestID   = "Lambda-Runtime-Aws-Request-Id"
	HeaderDeadlineMS  = "Lambda-Runtime-Deadline-Ms"
	HeaderFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	HeaderTraceID     = "Lambda-Runtime-Trace-Id"
)

// DefaultFunctionARN is the invoked function ARN when [Options.FunctionARN] is empty.
const DefaultFunctionARN = "arn:aws:lambda:us-east-1:123456789012:function:lambdatest"

// Options configures [NewRuntime]. A nil *Options uses the defaults.
type Options struct {
	// FunctionARN is sent as the invoked function ARN. If empty, defaults to [DefaultFunctionARN].
	FunctionARN string
	// Timeout sets each invocation's deadline, counted from when the function
	// receives it. If zero, defaults to 30 seconds.
	Timeout time.Duration
}

// FunctionError is an error a function reported, for one invocation or at init.
type FunctionError struct {
	Type       string          `json:"errorType"`
	Message    string          `json:"errorMessage"`
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("function error %s: %s", e.Type, e.Message)
}

// ErrInit is wrapped by the error [Runtime.Invoke] returns when the function
// reported an init error instead of answering.
var ErrInit = errors.New("lambdatest: function failed to initialise")

// Result is a function's answer to one invocation.
type Result struct {
	RequestID string
	// Payload is the response body, if the function answered.
	Payload []byte
	// Error is set, and Payload empty, if the function reported an error.
	Error *FunctionError
	// Received is when the runtime handed the event to the function; Answered
	// is when the answer arrived.
	Received, Answered time.Time
	// ContentType is the response's Content-Type, and ResponseMode its
	// Lambda-Runtime-Function-Response-Mode header ("streaming" or empty).
	ContentType, ResponseMode string
	// Streamed is set when the body came chunked, as a response-streaming
	// function sends it.
	Streamed bool
	// Chunks are the pieces of the body as the runtime read them, each with
	// the time it arrived; Payload is all of them. Empty for an error.
	Chunks []Chunk

	settled chan struct{}
}

// Settled is closed when the invocation's phase has ended: it was answered
// and every extension registered for INVOKE events has asked for its next
// event. Lambda may freeze the environment from then on.
func (r *Result) Settled() <-chan struct{} { return r.settled }

// Chunk is a piece of a response body and when it arrived.
type Chunk struct {
	Data []byte
	At   time.Time
}

type invocation struct {
	id       string
	payload  []byte
	onChunk  func(Chunk)
	received time.Time
	done     chan *Result
	settled  chan struct{}
	busy     int // extensions yet to ask for their next event, and 1 for the answer
}

// extension is an internal extension registered for INVOKE events.
type extension struct {
	events  chan []byte
	current *invocation // the invocation it was last given, until it asks again
}

// Runtime is an in-process Lambda Runtime API. Invocations are handed out in
// the order [Runtime.Invoke] queued them. It is safe for concurrent use.
type Runtime struct {
	srv      *httptest.Server
	arn      string
	timeout  time.Duration
	queue    chan *invocation
	closed   chan struct{}
	closeOne sync.Once
	seq      atomic.Int64

	mu         sync.Mutex
	pending    map[string]*invocation
	initErr    *FunctionError
	failed     chan struct{} // closed when an init error arrives
	extensions map[string]*extension
	registered []string    // the names of the extensions registered, in order
	last       *invocation // the invocation handed out last
}

// NewRuntime starts a Runtime on a loopback port.
func NewRuntime(opts *Options) *Runtime {
	rt := &Runtime{
		arn:        DefaultFunctionARN,
		timeout:    30 * time.Second,
		queue:      make(chan *invocation, 64),
		closed:     make(chan struct{}),
		pending:    map[string]*invocation{},
		failed:     make(chan struct{}),
		extensions: map[string]*extension{},
	}
	if opts != nil && opts.FunctionARN != "" {
		rt.arn = opts.FunctionARN
	}
	if opts != nil && opts.Timeout > 0 {
		rt.timeout = opts.Timeout
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathNext, rt.next)
	mux.HandleFunc("POST "+pathInvoke+"{id}/response", rt.answer)
	mux.HandleFunc("POST "+pathInvoke+"{id}/error", rt.answer)
	mux.HandleFunc("POST "+pathInitError, rt.initError)
	mux.HandleFunc("POST "+pathRegister, rt.register)
	mux.HandleFunc("GET "+pathExtNext, rt.extensionNext)
	rt.srv = httptest.NewServer(mux)
	return rt
}

// Registered returns the names of the extensions registered so far, in
// order: each registration is a round trip a bootstrap makes before its first
// event.
func (rt *Runtime) Registered() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.registered)
}

// Addr returns the host:port to put in AWS_LAMBDA_RUNTIME_API.
func (rt *Runtime) Addr() string { return strings.TrimPrefix(rt.srv.URL, "http://") }

// Close stops the server, releasing any function blocked waiting for an event.
func (rt *Runtime) Close() {
	rt.closeOne.Do(func() {
		close(rt.closed)
		rt.srv.CloseClientConnections()
		rt.srv.Close()
	})
}

// InitError returns the init error the function reported, if any.
func (rt *Runtime) InitError() *FunctionError {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.initErr
}

// Invoke queues payload as the next event and waits for the function's
// answer. A function error is a Result with Error set, not an error; an error
// means no answer came: ctx ended, the runtime was closed, or the function
// reported an init error (wrapping [ErrInit]).
func (rt *Runtime) Invoke(ctx context.Context, payload []byte) (*Result, error) {
	return rt.InvokeStreaming(ctx, payload, nil)
}

// InvokeStreaming is [Runtime.Invoke] passing each piece of the response
// body to onChunk (if not nil) as it arrives, before the answer is complete:
// what a stand-in for a streaming front door relays. It is called from the
// runtime's server, one piece at a time; the Chunk's Data is its own.
func (rt *Runtime) InvokeStreaming(ctx context.Context, payload []byte, onChunk func(Chunk)) (*Result, error) {
	inv := &invocation{
		id:      fmt.Sprintf("00000000-0000-4000-8000-%012d", rt.seq.Add(1)),
		payload: payload,
		onChunk: onChunk,
		done:    make(chan *Result, 1),
		settled: make(chan struct{}),
	}
	rt.mu.Lock()
	rt.pending[inv.id] = inv
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.pending, inv.id)
		rt.mu.Unlock()
	}()
	select {
	case rt.queue <- inv:
	case <-ctx.Done():
		return nil, fmt.Errorf("lambdatest: queueing invocation: %w", ctx.Err())
	}
	select {
	case res := <-inv.done:
		return res, nil
	case <-rt.failed:
		return nil, fmt.Errorf("%w: %w", ErrInit, rt.InitError())
	case <-rt.closed:
		return nil, errors.New("lambdatest: runtime closed before the function answered")
	case <-ctx.Done():
		return nil, fmt.Errorf("lambdatest: waiting for invocation %s: %w", inv.id, ctx.Err())
	}
}

// next hands the function the next queued event, waiting for the previous
// one to settle and for one to be queued.
func (rt *Runtime) next(w http.ResponseWriter, r *http.Request) {
	rt.mu.Lock()
	last := rt.last
	rt.mu.Unlock()
	if last != nil {
		select {
		case <-last.settled:
		case <-r.Context().Done():
			return
		case <-rt.closed:
			http.Error(w, "runtime closed", http.StatusGone)
			return
		}
	}
	var inv *invocation
	select {
	case inv = <-rt.queue:
	case <-r.Context().Done():
		return
	case <-rt.closed:
		http.Error(w, "runtime closed", http.StatusGone)
		return
	}
	deadline := time.Now().Add(rt.timeout)
	rt.mu.Lock()
	inv.received = time.Now()
	inv.busy = 1
	rt.last = inv
	event, _ := json.Marshal(map[string]any{"eventType": "INVOKE", "deadlineMs": deadline.UnixMilli(), "requestId": inv.id, "invokedFunctionArn": rt.arn})
	for _, x := range rt.extensions {
		inv.busy++
		x.events <- event
	}
	rt.mu.Unlock()
	h := w.Header()
	h.Set(HeaderRequestID, inv.id)
	h.Set(HeaderDeadlineMS, strconv.FormatInt(deadline.UnixMilli(), 10))
	h.Set(HeaderFunctionARN, rt.arn)
	h.Set(HeaderTraceID, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
	h.Set("Content-Type", "application/json")
	w.Write(inv.payload)
}

// answer records a function's response or error for one invocation, reading
// a response body piece by piece as it arrives.
func (rt *Runtime) answer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rt.mu.Lock()
	inv := rt.pending[id]
	var received time.Time
	if inv != nil {
		received = inv.received
	}
	rt.mu.Unlock()
	if inv == nil {
		http.Error(w, `{"errorType":"InvalidRequestID","errorMessage":"unknown request id"}`, http.StatusBadRequest)
		return
	}
	res := &Result{RequestID: id, Received: received, settled: inv.settled,
		ContentType: r.Header.Get("Content-Type"), ResponseMode: r.Header.Get(HeaderResponseMode),
		Streamed: slices.Contains(r.TransferEncoding, "chunked")}
	if strings.HasSuffix(r.URL.Path, "/error") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res.Error = decodeError(body, r)
	} else {
		chunks, body, err := readChunks(r.Body, inv.onChunk)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if t := r.Trailer.Get(TrailerErrorType); t != "" {
			// A streaming function reports a failure midway in trailers.
			res.Error = trailerError(t, r.Trailer.Get(TrailerErrorBody))
		} else {
			res.Payload, res.Chunks = body, chunks
		}
	}
	res.Answered = time.Now()
	select {
	case inv.done <- res:
		rt.mu.Lock()
		rt.release(inv)
		rt.mu.Unlock()
	default: // answered twice; keep the first, as Lambda does
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

// readChunks reads body to its end, piece by piece, passing each to onChunk
// (if not nil) as it arrives.
func readChunks(body io.Reader, onChunk func(Chunk)) ([]Chunk, []byte, error) {
	var chunks []Chunk
	var all []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			c := Chunk{Data: slices.Clone(buf[:n]), At: time.Now()}
			chunks = append(chunks, c)
			all = append(all, c.Data...)
			if onChunk != nil {
				onChunk(c)
			}
		}
		if err == io.EOF {
			return chunks, all, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// trailerError reads the error trailers of a streamed response: the body is
// the error as JSON, base64-encoded by aws-lambda-go; anything else is the
// message itself.
func trailerError(typ, body string) *FunctionError {
	fe := &FunctionError{}
	if b, err := base64.StdEncoding.DecodeString(body); err == nil && json.Unmarshal(b, fe) == nil && fe.Message != "" {
		if fe.Type == "" {
			fe.Type = typ
		}
		return fe
	}
	return &FunctionError{Type: typ, Message: body}
}

func (rt *Runtime) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fe := decodeError(body, r)
	rt.mu.Lock()
	if rt.initErr == nil {
		rt.initErr = fe
		close(rt.failed)
	}
	rt.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func decodeError(body []byte, r *http.Request) *FunctionError {
	fe := &FunctionError{}
	if err := json.Unmarshal(body, fe); err != nil || fe.Message == "" {
		fe.Message = string(body)
	}
	if fe.Type == "" {
		fe.Type = r.Header.Get("Lambda-Runtime-Function-Error-Type")
	}
	return fe
}

// release ends one of the things inv's phase waits for; the last one
// settles it. rt.mu must be held.
func (rt *Runtime) release(inv *invocation) {
	inv.busy--
	if inv.busy == 0 {
		close(inv.settled)
	}
}

// register accepts an extension registration: one registered for INVOKE
// events gets them, the others (as aws-lambda-go's for SIGTERM) none.
func (rt *Runtime) register(w http.ResponseWriter, r *http.Request) {
	var body struct{ Events []string }
	json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body)
	name := r.Header.Get("Lambda-Extension-Name")
	id := "lambdatest-" + name
	rt.mu.Lock()
	rt.registered = append(rt.registered, name)
	if slices.Contains(body.Events, "INVOKE") {
		rt.extensions[id] = &extension{events: make(chan []byte, 1)}
	}
	rt.mu.Unlock()
	w.Header().Set("Lambda-Extension-Identifier", id)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"functionName":"lambdatest","functionVersion":"$LATEST","handler":"bootstrap"}`)
}

// extensionNext ends the extension's part in the invocation it was given, if
// any, and waits for its next event; one registered for no events waits
// until the runtime closes.
func (rt *Runtime) extensionNext(w http.ResponseWriter, r *http.Request) {
	rt.mu.Lock()
	x := rt.extensions[r.Header.Get("Lambda-Extension-Identifier")]
	if x != nil && x.current != nil {
		rt.release(x.current)
		x.current = nil
	}
	rt.mu.Unlock()
	var events chan []byte
	if x != nil {
		events = x.events
	}
	select {
	case event := <-events:
		rt.mu.Lock()
		x.current = rt.last
		rt.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(event)
	case <-r.Context().Done():
	case <-rt.closed:
		http.Error(w, "runtime closed", http.StatusGone)
	}
}
