package connector_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// gcmSealer is a local Sealer: AES-256-GCM with the encryption context,
// sorted, as additional data, so that opening with another context fails as
// KMS would.
type gcmSealer struct{ aead cipher.AEAD }

func newSealer(t *testing.T) *gcmSealer {
	key := make([]byte, 32)
	rand.Read(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &gcmSealer{aead: aead}
}

func contextAAD(ec map[string]string) []byte {
	keys := make([]string, 0, len(ec))
	for k := range ec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q;", k, ec[k])
	}
	return []byte(b.String())
}

func (g *gcmSealer) Seal(_ context.Context, plain []byte, ec map[string]string) ([]byte, error) {
	nonce := make([]byte, g.aead.NonceSize())
	rand.Read(nonce)
	return g.aead.Seal(nonce, nonce, plain, contextAAD(ec)), nil
}

func (g *gcmSealer) Open(_ context.Context, sealed []byte, ec map[string]string) ([]byte, error) {
	n := g.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return g.aead.Open(nil, sealed[:n], sealed[n:], contextAAD(ec))
}

// allowLoopback is the URL check of the tests: http(s) URLs only.
func allowLoopback(_ context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http URL", raw)
	}
	return u, nil
}

// guardedClient is the outbound client the connector functions use
// (config/connectors), allowing the tests' upstreams on 127.0.0.1 over http,
// with responses capped at limit (each event of an event stream).
func guardedClient(limit int64) *http.Client {
	p := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}, MaxResponseBytes: limit, EventsCapped: true}
	return p.Client(0)
}

// responseCap is the body cap of the tests' client.
const responseCap = 4 << 20

// env is a Service on a table with a log buffer.
type env struct {
	svc    *connector.Service
	table  store.Table
	logs   *syncBuffer
	now    *clock
	sealer *gcmSealer
	opts   connector.Options
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clock is a settable clock that otherwise follows real time.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
func newEnv(t *testing.T, tbl store.Table, mod func(*connector.Options)) *env {
	logs := &syncBuffer{}
	clk := &clock{}
	opts := &connector.Options{
		CheckURL:    allowLoopback,
		HTTPClient:  guardedClient(responseCap),
		CallTimeout: 30 * time.Second, InitTimeout: 30 * time.Second, RetryDelay: 50 * time.Millisecond,
		Now:    clk.Now,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(opts)
	}
	e := &env{table: tbl, logs: logs, now: clk, sealer: newSealer(t), opts: *opts}
	e.svc = e.instance(t, nil)
	return e
}

// instance returns a Service on e's table and keys with e's options changed
// by mod: another process of the same deployment, with a pool of its own.
func (e *env) instance(t *testing.T, mod func(*connector.Options)) *connector.Service {
	opts := e.opts
	if mod != nil {
		mod(&opts)
	}
	svc := connector.New(e.table, e.sealer, &opts)
	t.Cleanup(func() { svc.Close() })
	return svc
}

// newCaller returns a caller in a tenant of its own.
func newCaller(t *testing.T, principal string) tenant.Caller {
	var b [6]byte
	rand.Read(b[:])
	return tenant.Caller{Tenant: "t" + hex.EncodeToString(b[:]), Principal: principal}
}

// upstream is a go-sdk server the tests proxy.
type upstream struct {
	srv     *mcp.Server
	http    *httptest.Server
	calls   atomic.Int64 // calls of the side-effect tool
	auth    atomic.Pointer[string]
	release chan struct{}
	// hook, if set, may answer a request itself (faults), given its body.
	hook atomic.Pointer[func(w http.ResponseWriter, r *http.Request, body []byte) bool]
}

type echoIn struct {
	Text string `json:"text,omitempty"`
}

// jsonResponses is the transport of newUpstream that is Streamable HTTP
// answering each request with a JSON body, not an event stream.
const jsonResponses = "streamable_http_json"

// newUpstream starts a go-sdk server over transport ("streamable_http",
// jsonResponses or "sse"), requiring the Authorization header auth when not empty.
func newUpstream(t *testing.T, transport, auth string) *upstream {
	u := &upstream{release: make(chan struct{})}
	u.auth.Store(&auth)
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1.2.3"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "Has a side effect: counts its calls."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		n := u.calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("charged %s (call %d)", in.Text, n)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream says no"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "Reports progress."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if tok := req.Params.GetProgressToken(); tok != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, nil, err
				}
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answers."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-u.release:
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Answers 20 MB."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 20<<20)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says which credential it saw."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "auth: " + req.Extra.Header.Get("Authorization") + " key: " + req.Extra.Header.Get("X-Api-Key")}}}, nil, nil
	})
	srv.AddResource(&mcp.Resource{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "the notes"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	u.srv = srv
	var h http.Handler
	switch transport {
	case connector.TransportSSE:
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	case jsonResponses:
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	default:
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	u.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want := *u.auth.Load(); want != "" && r.Header.Get("Authorization") != want && r.Header.Get("X-Api-Key") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if hook := u.hook.Load(); hook != nil && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if (*hook)(w, r, body) {
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		select {
		case <-u.release:
		default:
			close(u.release)
		}
		u.http.CloseClientConnections()
		u.http.Close()
	})
	return u
}

func (u *upstream) url() string { return u.http.URL }

func (u *upstream) setHook(f func(w http.ResponseWriter, r *http.Request, body []byte) bool) {
	u.hook.Store(&f)
}

func mustCreate(t *testing.T, e *env, c tenant.Caller, in connector.CreateInput) connector.Connector {
	t.Helper()
	out, err := e.svc.Create(context.Background(), c, in)
	if err != nil {
		t.Fatalf("Create(%s): %v", in.Name, err)
	}
	return out.Connector
}

func mustSync(t *testing.T, e *env, c tenant.Caller, name string) connector.SyncOutput {
	t.Helper()
	out, err := e.svc.Sync(context.Background(), c, connector.NameInput{Name: name})
	if err != nil {
		t.Fatalf("Sync(%s): %v", name, err)
	}
	return out
}

// allowedEcho registers, for c, a go-sdk upstream over Streamable HTTP as
// connector "up", synced, whose echo tool is ALWAYS_ALLOW: up__echo runs
// when called.
func allowedEcho(t *testing.T, e *env, c tenant.Caller) {
	t.Helper()
	up := newUpstream(t, connector.TransportStreamable, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	mustSync(t, e, c, "up")
	allow(t, e, c, "up", "echo")
}

func allow(t *testing.T, e *env, c tenant.Caller, conn, tool string) {
	t.Helper()
	if _, err := e.svc.PolicySet(context.Background(), c, connector.PolicySetInput{Connector: conn, Tool: tool, Policy: connector.PolicyAllow}); err != nil {
		t.Fatal(err)
	}
}

func text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func wantKind(t *testing.T, err error, kind fault.Kind, field string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != kind || (field != "" && fe.Field != field) {
		t.Fatalf("error = %v, want kind %s on field %q", err, kind, field)
	}
}
