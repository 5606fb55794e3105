package connector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// cachedTools returns the raw cached tools of connector name and when they were synced.
func cachedTools(t *testing.T, tbl store.Table, c tenant.Caller, name string) (string, int64) {
	t.Helper()
	it, err := tbl.Get(context.Background(), tenant.Key(c.Tenant)+"conn#"+name, "cache#"+connector.KindTools)
	if err != nil {
		t.Fatalf("reading the cached tools of %s: %v", name, err)
	}
	return it.String("list"), it.Int("synced_at")
}

// syncDue runs a scheduled sync. Its counts are the table's: on DynamoDB
// Local the tests share one, so the tests that use them run embedded.
func syncDue(t *testing.T, e *env) connector.SyncDueOutput {
	t.Helper()
	out, err := e.svc.SyncDue(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// syncStatus returns connector name's sync status and last sync.
func syncStatus(t *testing.T, e *env, c tenant.Caller, name string) (string, time.Time) {
	t.Helper()
	g, err := e.svc.Get(context.Background(), c, connector.NameInput{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	if g.Connector.LastSyncedAt != nil {
		at = *g.Connector.LastSyncedAt
	}
	return g.Connector.SyncStatus, at
}

func toolNames(t *testing.T, e *env, c tenant.Caller) []string {
	t.Helper()
	l, err := e.svc.Listing(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range l.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestAScheduledSyncThatFailsKeepsTheLastGoodCacheAndRecordsWhy(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, func(o *connector.Options) { o.CacheTTL = time.Minute })
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		fine := newUpstream(t, connector.TransportSSE, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		mustCreate(t, e, c, connector.CreateInput{Name: "fine", BaseURL: fine.url(), Transport: connector.TransportSSE})
		syncDue(t, e)
		for _, n := range []string{"up", "fine"} {
			if st, _ := syncStatus(t, e, c, n); st != connector.SyncOK {
				t.Fatalf("after the first run %s is %s", n, st)
			}
		}
		_, fineAt := syncStatus(t, e, c, "fine")
		list, at := cachedTools(t, tbl, c, "up")
		if !strings.Contains(list, `"echo"`) {
			t.Fatalf("cached tools = %s", list)
		}
		var tries atomic.Int64
		up.setHook(func(w http.ResponseWriter, _ *http.Request, _ []byte) bool {
			tries.Add(1)
			http.Error(w, "the upstream is down", http.StatusInternalServerError)
			return true
		})
		e.now.Advance(2 * time.Minute)
		syncDue(t, e)
		g, err := e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
		if err != nil || g.Connector.SyncStatus != connector.SyncFailed || !strings.Contains(g.Connector.LastError, `connector "up"`) {
			t.Fatalf("the failed connector = %+v, %v; want FAILED with the reason", g.Connector, err)
		}
		if list2, at2 := cachedTools(t, tbl, c, "up"); list2 != list || at2 != at {
			t.Errorf("the cache changed after a failed sync: synced_at %d -> %d", at, at2)
		}
		if st, at := syncStatus(t, e, c, "fine"); st != connector.SyncOK || !at.After(fineAt) {
			t.Errorf("the other connector was not synced again: %s at %v", st, at)
		}
		before := tries.Load()
		syncDue(t, e)
		if tries.Load() != before {
			t.Errorf("a third run at once tried the failed upstream again; it waits a TTL")
		}
	})
}

func TestTheScheduledSyncKeepsTenantsApart(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		e := newEnv(t, tbl, nil)
		alice, bob := newCaller(t, "alice"), newCaller(t, "bob")
		upA, upB := newUpstream(t, connector.TransportStreamable, ""), newUpstream(t, connector.TransportStreamable, "")
		upB.srv.AddTool(&mcp.Tool{Name: "only_bob", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		// The same connector name in both tenants, each at its own upstream.
		mustCreate(t, e, alice, connector.CreateInput{Name: "up", BaseURL: upA.url(), Transport: connector.TransportStreamable})
		mustCreate(t, e, bob, connector.CreateInput{Name: "up", BaseURL: upB.url(), Transport: connector.TransportStreamable})
		syncDue(t, e)
		a, b := toolNames(t, e, alice), toolNames(t, e, bob)
		if !slices.Contains(a, "up__echo") || slices.Contains(a, "up__only_bob") {
			t.Errorf("alice lists %v", a)
		}
		if !slices.Contains(b, "up__only_bob") {
			t.Errorf("bob lists %v", b)
		}
	})
}

func TestTheScheduledSyncReachesEveryDueConnectorPastOnePage(t *testing.T) {
	e := newEnv(t, storetest.OpenEmbedded(t), nil)
	up := newUpstream(t, connector.TransportStreamable, "")
	const n = 105 // more than one page of the sync index
	for i := range n {
		c := newCaller(t, "alice")
		mustCreate(t, e, c, connector.CreateInput{Name: fmt.Sprintf("c%d", i), BaseURL: up.url(), Transport: connector.TransportStreamable})
	}
	if out := syncDue(t, e); out.Synced != n || out.More {
		t.Fatalf("run = %+v, want %d synced", out, n)
	}
	// A run that syncs every cache syncs each once: those it synced are
	// indexed past its cutoff, not on the pages it reads next.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := e.svc.SyncDue(ctx, 24*time.Hour); err != nil || out.Synced != n || out.More {
		t.Fatalf("a run syncing every cache = %+v, %v; want %d synced", out, err, n)
	}
	// Nor when the clock steps back during the run, indexing the
	// connectors it syncs after the ones it has read but before its cutoff.
	e.now.Advance(time.Hour)
	var stepped atomic.Bool
	up.setHook(func(http.ResponseWriter, *http.Request, []byte) bool {
		if !stepped.Swap(true) {
			e.now.Advance(-30 * time.Minute)
		}
		return false
	})
	if out, err := e.svc.SyncDue(ctx, 24*time.Hour); err != nil || out.Synced != n || out.More {
		t.Fatalf("a run whose clock stepped back half an hour = %+v, %v; want %d synced", out, err, n)
	}
}

func TestTheScheduledSyncRefreshesACacheThatWouldGoStaleBeforeItsNextRun(t *testing.T) {
	e := newEnv(t, storetest.OpenEmbedded(t), func(o *connector.Options) { o.CacheTTL = 5 * time.Minute })
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	if out := syncDue(t, e); out.Synced != 1 {
		t.Fatalf("the first run = %+v, want the new connector synced", out)
	}
	e.now.Advance(3 * time.Minute)
	for _, tc := range []struct {
		next time.Duration
		want int
	}{
		{0, 0},               // fresh for 2 more minutes
		{time.Minute, 0},     // still fresh at the next run
		{2 * time.Minute, 1}, // stale at the next run: synced now
		{time.Minute, 0},     // just synced
		{24 * time.Hour, 1},  // every cache
		{24 * time.Hour, 1},  // and again on the next run
	} {
		out, err := e.svc.SyncDue(context.Background(), tc.next)
		if err != nil || out.Synced != tc.want || out.Failed+out.Skipped != 0 {
			t.Fatalf("SyncDue(next %v) = %+v, %v; want %d synced", tc.next, out, err, tc.want)
		}
	}
}

func TestTheScheduledSyncStartsNoSyncItCannotFinishBeforeTheDeadline(t *testing.T) {
	e := newEnv(t, storetest.OpenEmbedded(t), nil) // calls time out after 30 s
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	out, err := e.svc.SyncDue(ctx, 0)
	if err != nil || out.Synced+out.Failed+out.Skipped != 0 || !out.More {
		t.Fatalf("SyncDue with 8 s left = %+v, %v; want nothing started and more to do", out, err)
	}
	if out := syncDue(t, e); out.Synced != 1 {
		t.Fatalf("the next run = %+v, want the connector synced", out)
	}
}

func TestTheScheduledSyncSkipsWhatItCannotSyncUntilItsNextTurn(t *testing.T) {
	e := newEnv(t, storetest.OpenEmbedded(t), nil)
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "mine", BaseURL: up.url(), Transport: connector.TransportStreamable,
		PrincipalScoped: true, Headers: map[string]string{"Authorization": "Bearer alice"}})
	d := mustCreate(t, e, c, connector.CreateInput{Name: "off", BaseURL: up.url(), Transport: connector.TransportStreamable})
	off := true
	if _, err := e.svc.Update(context.Background(), c, connector.UpdateInput{Name: "off", Version: d.Version, Disabled: &off}); err != nil {
		t.Fatal(err)
	}
	if out := syncDue(t, e); out.Skipped != 2 || out.Synced+out.Failed != 0 {
		t.Fatalf("run = %+v, want both skipped", out)
	}
	if out := syncDue(t, e); out.Skipped != 0 {
		t.Fatalf("a second run at once = %+v; skipped connectors wait their next turn", out)
	}
}

func TestConcurrentSyncsLeaveAConnectorOneItemInTheSyncIndex(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := e.svc.Sync(context.Background(), c, connector.NameInput{Name: "up"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		mine := indexItems(t, tbl, c)
		if len(mine) != 1 {
			t.Fatalf("the sync index holds %v for the connector, want one item", mine)
		}
	})
}

// indexItems returns the keys of c's tenant's items in the sync index.
func indexItems(t *testing.T, tbl store.Table, c tenant.Caller) []string {
	t.Helper()
	var mine []string
	for cursor := ""; ; {
		page, err := tbl.Query(context.Background(), "_conn#sync", store.Query{Cursor: cursor, Limit: store.MaxQueryLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if strings.Contains(it.SK, "#"+c.Tenant+"#") {
				mine = append(mine, it.SK)
			}
		}
		if cursor = page.Next; cursor == "" {
			return mine
		}
	}
}

func TestTheScheduledSyncRemovesStrayIndexItemsAndDeleteRemovesTheConnectorsOwn(t *testing.T) {
	ctx := context.Background()
	tbl := storetest.OpenEmbedded(t)
	e := newEnv(t, tbl, nil)
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	mustSync(t, e, c, "up")
	stray := fmt.Sprintf("%019d#%s#up", 1, c.Tenant)
	if err := tbl.Put(ctx, store.Item{PK: "_conn#sync", SK: stray}, store.Condition{}); err != nil {
		t.Fatal(err)
	}
	if out := syncDue(t, e); out.Synced != 0 || out.Skipped != 1 {
		t.Fatalf("run = %+v, want the stray item skipped, the fresh connector left", out)
	}
	if got := indexItems(t, tbl, c); len(got) != 1 || got[0] == stray {
		t.Fatalf("index = %v, want the connector's own item alone", got)
	}
	if _, err := e.svc.Delete(ctx, c, connector.DeleteInput{Name: "up"}); err != nil {
		t.Fatal(err)
	}
	if got := indexItems(t, tbl, c); len(got) != 0 {
		t.Fatalf("index after the delete = %v, want nothing", got)
	}
	if _, err := tbl.Get(ctx, tenant.Key(c.Tenant)+"conn#up", "sync"); err == nil {
		t.Fatal("the sync pointer outlived the connector")
	}
}

func TestANewSessionAsksFirstForTheProtocolTheUpstreamNegotiatedThatDay(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		var refuse atomic.Bool // the next initialize fails
		count := countHandshakes(up, func(w http.ResponseWriter, method string) bool {
			if method == "initialize" && refuse.CompareAndSwap(true, false) {
				http.Error(w, "unsupported protocol version", http.StatusBadRequest)
				return true
			}
			return false
		})
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		syncUp := func(s *connector.Service) error {
			_, err := s.Sync(ctx, c, connector.NameInput{Name: "up"})
			return err
		}
		steps := []struct {
			name                 string
			run                  func(*connector.Service) error
			discover, initialize int // the counts after the step
		}{
			{"the first sync discovers, then initialises on 2025-11-25", syncUp, 1, 1},
			{"a sync in another process initialises on 2025-11-25 at once", syncUp, 1, 2},
			{"a verify initialises at once", func(s *connector.Service) error {
				out, err := s.Verify(ctx, c, connector.NameInput{Name: "up"})
				if err == nil && out.ProtocolVersion != "2025-11-25" {
					t.Errorf("verify negotiated %q", out.ProtocolVersion)
				}
				return err
			}, 1, 3},
			{"a call in another process initialises at once", func(s *connector.Service) error {
				allow(t, e, c, "up", "echo")
				_, err := s.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
				return err
			}, 1, 4},
			{"a session whose initialisation on the remembered version fails discovers anew", func(s *connector.Service) error {
				refuse.Store(true)
				return syncUp(s)
			}, 2, 6},
			{"a day later a session discovers anew", func(s *connector.Service) error {
				e.now.Advance(25 * time.Hour)
				return syncUp(s)
			}, 3, 7},
			{"and the next one initialises at once", syncUp, 3, 8},
			{"a sync after the URL changed discovers anew", func(s *connector.Service) error {
				got, err := s.Get(ctx, c, connector.NameInput{Name: "up"})
				if err != nil {
					return err
				}
				if _, err := s.Update(ctx, c, connector.UpdateInput{Name: "up", Version: got.Connector.Version, BaseURL: up.url() + "/"}); err != nil {
					return err
				}
				return syncUp(s)
			}, 4, 9},
		}
		for _, step := range steps {
			if err := step.run(e.instance(t, nil)); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			if d, i := count(); d != step.discover || i != step.initialize {
				t.Fatalf("%s: %d discoveries and %d initialisations so far; want %d and %d", step.name, d, i, step.discover, step.initialize)
			}
		}
	})
}

// countHandshakes counts the server/discover and initialize requests up
// receives, after answer (if not nil) has had the chance to answer one
// itself.
func countHandshakes(up *upstream, answer func(w http.ResponseWriter, method string) bool) func() (discover, initialize int) {
	var mu sync.Mutex
	methods := map[string]int{}
	up.setHook(func(w http.ResponseWriter, _ *http.Request, body []byte) bool {
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		mu.Lock()
		methods[msg.Method]++
		mu.Unlock()
		return answer != nil && answer(w, msg.Method)
	})
	return func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return methods["server/discover"], methods["initialize"]
	}
}

func TestASessionKeptBusyForADayDoesNotKeepItsProtocolVersionRemembered(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		count := countHandshakes(up, nil)
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		warm := e.instance(t, nil)
		if _, err := warm.Sync(ctx, c, connector.NameInput{Name: "up"}); err != nil {
			t.Fatal(err)
		}
		allow(t, e, c, "up", "echo")
		for range 60 { // a call every 25 minutes: the session is never idle long enough to close
			e.now.Advance(25 * time.Minute)
			if _, err := warm.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := count()
		if _, err := e.instance(t, nil).Sync(ctx, c, connector.NameInput{Name: "up"}); err != nil {
			t.Fatal(err)
		}
		if after, _ := count(); after != before+1 {
			t.Errorf("a new session 25 hours after the negotiation made %d discoveries; want 1", after-before)
		}
	})
}

// A sync lands in the audit log as one ConnectorSynced event, written with
// its outcome on the connector: what it listed, or why it failed.
func TestASyncIsAuditedWithItsOutcome(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		gone := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "gone", BaseURL: gone.url(), Transport: connector.TransportStreamable})
		gone.http.Close()

		for _, tc := range []struct {
			name, connector, outcome string
			detail                   map[string]any
		}{
			{"a sync that lists", "up", "ok", map[string]any{"connector": "up", "tools": 7.0, "resources": 1.0, "prompts": 1.0, "refused": 0.0}},
			{"a sync that fails", "gone", "error: unavailable", map[string]any{"connector": "gone"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				trace := audit.NewTraceID()
				ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: trace})
				_, err := e.svc.Sync(ctx, c, connector.NameInput{Name: tc.connector})
				if (err != nil) != (tc.outcome != "ok") {
					t.Fatalf("Sync: %v, want outcome %s", err, tc.outcome)
				}
				out, err := audit.New(tbl, nil).GetTrace(ctx, c, audit.TraceInput{TraceID: trace})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Events) != 1 {
					t.Fatalf("events of the trace: %+v, want one", out.Events)
				}
				got := out.Events[0]
				if _, ok := got.Detail["error"].(string); ok != (tc.outcome != "ok") {
					t.Errorf("detail %v: an error exactly when the sync failed", got.Detail)
				}
				delete(got.Detail, "error")
				want := audit.Event{Tenant: c.Tenant, TraceID: trace, Type: audit.ConnectorSynced, Tool: "connector_sync", Principal: "alice",
					Outcome: tc.outcome, Detail: tc.detail}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(audit.Event{}, "Time")); diff != "" {
					t.Errorf("audit event mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}
