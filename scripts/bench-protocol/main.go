// Command bench-protocol measures what Switchboard's gateway adds to an MCP
// tools/call, beside a bare go-sdk server, on loopback and in one process
// (issue #2, "Figures to report": at most 1.5x the bare server's p50).
//
// It starts three servers on 127.0.0.1 (two with -raw=false):
//
//   - gateway: Switchboard as `go run ./functions/gateway` assembles it: an
//     embedded table in a temporary folder, the in-process invoker over
//     [handlers.All], and the anonymous local caller (no API key exists).
//   - bare: a go-sdk stateless Streamable HTTP server whose one tool,
//     memory_get_context, is registered with [mcp.AddTool] under the same
//     input and output schemas and answers the gateway's result from memory,
//     without touching any store. As every typed go-sdk tool does, it
//     validates its input and its output against the schemas.
//   - raw (unless -raw=false): the same, registered with [mcp.Server.AddTool]
//     and answering pre-encoded JSON, so the go-sdk validates nothing: the
//     floor of a go-sdk tools/call. The gateway validates its input (in the
//     function) but not its output, so it sits between the two.
//
// After seeding a conversation with a dozen messages through the gateway, it
// POSTs pre-built tools/call bodies with the headers a 2025-11-25 client
// sends (no initialize: the servers are stateless), checks that every answer
// is a successful result with the expected messages, and prints sequential
// latency percentiles over -n calls and requests/s with -c concurrent
// clients over -duration (per server). The servers run in alternating slices
// (gateway, bare, raw, raw, bare, gateway, ...) so that they share the
// machine's noise. The table also shows what each server allocates per
// sequential call (the whole process, so the client's share is included and
// the same for all).
//
//	go run ./scripts/bench-protocol                          # -n 2000 -c 8 -duration 10s
//	go run ./scripts/bench-protocol -cpuprofile /tmp/cpu.out # then:
//	go tool pprof -tagfocus server=gateway -top /tmp/cpu.out # the gateway's request path only
//	go run ./scripts/bench-protocol -memprofile /tmp/mem.out # then: go tool pprof -sample_index alloc_space -top /tmp/mem.out
//
// With -cpuprofile, each server's handler runs under the pprof label
// server=gateway, server=bare or server=raw (goroutines it starts inherit it) and
// the client under side=client, so one profile separates the three.
//
// It is a benchmark, not a test: it prints figures and asserts nothing about
// time. It exits 1 if any call failed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/open"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// protocolVersion is the version the pre-built requests announce.
const protocolVersion = "2025-11-25"

// conversationID is the seeded conversation every measured call reads.
const conversationID = "bench-protocol"

// seedMessages is how many messages the conversation gets: past the
// summariser's threshold, so memory_get_context returns a summary too.
const seedMessages = 12

type options struct {
	n          int
	c          int
	duration   time.Duration
	warmup     int
	rounds     int
	chunk      int
	raw        bool
	cpuprofile string
	memprofile string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 2000, "sequential calls per server for the latency percentiles")
	flag.IntVar(&o.c, "c", 8, "concurrent clients for the throughput run")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "throughput measuring time per server, split into -rounds slices")
	flag.IntVar(&o.warmup, "warmup", 500, "unmeasured calls per server before measuring")
	flag.IntVar(&o.rounds, "rounds", 4, "alternating slices per server in the throughput run")
	flag.IntVar(&o.chunk, "chunk", 100, "sequential calls per alternating slice in the latency run")
	flag.BoolVar(&o.raw, "raw", true, "also measure a go-sdk server whose tool validates nothing")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the measured runs to `file`")
	flag.StringVar(&o.memprofile, "memprofile", "", "write an allocation profile of the whole run to `file`")
	flag.Parse()
	if o.n < 1 || o.c < 1 || o.duration <= 0 || o.warmup < 0 || o.rounds < 1 || o.chunk < 1 {
		fmt.Fprintln(os.Stderr, "bench-protocol: -n, -c, -duration, -rounds and -chunk must be positive, -warmup not negative")
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-protocol:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "bench-protocol-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.cpuprofile != "" {
		// Everything this goroutine starts from here on is the client's,
		// including the HTTP transport's connection goroutines; serve starts
		// the servers' goroutines without it.
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("side", "client")))
	}

	gwHandler, closeGateway, err := newGateway(ctx, dir)
	if err != nil {
		return fmt.Errorf("starting the gateway: %w", err)
	}
	defer closeGateway()
	label := o.cpuprofile != ""
	gwURL, stopGW, err := serve(labelled(label, "gateway", gwHandler))
	if err != nil {
		return err
	}
	defer stopGW()

	client := &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // loopback: never through a proxy from the environment
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        4*o.c + 16,
			MaxIdleConnsPerHost: 2*o.c + 8, // every client keeps its connection: no redials under load
			IdleConnTimeout:     90 * time.Second,
		},
		Timeout: 30 * time.Second,
	}
	defer client.CloseIdleConnections()

	// Seed the conversation through the gateway itself, and read back the
	// answer the bare server will give.
	answer, err := seed(ctx, client, gwURL)
	if err != nil {
		return fmt.Errorf("seeding the conversation: %w", err)
	}
	tool, ok := catalog.Default().Tool("memory_get_context")
	if !ok {
		return errors.New("the catalog has no memory_get_context")
	}
	body := callBody(1, "memory_get_context", map[string]any{"conversation_id": conversationID, "max_messages": memory.KeepRecent})
	want := len(answer.Messages)
	targets := []*target{{name: "gateway", url: gwURL, body: body, wantMessages: want}}
	kinds := []string{"bare"}
	if o.raw {
		kinds = append(kinds, "raw")
	}
	for _, kind := range kinds {
		h, err := bareHandler(tool, answer, kind == "bare")
		if err != nil {
			return err
		}
		url, stop, err := serve(labelled(label, kind, h))
		if err != nil {
			return err
		}
		defer stop()
		targets = append(targets, &target{name: kind, url: url, body: body, wantMessages: want})
	}

	for _, t := range targets {
		if err := t.probe(ctx, client); err != nil {
			return fmt.Errorf("%s: first call: %w", t.name, err)
		}
	}

	// Warm up both servers, the client's connections and the runtime.
	for _, t := range targets {
		for range o.warmup {
			t.once(ctx, client, nil, nil)
		}
		load(ctx, client, t, o.c, 500*time.Millisecond, false)
	}

	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	// Sequential latency: slices of -chunk calls, alternating which server goes first.
	for i, left := 0, o.n; left > 0; i++ {
		k := min(o.chunk, left)
		for _, t := range alternate(targets, i) {
			runtime.GC() // start each slice without the other server's garbage
			var buf bytes.Buffer
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range k {
				t.once(ctx, client, &buf, &t.seq)
			}
			runtime.ReadMemStats(&after)
			t.allocBytes += after.TotalAlloc - before.TotalAlloc
			t.allocs += after.Mallocs - before.Mallocs
			t.allocCalls += k
		}
		left -= k
	}

	// Throughput: -c clients for -duration per server, in alternating slices.
	slice := o.duration / time.Duration(o.rounds)
	for i := range o.rounds {
		for _, t := range alternate(targets, i) {
			runtime.GC()
			r := load(ctx, client, t, o.c, slice, true)
			t.loadOK += r.ok
			t.loadElapsed += r.elapsed
			t.loadLat = append(t.loadLat, r.lat...)
		}
	}
	if o.cpuprofile != "" {
		pprof.StopCPUProfile()
	}

	if o.memprofile != "" {
		if err := writeAllocs(o.memprofile); err != nil {
			return err
		}
	}

	report(os.Stdout, o, targets)
	var failed int
	for _, t := range targets {
		failed += t.errors()
	}
	if failed > 0 {
		return fmt.Errorf("%d calls failed", failed)
	}
	return nil
}

// writeAllocs writes the allocation profile of the run so far to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// newGateway builds the gateway's handler the way the local server does
// (launch's localGateway): config.Local stores, every handler in process,
// the warning-level text logger, and the anonymous local caller since the
// fresh table holds no API key.
func newGateway(ctx context.Context, dir string) (http.Handler, func() error, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Open's only output is the offline-summariser WARNING line; it does not
	// change what is served.
	cfg := config.Local(filepath.Join(dir, "data"))
	deps, closeFn, err := open.Deps(ctx, &cfg, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	deps.Logger = logger
	cat := catalog.Default()
	keys := apikey.New(deps.Table, nil)
	haveKeys, err := keys.Any(ctx)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	if haveKeys {
		closeFn()
		return nil, nil, errors.New("the fresh table already holds API keys")
	}
	gw, err := gateway.New(gateway.Options{
		Catalog:           cat,
		Invoker:           invoke.NewLocal(handlers.Build(handlers.All(), deps), cat.Timeout),
		Keys:              keys,
		Anonymous:         &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
		AllowLocalOrigins: true,
		Logger:            logger,
	})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return gw.Handler(), closeFn, nil
}

// bareHandler is a plain go-sdk stateless server with one tool that has
// tool's name and schemas and answers answer for any conversation: a typed
// tool (input and output validated by the go-sdk) if typed is set, else a raw
// one answering pre-encoded JSON.
func bareHandler(tool *catalog.Tool, answer memory.GetContextOutput, typed bool) (http.Handler, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0.0.0"}, nil)
	t := &mcp.Tool{Name: tool.Name, Description: tool.Description, InputSchema: tool.Input(), OutputSchema: tool.Output()}
	if typed {
		mcp.AddTool(s, t, func(_ context.Context, _ *mcp.CallToolRequest, in memory.GetContextInput) (*mcp.CallToolResult, memory.GetContextOutput, error) {
			out := answer
			out.ConversationID = in.ConversationID
			return nil, out, nil
		})
	} else {
		text, err := json.Marshal(answer)
		if err != nil {
			return nil, err
		}
		s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
				StructuredContent: json.RawMessage(text),
			}, nil
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}), nil
}

// labelled runs h under the pprof label server=name when on is set.
func labelled(on bool, name string, h http.Handler) http.Handler {
	if !on {
		return h
	}
	labels := pprof.Labels("server", name)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), labels, func(context.Context) { h.ServeHTTP(w, r) })
	})
}

// serve serves h on a free loopback port and returns its MCP URL.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		pprof.SetGoroutineLabels(context.Background()) // no side=client: see run
		srv.Serve(ln)
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}

// header is what a 2025-11-25 Streamable HTTP client sends with every POST
// once it knows the protocol version. It is shared by every request and only
// read.
var header = http.Header{
	"Content-Type":         {"application/json"},
	"Accept":               {"application/json, text/event-stream"},
	"Mcp-Protocol-Version": {protocolVersion},
}

func callBody(id int, tool string, args any) []byte {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// seed creates the conversation, adds seedMessages messages and returns what
// memory_get_context answers for it.
func seed(ctx context.Context, client *http.Client, url string) (memory.GetContextOutput, error) {
	var out memory.GetContextOutput
	if _, err := post(ctx, client, url, callBody(1, "memory_get_or_create", map[string]any{"conversation_id": conversationID}), nil); err != nil {
		return out, fmt.Errorf("memory_get_or_create: %w", err)
	}
	for i := 1; i <= seedMessages; i++ {
		role := []string{"user", "assistant"}[(i-1)%2]
		content := fmt.Sprintf("Message %d of the benchmark conversation: the %s talks about toothbrushes, which should be replaced every three months or sooner if the bristles fray.", i, role)
		args := map[string]any{"conversation_id": conversationID, "role": role, "content": content}
		if _, err := post(ctx, client, url, callBody(i+1, "memory_add_message", args), nil); err != nil {
			return out, fmt.Errorf("memory_add_message %d: %w", i, err)
		}
	}
	sc, err := post(ctx, client, url, callBody(1, "memory_get_context", map[string]any{"conversation_id": conversationID, "max_messages": memory.KeepRecent}), nil)
	if err != nil {
		return out, fmt.Errorf("memory_get_context: %w", err)
	}
	if err := json.Unmarshal(sc, &out); err != nil {
		return out, fmt.Errorf("memory_get_context: decoding structured content: %w", err)
	}
	if len(out.Messages) != memory.KeepRecent || out.Summary == "" {
		return out, fmt.Errorf("memory_get_context returned %d messages and a %d-byte summary, want %d and a summary",
			len(out.Messages), len(out.Summary), memory.KeepRecent)
	}
	return out, nil
}

// post sends one tools/call and returns the result's structured content, or
// an error if the call did not succeed. buf, if not nil, holds the body.
func post(ctx context.Context, client *http.Client, url string, body []byte, buf *bytes.Buffer) (json.RawMessage, error) {
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	if _, err := roundTrip(ctx, client, url, body, buf); err != nil {
		return nil, err
	}
	return checkResult(buf.Bytes())
}

// roundTrip POSTs body and reads the whole answer into buf. The duration
// covers sending the request through reading the last byte of the answer.
func roundTrip(ctx context.Context, client *http.Client, url string, body []byte, buf *bytes.Buffer) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = header
	buf.Reset()
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("HTTP %d: %s", resp.StatusCode, excerpt(buf.Bytes()))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") && !strings.HasPrefix(ct, "application/json") {
		return d, fmt.Errorf("unexpected Content-Type %q", ct)
	}
	return d, nil
}

// rpcResponse is the part of a JSON-RPC answer to tools/call that is checked.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError           bool            `json:"isError"`
		Content           []any           `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkResult finds the JSON-RPC response in an SSE stream (or a plain JSON
// body) and returns its structured content if it is a successful tool result.
func checkResult(body []byte) (json.RawMessage, error) {
	for _, data := range sseData(body) {
		var r rpcResponse
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("undecodable message: %v: %s", err, excerpt(data))
		}
		if len(r.ID) == 0 {
			continue // a notification
		}
		switch {
		case r.Error != nil:
			return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
		case r.Result == nil:
			return nil, fmt.Errorf("response has no result: %s", excerpt(data))
		case r.Result.IsError:
			return nil, fmt.Errorf("tool error: %s", excerpt(data))
		case len(r.Result.Content) == 0 || len(r.Result.StructuredContent) == 0:
			return nil, fmt.Errorf("result has no content or no structured content: %s", excerpt(data))
		}
		return r.Result.StructuredContent, nil
	}
	return nil, fmt.Errorf("no JSON-RPC response in the answer: %s", excerpt(body))
}

// sseData returns the data of each event in an SSE stream, or body itself
// if it is not one. It allocates only for events with several data lines, so
// that checking answers costs the client little.
func sseData(body []byte) [][]byte {
	if len(body) > 0 && body[0] == '{' {
		return [][]byte{body}
	}
	var out [][]byte
	var cur []byte
	lines := 0
	for rest := body; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if lines > 0 {
				out = append(out, cur)
			}
			cur, lines = nil, 0
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if lines == 0 {
				cur = d
			} else {
				cur = append(append(bytes.Clone(cur), '\n'), d...)
			}
			lines++
		}
	}
	if lines > 0 {
		out = append(out, cur)
	}
	return out
}

func excerpt(b []byte) string {
	const max = 300
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// target is one server under measurement and what it measured.
type target struct {
	name         string
	url          string
	body         []byte
	wantMessages int
	respBytes    int

	mu       sync.Mutex
	errCount int
	firstErr []string

	seq         []time.Duration // sequential latencies
	allocBytes  uint64          // allocated by the process during the sequential calls
	allocs      uint64
	allocCalls  int
	loadOK      int
	loadElapsed time.Duration
	loadLat     []time.Duration
}

// probe makes one checked call and records the size of the answer.
func (t *target) probe(ctx context.Context, client *http.Client) error {
	var buf bytes.Buffer
	if _, err := roundTrip(ctx, client, t.url, t.body, &buf); err != nil {
		return err
	}
	if err := t.check(buf.Bytes()); err != nil {
		return err
	}
	t.respBytes = buf.Len()
	return nil
}

// once makes one call, checks it, and appends its latency to lat if it succeeded.
func (t *target) once(ctx context.Context, client *http.Client, buf *bytes.Buffer, lat *[]time.Duration) bool {
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	d, err := roundTrip(ctx, client, t.url, t.body, buf)
	if err == nil {
		err = t.check(buf.Bytes())
	}
	if err != nil {
		t.fail(err)
		return false
	}
	if lat != nil {
		*lat = append(*lat, d)
	}
	return true
}

// check verifies that an answer is a successful memory_get_context result
// with the expected number of messages.
func (t *target) check(body []byte) error {
	sc, err := checkResult(body)
	if err != nil {
		return err
	}
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(sc, &out); err != nil {
		return fmt.Errorf("undecodable structured content: %v", err)
	}
	if len(out.Messages) != t.wantMessages {
		return fmt.Errorf("%d messages, want %d", len(out.Messages), t.wantMessages)
	}
	return nil
}

func (t *target) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errCount++
	if len(t.firstErr) < 5 {
		t.firstErr = append(t.firstErr, err.Error())
	}
}

func (t *target) errors() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.errCount
}

type loadResult struct {
	ok      int
	elapsed time.Duration
	lat     []time.Duration
}

// load runs c clients calling t back to back for d.
func load(ctx context.Context, client *http.Client, t *target, c int, d time.Duration, record bool) loadResult {
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for range c {
		wg.Go(func() {
			var buf bytes.Buffer
			var lat []time.Duration
			ok := 0
			for time.Now().Before(deadline) {
				if t.once(ctx, client, &buf, &lat) {
					ok++
				}
			}
			mu.Lock()
			res.ok += ok
			if record {
				res.lat = append(res.lat, lat...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// alternate returns ts in order for even rounds and reversed for odd ones,
// so that no server always runs right after the same other one.
func alternate(ts []*target, round int) []*target {
	if round%2 == 0 {
		return ts
	}
	r := slices.Clone(ts)
	slices.Reverse(r)
	return r
}

// percentile returns the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func report(w io.Writer, o options, ts []*target) {
	for _, t := range ts {
		slices.Sort(t.seq)
		slices.Sort(t.loadLat)
	}
	gw, bare := ts[0], ts[1]
	fmt.Fprintf(w, "bench-protocol: tools/call memory_get_context on loopback, protocol %s, SSE answers\n", protocolVersion)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS=%d, NumCPU=%d; -n %d -c %d -duration %s -rounds %d -warmup %d\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), o.n, o.c, o.duration, o.rounds, o.warmup)
	fmt.Fprintf(w, "gateway: embedded table, in-process invoker, %d-message conversation; bare: go-sdk typed tool, same schemas, fixed answer", seedMessages)
	if len(ts) > 2 {
		fmt.Fprintf(w, "; raw: go-sdk raw tool, no validation")
	}
	fmt.Fprintf(w, "\n\n")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, cell func(t *target) string, r func(t *target) float64) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t", cell(t))
		}
		for _, t := range ts[1:] {
			if r == nil {
				fmt.Fprintf(tw, "\t")
			} else {
				fmt.Fprintf(tw, "%s\t", ratio(r(gw), r(t)))
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\t")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t", t.name)
	}
	for _, t := range ts[1:] {
		fmt.Fprintf(tw, "gateway/%s\t", t.name)
	}
	fmt.Fprintln(tw)
	row("request bytes", func(t *target) string { return fmt.Sprint(len(t.body)) }, nil)
	row("answer bytes", func(t *target) string { return fmt.Sprint(t.respBytes) }, nil)
	row("sequential calls", func(t *target) string { return fmt.Sprint(len(t.seq)) }, nil)
	for _, p := range []float64{50, 90, 99} {
		f := func(t *target) float64 { return float64(percentile(t.seq, p)) }
		row(fmt.Sprintf("  p%.0f", p), func(t *target) string { return us(percentile(t.seq, p)) }, f)
	}
	row("  mean", func(t *target) string { return us(mean(t.seq)) }, func(t *target) float64 { return float64(mean(t.seq)) })
	perCall := func(v uint64, t *target) float64 { return float64(v) / float64(max(t.allocCalls, 1)) }
	row("  KB allocated/call", func(t *target) string { return fmt.Sprintf("%.1f", perCall(t.allocBytes, t)/1024) },
		func(t *target) float64 { return perCall(t.allocBytes, t) })
	row("  allocs/call", func(t *target) string { return fmt.Sprintf("%.0f", perCall(t.allocs, t)) },
		func(t *target) float64 { return perCall(t.allocs, t) })
	rps := func(t *target) float64 { return float64(t.loadOK) / t.loadElapsed.Seconds() }
	row(fmt.Sprintf("concurrent calls (c=%d)", o.c), func(t *target) string { return fmt.Sprint(t.loadOK) }, nil)
	row("  requests/s", func(t *target) string { return fmt.Sprintf("%.0f", rps(t)) }, rps)
	for _, p := range []float64{50, 99} {
		f := func(t *target) float64 { return float64(percentile(t.loadLat, p)) }
		row(fmt.Sprintf("  p%.0f under load", p), func(t *target) string { return us(percentile(t.loadLat, p)) }, f)
	}
	row("errors", func(t *target) string { return fmt.Sprint(t.errors()) }, nil)
	tw.Flush()

	r := float64(percentile(gw.seq, 50)) / float64(percentile(bare.seq, 50))
	verdict := "met"
	if r > 1.5 {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "\ngateway p50 / bare p50 = %.2fx (target at most 1.50x: %s)\n", r, verdict)
	if len(ts) > 2 {
		fmt.Fprintf(w, "gateway p50 / raw p50  = %.2fx (raw validates nothing; for reference)\n", float64(percentile(gw.seq, 50))/float64(percentile(ts[2].seq, 50)))
	}
	for _, t := range ts {
		for _, e := range t.firstErr {
			fmt.Fprintf(w, "%s error: %s\n", t.name, e)
		}
	}
}
