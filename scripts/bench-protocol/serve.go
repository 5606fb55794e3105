package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The servers bench-protocol measures, each in a process of its own.
const (
	kindGateway = "gateway"
	kindBare    = "go-sdk"
	kindRaw     = "go-sdk-raw"
	kindMCPGo   = "mcp-go"
	// kindBaseline is the gateway of another checkout (-baseline), served
	// by that checkout's bench-protocol.
	kindBaseline = "baseline"
)

// mcpgoDir is the mcp-go anchor's module, relative to the repository root.
const mcpgoDir = "scripts/bench-protocol/mcpgo"

// server is a running server process.
type server struct {
	name  string
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// start runs a server process (bin with args), which prints its MCP URL on
// the first line of its stdout and serves until its stdin closes.
func start(name, bin string, args ...string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("%s did not print its URL (got %q): %v", name, line, err)
	}
	return &server{name: name, url: strings.TrimSpace(line), cmd: cmd, stdin: stdin}, nil
}

// stop closes the server's stdin and waits for it to exit.
func (s *server) stop() error {
	s.stdin.Close()
	return s.cmd.Wait()
}

// buildMCPGo builds the mcp-go anchor, a module of its own, into dir.
func buildMCPGo(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(mcpgoDir, "go.mod")); err != nil {
		return "", fmt.Errorf("run bench-protocol from the repository root: %w", err)
	}
	bin := filepath.Join(dir, "mcpgo")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = mcpgoDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the mcp-go anchor: %w\n%s", err, out)
	}
	return bin, nil
}

// buildBaseline builds the bench-protocol of the checkout in root into dir,
// to serve that checkout's gateway beside this one's.
func buildBaseline(dir, root string) (string, error) {
	bin := filepath.Join(dir, "baseline")
	cmd := exec.Command("go", "build", "-o", bin, "./scripts/bench-protocol")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the baseline's bench-protocol in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// serveChild is the process side of start for the Go servers: it serves one
// kind on a free loopback port, prints the URL and serves until stdin closes.
func serveChild(kind, answerFile, cpuprofile string) error {
	ctx := context.Background()
	var h http.Handler
	switch kind {
	case kindGateway:
		dir, err := os.MkdirTemp("", "bench-protocol-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		gw, closeFn, err := newGateway(ctx, dir)
		if err != nil {
			return fmt.Errorf("starting the gateway: %w", err)
		}
		defer closeFn()
		h = gw
	case kindBare, kindRaw:
		b, err := os.ReadFile(answerFile)
		if err != nil {
			return err
		}
		var answer memory.GetContextOutput
		if err := json.Unmarshal(b, &answer); err != nil {
			return fmt.Errorf("reading the answer: %w", err)
		}
		if h, err = bareHandler(answer, kind == kindBare); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no server kind %q", kind)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	control(mux, cpuprofile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if kind == kindGateway { // as the local server serves it
		ln = gateway.WholeAnswers(srv, ln)
	}
	go srv.Serve(ln)
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	return srv.Close()
}

// control adds the endpoints bench-protocol drives every server with: the
// process's allocation counters, and starting and stopping its CPU profile.
// The mcp-go anchor has the same (mcpgo/main.go), in its own module.
func control(mux *http.ServeMux, cpuprofile string) {
	mux.HandleFunc("GET /bench/memstats", func(w http.ResponseWriter, _ *http.Request) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		json.NewEncoder(w).Encode(memstats{TotalAlloc: m.TotalAlloc, Mallocs: m.Mallocs, CPU: cpuTime()})
	})
	var mu sync.Mutex
	var f *os.File
	mux.HandleFunc("POST /bench/cpu/start", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if cpuprofile == "" || f != nil {
			return
		}
		var err error
		if f, err = os.Create(cpuprofile); err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("POST /bench/cpu/stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if f == nil {
			return
		}
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		f = nil
	})
}

// memstats are a server process's cumulative allocation counters and CPU
// time (user and system, in nanoseconds).
type memstats struct {
	TotalAlloc uint64
	Mallocs    uint64
	CPU        int64
}

// cpuTime returns the CPU time this process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// newGateway builds the gateway's handler the way the local server does
// (launch's localGateway): config.Local stores, every function in a
// local.Stack,
// the warning-level text logger, and the anonymous local caller since the
// fresh table holds no API key.
func newGateway(ctx context.Context, dir string) (http.Handler, func() error, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Open's only output is WARNING lines about offline providers; they do
	// not change what is served.
	cfg := config.Local(filepath.Join(dir, "data"))
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, io.Discard)
	if err != nil {
		return nil, nil, err
	}
	deps.Logger = logger
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		closeFn()
		return nil, nil, err
	}
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
		Catalog:           catalog.Default(),
		Invoker:           stack,
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
// memory_get_context's name and schemas and answers answer for any
// conversation: a typed tool (input and output validated by the go-sdk) if
// typed is set, else a raw one answering pre-encoded JSON.
func bareHandler(answer memory.GetContextOutput, typed bool) (http.Handler, error) {
	tool, ok := catalog.Default().Tool("memory_get_context")
	if !ok {
		return nil, errors.New("the catalog has no memory_get_context")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0.0.0"}, nil)
	t := &mcp.Tool{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema, OutputSchema: tool.OutputSchema}
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
