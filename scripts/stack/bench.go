package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// The tool the benchmark calls, and its function.
const (
	benchTool     = "memory_get_or_create"
	benchFunction = "memory/get_or_create"
)

// bench times n calls of benchTool through the stack with its instances
// warm, n with the gateway's and the tool function's instances ended before
// each (both cold starts), and n through the local one-process server
// (go run ./functions/gateway: embedded storage, no Lambda), and prints the
// p50 of each, as the MCP client sees it.
func (s *stack) bench(ctx context.Context, n int) error {
	gw, fn := s.byID["GatewayFunction"], s.byID[invoke.LogicalID(benchFunction)]
	if gw == nil || fn == nil {
		return fmt.Errorf("bench: the template has no GatewayFunction or %s", invoke.LogicalID(benchFunction))
	}
	stackSession, err := connect(ctx, s.frontURL+"/mcp", s.key)
	if err != nil {
		return err
	}
	defer stackSession.Close()
	warm, err := timeCalls(ctx, stackSession, n, nil)
	if err != nil {
		return err
	}
	cold, err := timeCalls(ctx, stackSession, n, func() { gw.Recycle(); fn.Recycle() })
	if err != nil {
		return err
	}
	localURL, stop, err := s.startLocalServer(ctx)
	if err != nil {
		return err
	}
	defer stop()
	localSession, err := connect(ctx, localURL, "")
	if err != nil {
		return err
	}
	defer localSession.Close()
	local, err := timeCalls(ctx, localSession, n, nil)
	if err != nil {
		return err
	}
	fmt.Printf("\ntools/call %s, %d calls each, p50 (min .. max), as an MCP client over HTTP sees it:\n", benchTool, n)
	for _, row := range []struct {
		name string
		d    []time.Duration
	}{
		{"stack, warm", warm},
		{"stack, cold (gateway and tool function)", cold},
		{"local server, in-process", local},
	} {
		fmt.Printf("  %-42s %8.2f ms  (%.2f .. %.2f)\n", row.name, ms(row.d[len(row.d)/2]), ms(row.d[0]), ms(row.d[len(row.d)-1]))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timeCalls calls benchTool n times, running before (if not nil) untimed
// before each, and returns the durations, sorted.
func timeCalls(ctx context.Context, cs *mcp.ClientSession, n int, before func()) ([]time.Duration, error) {
	var ds []time.Duration
	for i := range n {
		if before != nil {
			before()
		}
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: benchTool, Arguments: map[string]any{"conversation_id": fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)}})
		if err != nil {
			return nil, fmt.Errorf("bench: tools/call %s: %w", benchTool, err)
		}
		if res.IsError {
			return nil, fmt.Errorf("bench: tools/call %s answered an error: %v", benchTool, res.Content)
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds, nil
}

// connect opens an MCP session with url, sending key as a bearer token if set.
func connect(ctx context.Context, url, key string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "scripts/stack", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: connecting to %s: %w", url, err)
	}
	return cs, nil
}

type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.next.RoundTrip(r)
}

// startLocalServer builds and starts the local server on a free port with
// an empty data folder, and returns its MCP endpoint.
func (s *stack) startLocalServer(ctx context.Context) (string, func(), error) {
	bin := filepath.Join(s.work, "local-gateway")
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./functions/gateway").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("bench: building the local server: %w\n%s", err, b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--addr", addr, "--data", filepath.Join(s.work, "local-data"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	for range 100 {
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			resp.Body.Close()
			return "http://" + addr + "/mcp", stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("bench: the local server did not start on %s", addr)
}
