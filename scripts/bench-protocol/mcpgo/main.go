// Command mcpgo is bench-protocol's mcp-go anchor: a bare mcp-go stateless
// Streamable HTTP server, with default options, whose one tool echoes its
// arguments back as structured content (and their JSON as text). It lives in
// its own module so that Switchboard's go.mod does not depend on mcp-go;
// bench-protocol builds and starts it.
//
// It prints its MCP URL on the first line of stdout, serves until its stdin
// is closed, and answers GET /bench/memstats with the process's cumulative
// allocation counters, as every bench-protocol server does. With
// -cpuprofile it profiles between POST /bench/cpu/start and /bench/cpu/stop.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	tool := flag.String("tool", "memory_get_context", "name of the echo tool")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to `file` between /bench/cpu/start and /bench/cpu/stop")
	flag.Parse()
	if err := run(*tool, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
}

func run(tool, cpuprofile string) error {
	s := server.NewMCPServer("mcpgo", "0.0.0")
	s.AddTool(mcp.NewTool(tool, mcp.WithDescription("Echoes its arguments.")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructuredOnly(req.GetArguments()), nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	control(mux, cpuprofile)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	return srv.Close()
}

// control adds bench-protocol's control endpoints to mux: the process's
// allocation counters, and starting and stopping the CPU profile.
func control(mux *http.ServeMux, cpuprofile string) {
	mux.HandleFunc("GET /bench/memstats", func(w http.ResponseWriter, _ *http.Request) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		json.NewEncoder(w).Encode(struct {
			TotalAlloc, Mallocs uint64
			CPU                 int64
		}{m.TotalAlloc, m.Mallocs, ru.Utime.Nano() + ru.Stime.Nano()})
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
