// Command bench-connector measures a proxied tools/call through Switchboard
// beside the same call made to its upstream directly, in one run, warm, and
// tools/list with 10 connectors of 50 tools each, cached (issue 12: a
// proxied call at most 1 ms more than one upstream round trip).
//
// It serves a go-sdk MCP server over Streamable HTTP on loopback in this
// process (50 tools; echo answers its text), builds the local server (go
// build ./functions/gateway) and starts it on a free loopback port with an
// empty data folder and --allow-connector-hosts 127.0.0.1, registers the
// upstream as connectors c0 ... c9 (created, verified, synced; c0's echo
// ALWAYS_ALLOW), then, with one go-sdk client session to each, alternates
// slices of -n calls of echo made directly and of c0__echo made through
// Switchboard, and times tools/list through Switchboard (-n/10 calls) before
// any connector is registered (the catalog's public tools, the anchor) and
// with the 10 connectors (the catalog's and the connectors' 500), each
// including the go-sdk client's decoding of the list. It prints the
// percentiles of each, and the difference of the call p50s.
//
// With -gateways it runs the given gateway binaries instead of building one,
// each with its own data folder, and alternates the slices of every one of
// them with the direct calls', so that two builds are compared in one run
// under the same load (build each with go build -o ./functions/gateway).
//
//	go run ./scripts/bench-connector                          # -n 2000
//	go run ./scripts/bench-connector -gateways /tmp/a,/tmp/b  # two builds side by side
//
// It is a benchmark, not a test: it prints figures, and exits 1 if a call
// fails or answers something else than expected. To see where a proxied
// call's time goes, profile a gateway while it runs: Go keeps frame
// pointers, so perf unwinds its stacks, e.g.
//
//	perf record -F 2000 -g -p "$(pgrep -f '^/tmp/b --addr')" -- sleep 10
//	perf report --children --sort symbol -g none
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	connectors     = 10
	toolsPerServer = 50
	rounds         = 10
)

func main() {
	n := flag.Int("n", 2000, "calls of each kind")
	gateways := flag.String("gateways", "", "comma-separated gateway `binaries` to compare in one run, instead of building ./functions/gateway")
	flag.Parse()
	var bins []string
	if *gateways != "" {
		bins = strings.Split(*gateways, ",")
	}
	if err := run(context.Background(), *n, bins); err != nil {
		fmt.Fprintln(os.Stderr, "bench-connector:", err)
		os.Exit(1)
	}
}

// target is one Switchboard under measure: its name in the figures, its
// client session and the figures taken through it.
type target struct {
	name      string
	sb        *mcp.ClientSession
	own, p, l []time.Duration
	ownListed int
	listed    int
}

func run(ctx context.Context, n int, bins []string) error {
	upstream, stopUpstream, err := serveUpstream()
	if err != nil {
		return err
	}
	defer stopUpstream()
	if len(bins) == 0 {
		bin, cleanup, err := build(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		bins = []string{bin}
	}
	direct, err := connect(ctx, upstream)
	if err != nil {
		return fmt.Errorf("connecting to the upstream: %w", err)
	}
	defer direct.Close()
	var targets []*target
	for _, bin := range bins {
		base, stop, err := startSwitchboard(bin)
		if err != nil {
			return err
		}
		defer stop()
		sb, err := connect(ctx, base)
		if err != nil {
			return fmt.Errorf("connecting to Switchboard: %w", err)
		}
		defer sb.Close()
		tg := &target{name: filepath.Base(bin), sb: sb}
		if len(bins) > 1 {
			tg.name = bin
		}
		if err := tg.prepare(ctx, n, upstream); err != nil {
			return err
		}
		targets = append(targets, tg)
	}

	args := map[string]any{"text": "hello"}
	directCall := func() error { _, err := call(ctx, direct, "echo", args, "hello"); return err }
	// Warm: sessions pooled, caches filled, code paged in.
	for range 200 {
		if err := directCall(); err != nil {
			return err
		}
		for _, tg := range targets {
			if err := tg.proxied(ctx, args); err != nil {
				return err
			}
		}
	}
	for _, tg := range targets {
		for range 20 {
			if err := tg.list(ctx); err != nil {
				return err
			}
		}
	}
	var d []time.Duration
	timed := func(f func() error, out *[]time.Duration, k int) error {
		for range k {
			start := time.Now()
			if err := f(); err != nil {
				return err
			}
			*out = append(*out, time.Since(start))
		}
		return nil
	}
	for range rounds {
		if err := timed(directCall, &d, n/rounds); err != nil {
			return err
		}
		for _, tg := range targets {
			if err := timed(func() error { return tg.proxied(ctx, args) }, &tg.p, n/rounds); err != nil {
				return err
			}
			if err := timed(func() error { return tg.list(ctx) }, &tg.l, max(n/rounds/10, 1)); err != nil {
				return err
			}
		}
	}
	fmt.Printf("bench-connector: warm, sequential, loopback; go-sdk upstream over Streamable HTTP; %d calls of each, in %d alternating slices\n\n", n, rounds)
	fmt.Printf("%-60s %10s %10s %10s\n", "", "p50", "p90", "p99")
	row := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		fmt.Printf("%-60s %10s %10s %10s\n", name, us(pct(ds, 50)), us(pct(ds, 90)), us(pct(ds, 99)))
	}
	row("tools/call echo, directly to the upstream", d)
	for _, tg := range targets {
		through := "through Switchboard"
		if len(targets) > 1 {
			through = "through " + tg.name
		}
		row("tools/call c0__echo, "+through, tg.p)
		row(fmt.Sprintf("tools/list %s, no connector (%d tools)", through, tg.ownListed), tg.own)
		row(fmt.Sprintf("tools/list %s, 10 connectors (%d tools)", through, tg.listed), tg.l)
	}
	fmt.Println()
	for _, tg := range targets {
		which := ""
		if len(targets) > 1 {
			which = ", " + tg.name
		}
		fmt.Printf("proxied p50 - direct p50 = %s (target: at most 1 ms)%s\n", us(pct(tg.p, 50)-pct(d, 50)), which)
	}
	return nil
}

// prepare times tools/list before any connector (the catalog's tools alone,
// the anchor), then registers the upstream as the 10 connectors.
func (tg *target) prepare(ctx context.Context, n int, upstream string) error {
	for i := range 20 + max(n/10, rounds) {
		start := time.Now()
		res, err := tg.sb.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		if i >= 20 {
			tg.own = append(tg.own, time.Since(start))
		}
		tg.ownListed = len(res.Tools)
	}
	for i := range connectors {
		name := fmt.Sprintf("c%d", i)
		for _, step := range []struct {
			tool string
			args map[string]any
		}{
			{"connector_create", map[string]any{"name": name, "base_url": upstream, "transport": "streamable_http"}},
			{"connector_verify", map[string]any{"name": name}},
			{"connector_sync", map[string]any{"name": name}},
		} {
			if _, err := call(ctx, tg.sb, step.tool, step.args, ""); err != nil {
				return err
			}
		}
	}
	_, err := call(ctx, tg.sb, "approval_policy_set", map[string]any{"connector": "c0", "tool": "echo", "policy": "ALWAYS_ALLOW"}, "")
	return err
}

func (tg *target) proxied(ctx context.Context, args map[string]any) error {
	_, err := call(ctx, tg.sb, "c0__echo", args, "hello")
	return err
}

func (tg *target) list(ctx context.Context) error {
	res, err := tg.sb.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	if tg.listed = len(res.Tools); tg.listed < connectors*toolsPerServer {
		return fmt.Errorf("tools/list listed %d tools, want at least %d", tg.listed, connectors*toolsPerServer)
	}
	return nil
}

// call calls tool through cs and checks it succeeded, answering want as its
// first text if want is set.
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, want string) (*mcp.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError || want != "" && text != want {
		return nil, fmt.Errorf("%s answered %q (isError %v)", tool, text, res.IsError)
	}
	return res, nil
}

func connect(ctx context.Context, endpoint string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-connector", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{}}, nil)
}

// serveUpstream serves a go-sdk server with toolsPerServer tools on
// loopback and returns its endpoint.
func serveUpstream() (string, func(), error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type in struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	echo := func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, echo)
	for i := 1; i < toolsPerServer; i++ {
		mcp.AddTool(srv, &mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "another tool of the upstream, to fill the listing"}, echo)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", func() { hs.Close() }, nil
}

// build builds the local server, and returns its binary and the function
// that removes it.
func build(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bench-connector-bin")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "gateway")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./functions/gateway")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./functions/gateway: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// startSwitchboard starts the local server bin with a data folder of its
// own, and returns its MCP endpoint.
func startSwitchboard(bin string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "bench-connector")
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "--addr", addr, "--data", filepath.Join(dir, "data"), "--allow-connector-hosts", "127.0.0.1")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get("http://" + addr + "/health"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return "http://" + addr + "/mcp", stop, nil
			}
		}
	}
	stop()
	return "", nil, errors.New("the local server did not start: " + strings.TrimSpace(log.String()))
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	s := slices.Clone(sorted)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
