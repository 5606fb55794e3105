package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// BenchmarkFastPathGetContext measures what the gateway's process does for
// one tools/call of memory_get_context through the fast path, on the
// embedded store the local server uses, with a conversation of a dozen
// messages (as scripts/bench-protocol seeds it): the handler called
// directly, without HTTP, so that its allocations are the server's alone.
//
//	go test -run '^$' -bench FastPathGetContext -benchmem ./shared/gateway/
func BenchmarkFastPathGetContext(b *testing.B) {
	tbl, err := embedded.Open(filepath.Join(b.TempDir(), "switchboard.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tbl.Close() })
	deps := lambdafn.Deps{Table: tbl, Summarizer: offline.Summarizer{}}
	gw, err := gateway.New(gateway.Options{Catalog: catalog.Default(), Invoker: stack(b, deps), Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"}})
	if err != nil {
		b.Fatal(err)
	}
	h := gw.Handler()
	call := func(w *discardWriter, body string) {
		r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK || bytes.Contains(w.body, []byte(`"isError":true`)) {
			b.Fatalf("HTTP %d: %s", w.status, w.body)
		}
	}
	w := &discardWriter{}
	call(w, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get_or_create","arguments":{"conversation_id":"bench"}}}`)
	for i := 1; i <= 12; i++ {
		w.reset()
		call(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_add_message","arguments":{"conversation_id":"bench","role":"user","content":"Message %d of the benchmark conversation: the user talks about toothbrushes, which should be replaced every three months or sooner if the bristles fray."}}}`, i))
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"bench","max_messages":10}}}`
	r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1/mcp", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
	r.ContentLength = int64(len(body))
	rd := strings.NewReader(body)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		w.reset()
		rd.Reset(body)
		r.Body = io.NopCloser(rd)
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("HTTP %d: %s", w.status, w.body)
		}
	}
	// The process's CPU time is steadier than ns/op on a busy machine.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time this process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// discardWriter is a ResponseWriter that keeps the answer's status and
// body for reuse.
type discardWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *discardWriter) reset() {
	clear(w.header)
	w.status, w.body = 0, w.body[:0]
}

func (w *discardWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *discardWriter) Flush() {}
