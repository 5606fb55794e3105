package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
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
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestRegistry(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		created := mustCreate(t, e, c, connector.CreateInput{Name: "docs", BaseURL: "http://127.0.0.1:1/mcp", Transport: "sse",
			Headers: map[string]string{"x-api-key": "k-secret-1"}})
		if created.Status != connector.StatusNeverConnected || created.SyncStatus != connector.SyncNever || created.Version != 1 ||
			created.Credentials.Kind != "headers" || strings.Join(created.Credentials.HeaderNames, ",") != "X-Api-Key" {
			t.Fatalf("created = %+v", created)
		}

		t.Run("a second connector of the same name is a conflict", func(t *testing.T) {
			_, err := e.svc.Create(ctx, c, connector.CreateInput{Name: "docs", BaseURL: "http://127.0.0.1:1/", Transport: "sse"})
			wantKind(t, err, fault.KindConflict, "")
		})
		t.Run("bad input names the field and changes nothing", func(t *testing.T) {
			for _, tc := range []struct {
				in    connector.CreateInput
				field string
			}{
				{connector.CreateInput{Name: "Docs", BaseURL: "http://x/", Transport: "sse"}, "name"},
				{connector.CreateInput{Name: "a__b", BaseURL: "http://x/", Transport: "sse"}, "name"},
				{connector.CreateInput{Name: "ok", BaseURL: "ftp://x/", Transport: "sse"}, "base_url"},
				{connector.CreateInput{Name: "ok", BaseURL: "http://x/", Transport: "stdio"}, "transport"},
				{connector.CreateInput{Name: "ok", BaseURL: "http://x/", Transport: "sse", Headers: map[string]string{"Host": "v"}}, "headers"},
				{connector.CreateInput{Name: "ok", BaseURL: "http://x/", Transport: "sse", Headers: map[string]string{"A": "b\r\nc"}}, "headers"},
				{connector.CreateInput{Name: "ok", BaseURL: "http://x/", Transport: "sse", OAuth: &connector.OAuth{TokenURL: "http://x/t"}}, "oauth"},
			} {
				_, err := e.svc.Create(ctx, c, tc.in)
				wantKind(t, err, fault.KindInvalid, tc.field)
			}
			list, err := e.svc.List(ctx, c, connector.ListInput{})
			if err != nil || len(list.Connectors) != 1 {
				t.Fatalf("List = %+v, %v; want only docs", list, err)
			}
		})
		t.Run("an update on a stale version is a conflict", func(t *testing.T) {
			upd, err := e.svc.Update(ctx, c, connector.UpdateInput{Name: "docs", Version: 1, Transport: "streamable_http"})
			if err != nil || upd.Connector.Version != 2 || upd.Connector.Transport != "streamable_http" {
				t.Fatalf("Update = %+v, %v", upd, err)
			}
			_, err = e.svc.Update(ctx, c, connector.UpdateInput{Name: "docs", Version: 1, BaseURL: "http://127.0.0.1:2/"})
			wantKind(t, err, fault.KindConflict, "")
		})
		t.Run("concurrent updates on one version: exactly one wins", func(t *testing.T) {
			got, _ := e.svc.Get(ctx, c, connector.NameInput{Name: "docs"})
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = e.svc.Update(ctx, c, connector.UpdateInput{Name: "docs", Version: got.Connector.Version, Headers: map[string]string{"X-Api-Key": "k-secret-2"}})
				})
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				if err == nil {
					ok++
				} else if fault.KindOf(err) != fault.KindConflict {
					t.Fatalf("update: %v", err)
				}
			}
			if ok != 1 {
				t.Fatalf("%d updates won, want 1", ok)
			}
		})
		t.Run("another tenant sees nothing", func(t *testing.T) {
			other := newCaller(t, "alice")
			_, err := e.svc.Get(ctx, other, connector.NameInput{Name: "docs"})
			wantKind(t, err, fault.KindNotFound, "name")
		})
		t.Run("delete removes the connector and its policies", func(t *testing.T) {
			allow(t, e, c, "docs", "echo")
			if _, err := e.svc.Delete(ctx, c, connector.DeleteInput{Name: "docs"}); err != nil {
				t.Fatal(err)
			}
			_, err := e.svc.Get(ctx, c, connector.NameInput{Name: "docs"})
			wantKind(t, err, fault.KindNotFound, "name")
			mustCreate(t, e, c, connector.CreateInput{Name: "docs", BaseURL: "http://127.0.0.1:1/", Transport: "sse"})
			pol, err := e.svc.PolicyList(ctx, c, connector.PolicyListInput{Connector: "docs"})
			if err != nil || len(pol.Policies) != 0 {
				t.Fatalf("policies after delete and create = %+v, %v", pol, err)
			}
		})
	})
}

func TestProxy(t *testing.T) {
	for _, transport := range []string{connector.TransportStreamable, connector.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, storetest.OpenEmbedded(t), nil)
			c := newCaller(t, "alice")
			up := newUpstream(t, transport, "Bearer up-secret")
			mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: transport,
				Headers: map[string]string{"Authorization": "Bearer up-secret"}})

			v, err := e.svc.Verify(ctx, c, connector.NameInput{Name: "up"})
			if err != nil || v.ServerName != "upstream" || v.Connector.Status != connector.StatusConnected {
				t.Fatalf("Verify = %+v, %v", v, err)
			}
			synced := mustSync(t, e, c, "up")
			if !strings.Contains(strings.Join(synced.Tools, ","), "up__echo") || synced.Resources != 1 || len(synced.Prompts) != 1 {
				t.Fatalf("Sync = %+v", synced)
			}
			for _, tool := range []string{"echo", "fail", "progress"} {
				allow(t, e, c, "up", tool)
			}

			t.Run("a proxied call answers as the upstream does", func(t *testing.T) {
				res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
				if err != nil || res.IsError || text(res) != "echo: hi" {
					t.Fatalf("Call = %q, %v", text(res), err)
				}
			})
			t.Run("an upstream isError passes through", func(t *testing.T) {
				res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__fail", Arguments: json.RawMessage(`{}`)})
				if err != nil || !res.IsError || text(res) != "upstream says no" {
					t.Fatalf("Call = %+v %q, %v", res, text(res), err)
				}
			})
			t.Run("upstream progress reaches the caller", func(t *testing.T) {
				var mu sync.Mutex
				var got []string
				res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__progress", Arguments: json.RawMessage(`{}`),
					Progress: func(p *mcp.ProgressNotificationParams) {
						mu.Lock()
						defer mu.Unlock()
						got = append(got, p.Message)
					}})
				if err != nil || text(res) != "done" {
					t.Fatalf("Call = %v %q, %v", res, text(res), err)
				}
				// Notifications travel ahead of the result on one stream.
				mu.Lock()
				defer mu.Unlock()
				if strings.Join(got, ",") != "step 1,step 2,step 3" {
					t.Fatalf("progress = %q", got)
				}
			})
			t.Run("resources and prompts are proxied under the connector's names", func(t *testing.T) {
				l, err := e.svc.Listing(ctx, c)
				if err != nil || len(l.Resources) != 1 || l.Resources[0].URI != "connector://up/file:///notes.txt" || len(l.Prompts) != 1 || l.Prompts[0].Name != "up__greet" {
					t.Fatalf("Listing = %+v, %v", l, err)
				}
				rr, err := e.svc.ReadResource(ctx, c, connector.ReadResourceInput{URI: l.Resources[0].URI})
				if err != nil || rr.Contents[0].Text != "the notes" || rr.Contents[0].URI != l.Resources[0].URI {
					t.Fatalf("ReadResource = %+v, %v", rr, err)
				}
				gp, err := e.svc.GetPrompt(ctx, c, connector.GetPromptInput{Name: "up__greet"})
				if err != nil || len(gp.Messages) != 1 {
					t.Fatalf("GetPrompt = %+v, %v", gp, err)
				}
			})
			t.Run("a denied tool is neither listed nor called", func(t *testing.T) {
				if _, err := e.svc.PolicySet(ctx, c, connector.PolicySetInput{Connector: "up", Tool: "whoami", Policy: connector.PolicyDeny}); err != nil {
					t.Fatal(err)
				}
				l, _ := e.svc.Listing(ctx, c)
				oa, _ := e.svc.ToolsOpenAI(ctx, c, connector.OpenAIInput{})
				for _, tl := range l.Tools {
					if tl.Name == "up__whoami" {
						t.Fatal("a denied tool is listed")
					}
				}
				if len(oa.Tools) != len(l.Tools) || oa.Tools[0].Type != "function" || !json.Valid(oa.Tools[0].Function.Parameters) {
					t.Fatalf("OpenAI export = %+v, listing has %d tools", oa, len(l.Tools))
				}
				_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__whoami"})
				wantKind(t, err, fault.KindInvalid, "name")
			})
			t.Run("the OpenAI export adds Switchboard's own tools first when asked", func(t *testing.T) {
				own := connector.OpenAITool{Type: "function", Function: connector.OpenAIFunction{Name: "memory_add_message", Parameters: json.RawMessage(`{"type":"object"}`)}}
				svc := e.instance(t, func(o *connector.Options) {
					o.OwnTools = func() []connector.OpenAITool { return []connector.OpenAITool{own} }
				})
				without, err1 := svc.ToolsOpenAI(ctx, c, connector.OpenAIInput{})
				with, err2 := svc.ToolsOpenAI(ctx, c, connector.OpenAIInput{IncludeSwitchboard: true})
				if err1 != nil || err2 != nil || len(with.Tools) != len(without.Tools)+1 || with.Tools[0].Function.Name != own.Function.Name ||
					slices.ContainsFunc(without.Tools, func(tl connector.OpenAITool) bool { return tl.Function.Name == own.Function.Name }) {
					t.Fatalf("export without own tools %+v (%v), with %+v (%v)", without, err1, with, err2)
				}
			})
			t.Run("health counts the calls", func(t *testing.T) {
				h, err := e.svc.Health(ctx, c, connector.HealthInput{})
				if err != nil || h.Status != "up" || len(h.Connectors) != 1 || h.Connectors[0].Calls < 3 || h.Connectors[0].Sessions[connector.SessionActive] != 1 {
					t.Fatalf("Health = %+v, %v", h, err)
				}
			})
		})
	}
}

func TestSyncRefusesNamesItCannotList(t *testing.T) {

	e := newEnv(t, storetest.OpenEmbedded(t), nil)
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	// Names the go-sdk server accepts but that break MCP's rules once prefixed.
	up.srv.AddTool(&mcp.Tool{Name: strings.Repeat("t", 125), InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	out := mustSync(t, e, c, "up")
	if len(out.Refused) != 1 || !strings.Contains(out.Refused[0].Reason, "128") {
		t.Fatalf("refused = %+v", out.Refused)
	}
}

func TestScheduledSync(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, func(o *connector.Options) { o.CacheTTL = time.Minute })
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		mustCreate(t, e, c, connector.CreateInput{Name: "gone", BaseURL: "http://127.0.0.1:1/", Transport: connector.TransportStreamable})
		due := func() map[string]string {
			if _, err := e.svc.SyncDue(ctx, 0); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, n := range []string{"up", "gone"} {
				g, _ := e.svc.Get(ctx, c, connector.NameInput{Name: n})
				got[n] = g.Connector.SyncStatus
			}
			return got
		}
		if got := due(); got["up"] != connector.SyncOK || got["gone"] != connector.SyncFailed {
			t.Fatalf("after the first run: %v", got)
		}
		g, _ := e.svc.Get(ctx, c, connector.NameInput{Name: "gone"})
		if g.Connector.Status != connector.StatusError || g.Connector.LastError == "" {
			t.Fatalf("a failed sync records why: %+v", g.Connector)
		}
		before, _ := e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
		due()
		after, _ := e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
		if !after.Connector.LastSyncedAt.Equal(*before.Connector.LastSyncedAt) {
			t.Fatal("a fresh cache was synced again")
		}
		e.now.Advance(2 * time.Minute)
		due()
		after, _ = e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
		if !after.Connector.LastSyncedAt.After(*before.Connector.LastSyncedAt) {
			t.Fatal("a stale cache was not synced")
		}
	})
}

// countingDials returns an HTTP client that counts in dials the connections
// it dials.
func countingDials(dials *atomic.Int64) *http.Client {
	dialer := &net.Dialer{}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}}}
}

// Calls one after another reuse one connection to the upstream: the go-sdk
// drains the rest of a call's response stream after handing the call its
// result, and a call that ended its context at once cut that drain, and
// with it the connection, which a later call dialed again.
func TestSequentialCallsKeepTheirConnection(t *testing.T) {
	var dials atomic.Int64
	client := countingDials(&dials)
	e := newEnv(t, storetest.OpenEmbedded(t), func(o *connector.Options) { o.HTTPClient = client })
	c := newCaller(t, "alice")
	allowedEcho(t, e, c)
	call := func() {
		t.Helper()
		res, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		if err != nil || text(res) != "echo: hi" {
			t.Fatalf("Call = %q, %v", text(res), err)
		}
	}
	call() // the session is made
	before := dials.Load()
	for range 100 {
		call()
	}
	// Without the drain, 40 of 100 calls dialed again; a loaded machine
	// may let the odd drain outlast its grace.
	if n := dials.Load() - before; n > 5 {
		t.Errorf("100 calls dialed the upstream %d more times, want (nearly) none", n)
	}
}

// A new session initialises over one connection: the go-sdk sends the
// initialized notification as soon as it has read initialize's result, while
// the connection is still busy with the rest of that response's stream,
// which the upstream here ends a little later. The notification waits for it
// rather than dial another connection (and make a second TLS handshake).
func TestANewSessionInitialisesOverOneConnection(t *testing.T) {
	var dials atomic.Int64
	client := countingDials(&dials)
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if w.Header().Get("Content-Type") == "text/event-stream" {
			time.Sleep(500 * time.Microsecond) // the stream ends after its last event
		}
	}))
	t.Cleanup(func() {
		up.CloseClientConnections()
		up.Close()
	})
	e := newEnv(t, storetest.OpenEmbedded(t), func(o *connector.Options) { o.HTTPClient = client })
	c := newCaller(t, "alice")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.URL, Transport: connector.TransportStreamable})
	const sessions = 20
	for range sessions {
		// connector_verify makes a new session each time.
		if _, err := e.svc.Verify(context.Background(), c, connector.NameInput{Name: "up"}); err != nil {
			t.Fatal(err)
		}
	}
	// Each session closes the one before it (a DELETE, in the background),
	// so two connections serve them all; without the wait, half of the
	// sessions dialed a third. A loaded machine may let the odd stream
	// outlast the wait.
	if n := dials.Load(); n > 5 {
		t.Errorf("%d new sessions, one after another, dialed the upstream %d times, want (nearly) 2", sessions, n)
	}
}

// A connector's URL is checked again (its host resolved anew) when a
// session to it is made, not on each call over a live one, whose connection
// was checked when made: a lookup per call cost a DNS round trip.
func TestTheURLIsCheckedAgainWhenASessionIsMade(t *testing.T) {
	var checks atomic.Int64
	var refuse atomic.Bool
	check := func(ctx context.Context, raw string) (*url.URL, error) {
		checks.Add(1)
		if refuse.Load() {
			return nil, errors.New("it resolves to a private address now")
		}
		return allowLoopback(ctx, raw)
	}
	e := newEnv(t, storetest.OpenEmbedded(t), func(o *connector.Options) { o.CheckURL = check })
	c := newCaller(t, "alice")
	allowedEcho(t, e, c)
	call := func() error {
		_, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	before := checks.Load()
	for range 10 {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	if n := checks.Load() - before; n != 0 {
		t.Errorf("10 calls over a live session checked the URL %d times, want 0", n)
	}
	refuse.Store(true)
	// connector_verify starts a fresh session, which the check refuses.
	if _, err := e.svc.Verify(context.Background(), c, connector.NameInput{Name: "up"}); err == nil || !strings.Contains(err.Error(), "refused now") {
		t.Errorf("Verify with the URL refused = %v, want it refused", err)
	}
	if err := call(); err == nil || !strings.Contains(err.Error(), "refused now") {
		t.Errorf("a call needing a new session with the URL refused = %v, want it refused", err)
	}
}

// failingTransact is a table whose transactions fail once armed.
type failingTransact struct {
	store.Table
	armed atomic.Bool
}

func (f *failingTransact) Transact(ctx context.Context, writes ...store.Write) error {
	if f.armed.Load() {
		return errors.New("injected: the table is unavailable")
	}
	return f.Table.Transact(ctx, writes...)
}

// A delete that stops half-way, its policies and credentials gone but the
// connector still there, leaves it disabled: no instance calls its tools
// with what it read of them before, until it is deleted again.
func TestADeleteThatStopsHalfWayLeavesTheConnectorDisabled(t *testing.T) {
	ctx := context.Background()
	tbl := &failingTransact{Table: storetest.OpenEmbedded(t)}
	e := newEnv(t, tbl, nil)
	c := newCaller(t, "alice")
	allowedEcho(t, e, c)
	tbl.armed.Store(true)
	if _, err := e.svc.Delete(ctx, c, connector.DeleteInput{Name: "up"}); err == nil {
		t.Fatal("the delete succeeded although its last write failed")
	}
	tbl.armed.Store(false)
	got, err := e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
	if err != nil || got.Connector.Status != connector.StatusDisabled {
		t.Fatalf("after the half-done delete: %+v, %v; want it DISABLED", got.Connector, err)
	}
	if _, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); err == nil {
		t.Error("a call to the half-deleted connector ran")
	}
	if _, err := e.svc.Delete(ctx, c, connector.DeleteInput{Name: "up"}); err != nil {
		t.Fatalf("deleting it again: %v", err)
	}
}
