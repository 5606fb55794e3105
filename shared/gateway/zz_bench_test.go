package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}
func (w *nopWriter) Flush()                      {}

func BenchmarkZZCall(b *testing.B) {
	t := &testing.T{}
	_ = t
	tbl := storetest.OpenEmbedded(&testing.T{})
	cat := catalog.Default()
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(&testing.T{}), Summarizer: offline.Summarizer{}}
	g, _ := New(Options{Catalog: cat, Invoker: invoke.NewLocal(handlers.Build(handlers.All(), deps), cat.Timeout),
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"}, AllowLocalOrigins: true})
	h := g.Handler()
	do := func(body string) string {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.String()
	}
	do(toolsCall("1", "memory_get_or_create", `{"conversation_id":"bench"}`))
	for i := range 12 {
		_ = i
		do(toolsCall("1", "memory_add_message", `{"conversation_id":"bench","role":"user","content":"Message of the benchmark conversation: the user talks about toothbrushes, which should be replaced every three months or sooner if the bristles fray."}`))
	}
	body := toolsCall("1", "memory_get_context", `{"conversation_id":"bench","max_messages":6}`)
	if out := do(body); !strings.Contains(out, "summary") {
		b.Fatal(out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	w := &nopWriter{h: http.Header{}}
	for b.Loop() {
		r, _ := http.NewRequestWithContext(context.Background(), "POST", "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		clear(w.h)
		h.ServeHTTP(w, r)
	}
	_ = io.Discard
}
