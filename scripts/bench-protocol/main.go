// Command bench-protocol measures an MCP tools/call through Switchboard's
// gateway beside a bare go-sdk server and a bare mcp-go server, on loopback,
// in one run (issue 11: the gateway's p50 at most 1.0x mcp-go's at
// concurrency 1, its throughput at least 1.0x at concurrency 8).
//
// Each server runs in a process of its own, so that none shares a heap or a
// collector with another or with the client (this process):
//
//   - gateway: Switchboard as `go run ./functions/gateway` assembles it: an
//     embedded table in a temporary folder, the in-process invoker over
//     [handlers.All] (package local), and the anonymous local caller (no API key exists);
//     every check on (Origin, body limit, authentication, protocol headers,
//     the arguments' schema). It answers memory_get_context from the store.
//   - go-sdk: a go-sdk stateless Streamable HTTP server whose one tool,
//     memory_get_context, is registered with [mcp.AddTool] under the same
//     input and output schemas and answers the gateway's result from memory,
//     without touching any store. As every typed go-sdk tool does, it
//     validates its input and its output against the schemas.
//   - go-sdk-raw (unless -raw=false): the same, registered with
//     [mcp.Server.AddTool] and answering pre-encoded JSON, so the go-sdk
//     validates nothing: the floor of a go-sdk tools/call.
//   - mcp-go: a bare mcp-go stateless Streamable HTTP server (the newest tag,
//     in its own module under mcpgo/, which this command builds) whose one
//     tool, of the same name, echoes its arguments: a trivial tool.
//   - baseline (with -baseline dir): the gateway of another checkout (say
//     main's worktree), built from its own bench-protocol and seeded alike,
//     so that a change is measured beside what it changes in one run.
//
// After seeding a conversation with a dozen messages through the gateway, it
// POSTs the same tools/call body to every server with the headers a
// 2025-11-25 client sends (no initialize: the servers are stateless), checks
// every answer (the gateway and go-sdk servers: a successful result with the
// expected messages; mcp-go: its arguments echoed), and measures sequential
// calls (c=1: latency percentiles, requests/s) over -n calls and -c
// concurrent clients (requests/s, latency under load) over -duration per
// server. The servers run in alternating slices (gateway, go-sdk, ...,
// mcp-go, mcp-go, ..., gateway, ...) so that they share the machine's
// noise. The table also shows what each server process allocates per
// sequential call.
//
//	go run ./scripts/bench-protocol                               # -n 2000 -c 8 -duration 10s
//	go run ./scripts/bench-protocol -baseline /work/main          # beside another checkout's gateway
//	go run ./scripts/bench-protocol -cpuprofile /tmp/cpu          # then:
//	go tool pprof -top /tmp/cpu.gateway                           # the gateway's measured runs
//
// Run it from the repository root. It is a benchmark, not a test: it prints
// figures and asserts nothing about time. It exits 1 if any call failed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/switchboard-dev/switchboard/shared/memory"
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
	baseline   string
}

func main() {
	var o options
	var serve, answer string
	flag.IntVar(&o.n, "n", 2000, "sequential calls per server for the latency percentiles")
	flag.IntVar(&o.c, "c", 8, "concurrent clients for the throughput run")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "throughput measuring time per server, split into -rounds slices")
	flag.IntVar(&o.warmup, "warmup", 500, "unmeasured calls per server before measuring")
	flag.IntVar(&o.rounds, "rounds", 4, "alternating slices per server in the throughput run")
	flag.IntVar(&o.chunk, "chunk", 100, "sequential calls per alternating slice in the latency run")
	flag.BoolVar(&o.raw, "raw", true, "also measure a go-sdk server whose tool validates nothing")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write each server's CPU profile of the measured runs to `prefix`.<server>")
	flag.StringVar(&o.baseline, "baseline", "", "also measure the gateway of the checkout in `dir` (another worktree, say main) as \"baseline\"")
	flag.StringVar(&serve, "serve", "", "internal: serve one `kind` of server (gateway, go-sdk, go-sdk-raw) in this process, for the parent run")
	flag.StringVar(&answer, "answer", "", "internal: with -serve, the `file` holding the go-sdk servers' answer")
	flag.Parse()
	if serve != "" {
		if err := serveChild(serve, answer, o.cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, "bench-protocol:", err)
			os.Exit(1)
		}
		return
	}
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
	mcpgo, err := buildMCPGo(dir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var baseline string
	if o.baseline != "" {
		if baseline, err = buildBaseline(dir, o.baseline); err != nil {
			return err
		}
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	launch := func(name, bin string, args ...string) (*server, error) {
		if o.cpuprofile != "" {
			args = append(args, "-cpuprofile", o.cpuprofile+"."+name)
		}
		s, err := start(name, bin, args...)
		if err == nil {
			servers = append(servers, s)
		}
		return s, err
	}

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

	gw, err := launch(kindGateway, self, "-serve", kindGateway)
	if err != nil {
		return err
	}
	// Seed the conversation through the gateway itself, and read back the
	// answer the go-sdk servers will give.
	answer, err := seed(ctx, client, gw.url)
	if err != nil {
		return fmt.Errorf("seeding the conversation: %w", err)
	}
	answerFile := filepath.Join(dir, "answer.json")
	b, err := json.Marshal(answer)
	if err != nil {
		return err
	}
	if err := os.WriteFile(answerFile, b, 0o600); err != nil {
		return err
	}
	args := map[string]any{"conversation_id": conversationID, "max_messages": memory.KeepRecent}
	body := callBody(1, "memory_get_context", args)
	checkContext := contextChecker(len(answer.Messages))
	targets := []*target{{name: kindGateway, url: gw.url, body: body, check: checkContext}}
	if baseline != "" {
		// The baseline's gateway has a store of its own, seeded alike.
		bg, err := launch(kindBaseline, baseline, "-serve", kindGateway)
		if err != nil {
			return err
		}
		if _, err := seed(ctx, client, bg.url); err != nil {
			return fmt.Errorf("seeding the baseline's conversation: %w", err)
		}
		targets = append(targets, &target{name: kindBaseline, url: bg.url, body: body, check: checkContext})
	}
	kinds := []string{kindBare}
	if o.raw {
		kinds = append(kinds, kindRaw)
	}
	for _, kind := range kinds {
		s, err := launch(kind, self, "-serve", kind, "-answer", answerFile)
		if err != nil {
			return err
		}
		targets = append(targets, &target{name: kind, url: s.url, body: body, check: checkContext})
	}
	mg, err := launch(kindMCPGo, mcpgo)
	if err != nil {
		return err
	}
	targets = append(targets, &target{name: kindMCPGo, url: mg.url, body: body, check: echoChecker(args)})

	for _, t := range targets {
		if err := t.probe(ctx, client); err != nil {
			return fmt.Errorf("%s: first call: %w", t.name, err)
		}
	}

	// Warm up the servers, the client's connections and the runtimes.
	for _, t := range targets {
		for range o.warmup {
			t.once(ctx, client, nil, nil)
		}
		load(ctx, client, t, o.c, 500*time.Millisecond, false)
	}

	if o.cpuprofile != "" {
		for _, t := range targets {
			if err := t.control(ctx, client, http.MethodPost, "cpu/start", nil); err != nil {
				return err
			}
		}
	}

	// Sequential calls: slices of -chunk calls, alternating which server goes first.
	for i, left := 0, o.n; left > 0; i++ {
		k := min(o.chunk, left)
		for _, t := range alternate(targets, i) {
			var before, after memstats
			if err := t.control(ctx, client, http.MethodGet, "memstats", &before); err != nil {
				return err
			}
			var buf bytes.Buffer
			start := time.Now()
			for range k {
				t.once(ctx, client, &buf, &t.seq)
			}
			t.seqElapsed += time.Since(start)
			if err := t.control(ctx, client, http.MethodGet, "memstats", &after); err != nil {
				return err
			}
			t.allocBytes += after.TotalAlloc - before.TotalAlloc
			t.allocs += after.Mallocs - before.Mallocs
			t.allocCalls += k
			t.seqCPU += time.Duration(after.CPU - before.CPU)
		}
		left -= k
	}

	// Throughput: -c clients for -duration per server, in alternating slices.
	slice := o.duration / time.Duration(o.rounds)
	for i := range o.rounds {
		for _, t := range alternate(targets, i) {
			var before, after memstats
			if err := t.control(ctx, client, http.MethodGet, "memstats", &before); err != nil {
				return err
			}
			clientBefore := cpuTime()
			r := load(ctx, client, t, o.c, slice, true)
			t.clientCPU += time.Duration(cpuTime() - clientBefore)
			if err := t.control(ctx, client, http.MethodGet, "memstats", &after); err != nil {
				return err
			}
			t.loadOK += r.ok
			t.loadElapsed += r.elapsed
			t.loadLat = append(t.loadLat, r.lat...)
			t.loadCPU += time.Duration(after.CPU - before.CPU)
		}
	}
	if o.cpuprofile != "" {
		for _, t := range targets {
			if err := t.control(ctx, client, http.MethodPost, "cpu/stop", nil); err != nil {
				return err
			}
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

// contextChecker accepts a memory_get_context result with messages messages.
func contextChecker(messages int) func(json.RawMessage) error {
	return func(sc json.RawMessage) error {
		var out struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(sc, &out); err != nil {
			return fmt.Errorf("undecodable structured content: %v", err)
		}
		if len(out.Messages) != messages {
			return fmt.Errorf("%d messages, want %d", len(out.Messages), messages)
		}
		return nil
	}
}

// echoChecker accepts structured content that is args.
func echoChecker(args map[string]any) func(json.RawMessage) error {
	want, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return func(sc json.RawMessage) error {
		if !bytes.Equal(sc, want) {
			return fmt.Errorf("echoed %s, want %s", excerpt(sc), want)
		}
		return nil
	}
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
	name      string
	url       string
	body      []byte
	check     func(structured json.RawMessage) error
	respBytes int
	// want is the first answer, which was checked, and ids where it has
	// ids that differ call to call (runs of 32 hex digits): an answer equal
	// to want but for those needs no decoding to check.
	want []byte
	ids  [][]int

	mu       sync.Mutex
	errCount int
	firstErr []string

	seq         []time.Duration // sequential latencies
	seqElapsed  time.Duration   // wall time of the sequential calls
	allocBytes  uint64          // allocated by the server process during the sequential calls
	allocs      uint64
	allocCalls  int
	seqCPU      time.Duration // server process CPU time during the sequential calls
	loadOK      int
	loadElapsed time.Duration
	loadLat     []time.Duration
	loadCPU     time.Duration // and during the concurrent ones
	clientCPU   time.Duration // this process's CPU time during the concurrent calls
}

// control calls one of the server's /bench endpoints, decoding its answer
// into out if not nil.
func (t *target) control(ctx context.Context, client *http.Client, method, path string, out any) error {
	url := strings.TrimSuffix(t.url, "/mcp") + "/bench/" + path
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", t.name, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(excerpt(b))
	}
	if err == nil && out != nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		return fmt.Errorf("%s: %s: %w", t.name, path, err)
	}
	return nil
}

// probe makes one checked call and records the size of the answer.
func (t *target) probe(ctx context.Context, client *http.Client) error {
	var buf bytes.Buffer
	if _, err := roundTrip(ctx, client, t.url, t.body, &buf); err != nil {
		return err
	}
	if err := t.verify(buf.Bytes()); err != nil {
		return err
	}
	t.respBytes = buf.Len()
	t.want = bytes.Clone(buf.Bytes())
	t.ids = hexIDs.FindAllIndex(t.want, -1)
	return nil
}

var hexIDs = regexp.MustCompile(`[0-9a-f]{32}`)

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// same reports whether body is the first answer but for its ids.
func (t *target) same(body []byte) bool {
	if len(body) != len(t.want) {
		return false
	}
	prev := 0
	for _, id := range t.ids {
		if !bytes.Equal(body[prev:id[0]], t.want[prev:id[0]]) || !isHex(body[id[0]:id[1]]) {
			return false
		}
		prev = id[1]
	}
	return bytes.Equal(body[prev:], t.want[prev:])
}

// once makes one call, checks it, and appends its latency to lat if it succeeded.
func (t *target) once(ctx context.Context, client *http.Client, buf *bytes.Buffer, lat *[]time.Duration) bool {
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	d, err := roundTrip(ctx, client, t.url, t.body, buf)
	if err == nil && !t.same(buf.Bytes()) {
		err = t.verify(buf.Bytes())
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

// verify checks that an answer is a successful result that t's check accepts.
func (t *target) verify(body []byte) error {
	sc, err := checkResult(body)
	if err != nil {
		return err
	}
	return t.check(sc)
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
	gw, mg := ts[0], ts[len(ts)-1]
	fmt.Fprintf(w, "bench-protocol: tools/call on loopback, protocol %s, each server in its own process\n", protocolVersion)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS=%d, NumCPU=%d; -n %d -c %d -duration %s -rounds %d -warmup %d\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), o.n, o.c, o.duration, o.rounds, o.warmup)
	fmt.Fprintf(w, "gateway: memory_get_context, embedded table, in-process invoker, %d-message conversation; "+
		"go-sdk: typed tool, same schemas, fixed answer", seedMessages)
	if o.raw {
		fmt.Fprintf(w, "; go-sdk-raw: raw tool, no validation")
	}
	fmt.Fprintf(w, "; mcp-go: echo tool")
	if o.baseline != "" {
		fmt.Fprintf(w, "; baseline: the gateway of %s", o.baseline)
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
	row("sequential calls (c=1)", func(t *target) string { return fmt.Sprint(len(t.seq)) }, nil)
	seqRPS := func(t *target) float64 { return float64(t.allocCalls) / t.seqElapsed.Seconds() }
	for _, p := range []float64{50, 90, 99} {
		f := func(t *target) float64 { return float64(percentile(t.seq, p)) }
		row(fmt.Sprintf("  p%.0f", p), func(t *target) string { return us(percentile(t.seq, p)) }, f)
	}
	row("  mean", func(t *target) string { return us(mean(t.seq)) }, func(t *target) float64 { return float64(mean(t.seq)) })
	row("  requests/s", func(t *target) string { return fmt.Sprintf("%.0f", seqRPS(t)) }, seqRPS)
	perCall := func(v uint64, t *target) float64 { return float64(v) / float64(max(t.allocCalls, 1)) }
	row("  server KB allocated/call", func(t *target) string { return fmt.Sprintf("%.1f", perCall(t.allocBytes, t)/1024) },
		func(t *target) float64 { return perCall(t.allocBytes, t) })
	row("  server allocs/call", func(t *target) string { return fmt.Sprintf("%.0f", perCall(t.allocs, t)) },
		func(t *target) float64 { return perCall(t.allocs, t) })
	seqCPU := func(t *target) float64 { return float64(t.seqCPU) / float64(max(t.allocCalls, 1)) }
	row("  server CPU/call", func(t *target) string { return us(time.Duration(seqCPU(t))) }, seqCPU)
	rps := func(t *target) float64 { return float64(t.loadOK) / t.loadElapsed.Seconds() }
	row(fmt.Sprintf("concurrent calls (c=%d)", o.c), func(t *target) string { return fmt.Sprint(t.loadOK) }, nil)
	row("  requests/s", func(t *target) string { return fmt.Sprintf("%.0f", rps(t)) }, rps)
	for _, p := range []float64{50, 99} {
		f := func(t *target) float64 { return float64(percentile(t.loadLat, p)) }
		row(fmt.Sprintf("  p%.0f under load", p), func(t *target) string { return us(percentile(t.loadLat, p)) }, f)
	}
	loadCPU := func(t *target) float64 { return float64(t.loadCPU) / float64(max(t.loadOK, 1)) }
	row("  server CPU/call", func(t *target) string { return us(time.Duration(loadCPU(t))) }, loadCPU)
	clientCPU := func(t *target) float64 { return float64(t.clientCPU) / float64(max(t.loadOK, 1)) }
	row("  client CPU/call", func(t *target) string { return us(time.Duration(clientCPU(t))) }, clientCPU)
	row("errors", func(t *target) string { return fmt.Sprint(t.errors()) }, nil)
	tw.Flush()

	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintln(w)
	for _, g := range ts {
		if g != gw && g.name != kindBaseline {
			continue
		}
		p50 := float64(percentile(g.seq, 50)) / float64(percentile(mg.seq, 50))
		fmt.Fprintf(w, "%s p50 / mcp-go p50 at c=1 = %.2fx (target at most 1.00x: %s)\n", g.name, p50, verdict(p50 <= 1))
		tput := rps(g) / rps(mg)
		fmt.Fprintf(w, "%s requests/s / mcp-go requests/s at c=%d = %.2fx (target at least 1.00x: %s)\n", g.name, o.c, tput, verdict(tput >= 1))
	}
	for _, t := range ts {
		for _, e := range t.firstErr {
			fmt.Fprintf(w, "%s error: %s\n", t.name, e)
		}
	}
}
