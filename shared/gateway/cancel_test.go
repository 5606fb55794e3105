package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A client that gives up on a call (closes its connection) ends the call:
// the function's context is cancelled, so its work stops instead of running
// on for nobody, whatever protocol version the client speaks.
func TestAClientThatGivesUpCancelsTheCall(t *testing.T) {
	type empty struct{}
	started, stopped, release := make(chan struct{}, 1), make(chan error, 1), make(chan struct{})
	block := &catalog.Tool{
		Name: "block", Title: "Block", Description: "Waits until its call is cancelled.", Family: "test", Function: "test/block",
		InputSchema: mustSchema[empty](t), OutputSchema: mustSchema[empty](t), Visibility: catalog.Public,
		Limits: catalog.Limits{Timeout: time.Minute, MemoryMB: 128},
	}
	h := newHarness(t, func(o *gateway.Options) {
		cat, err := catalog.New(append(catalog.Default().Tools(), block), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog = cat
		o.Invoker = invoke.NewLocal(map[string]lambdaHandler{"test/block": lambdafn.Tool(block, lambdafn.Deps{}, func(ctx context.Context, _ tenant.Caller, _ empty) (empty, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				stopped <- ctx.Err()
			case <-release: // the test failed: let the server close
			}
			return empty{}, ctx.Err()
		})}, &invoke.LocalOptions{Timeout: cat.Timeout})
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`
			if version == "2026-07-28" {
				body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{` +
					`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
					`"io.modelcontextprotocol/clientCapabilities":{}}}}`
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "block")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the function")
			}
			cancel() // the client gives up
			<-done
			select {
			case err := <-stopped:
				t.Logf("the function's context ended: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the function's context was not cancelled when its client gave up")
			}
		})
	}
}
