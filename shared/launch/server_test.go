package launch

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// slowInvoker takes delay before each call, as a long tool call would.
type slowInvoker struct {
	invoke.Invoker
	delay time.Duration
}

func (s slowInvoker) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Invoker.Invoke(ctx, function, req)
}

// serveWith serves the local gateway, with every call delayed by delay, on
// a server with the timeouts t, and returns its base URL.
func serveWith(t *testing.T, to timeouts, delay time.Duration) string {
	t.Helper()
	cfg := config.Local(t.TempDir())
	deps, closeFn, err := lambdafn.Open(context.Background(), &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{
		Catalog:   catalog.Default(),
		Invoker:   slowInvoker{stack, delay},
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(gw.Handler(), to)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestSlowBodiesAreCutOff opens connections that send their headers, then
// their body a byte at a time (slowloris): the server closes every one once
// the read timeout has passed.
func TestSlowBodiesAreCutOff(t *testing.T) {
	const conns = 100
	base := serveWith(t, timeouts{header: time.Second, read: time.Second, write: time.Minute, idle: time.Minute}, 0)
	addr := strings.TrimPrefix(base, "http://")
	stop := make(chan struct{})
	closed := make(chan time.Duration, conns)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n{"))
		wg.Go(func() { // a byte every 100 ms, until the server hangs up
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		})
		go func() { // the server's answer, if any, then its hanging up
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 4096)
			for {
				if _, err := c.Read(buf); err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						closed <- -1
					} else {
						closed <- time.Since(start)
					}
					return
				}
			}
		}()
	}
	var slowest time.Duration
	for range conns {
		d := <-closed
		if d < 0 {
			t.Fatalf("a slow body still held its connection after 10 s; the read timeout is 1 s")
		}
		slowest = max(slowest, d)
	}
	t.Logf("%d slow-body connections closed, the last after %v", conns, slowest.Round(time.Millisecond))
}

// TestALongCallOutlastsTheReadAndIdleTimeouts makes tool calls that run
// longer than the read and idle timeouts, over MCP and over the
// compatibility endpoint (whose calls run under the request's context): they
// still answer, since those bound only a client's sending and waiting, not
// the call.
func TestALongCallOutlastsTheReadAndIdleTimeouts(t *testing.T) {
	base := serveWith(t, timeouts{header: time.Second, read: time.Second, write: time.Minute, idle: time.Second}, 2500*time.Millisecond)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_get_or_create", Arguments: map[string]any{"conversation_id": "long"}})
	if err != nil || res.IsError {
		t.Fatalf("a call of %v answered %+v, %v; want its result", time.Since(start).Round(time.Millisecond), res, err)
	}
	if took := time.Since(start); took < 2500*time.Millisecond {
		t.Fatalf("the call took %v: it was not delayed, so this tests nothing", took)
	}
	resp, err := http.Post(base+"/jsonrpc", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"memory-server/memory/get_or_create","params":{"conversation_id":"long2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `"created":true`) {
		t.Errorf("a long call on /jsonrpc answered %d %s; want its result", resp.StatusCode, body)
	}
}

func TestTheLocalTimeoutsLetTheLongestFunctionAnswer(t *testing.T) {
	cat := catalog.Default()
	to := localTimeouts(cat)
	for _, f := range cat.Functions() {
		if to.write <= f.Limits.Timeout {
			t.Errorf("%s may run %v, but the server stops writing after %v", f.Path, f.Limits.Timeout, to.write)
		}
	}
	if to.read <= 0 || to.read > time.Minute || to.header <= 0 || to.idle <= 0 {
		t.Errorf("timeouts %+v: a slow client must be cut off within a minute", to)
	}
}
