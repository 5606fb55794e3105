package connector_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// auditTable is a table whose audit appends (puts in t#...#trace#
// partitions), once armed, wait for gate to close, if set, and then fail,
// if fail is set.
type auditTable struct {
	store.Table
	gate  chan struct{}
	fail  bool
	armed atomic.Bool
}

func (a *auditTable) Put(ctx context.Context, it store.Item, c store.Condition) error {
	if a.armed.Load() && strings.Contains(it.PK, "#trace#") {
		if a.gate != nil {
			<-a.gate
		}
		if a.fail {
			return errors.New("the table is away")
		}
	}
	return a.Table.Put(ctx, it, c)
}

// Every proxied call, whatever its outcome, lands in the audit log as a
// ToolCalled event that the audit tool (get_audit_trace) reads: who called
// which connector's tool, how it ended, how long it took, and the digest of
// its arguments, never the arguments themselves.
func TestProxiedCallsAreAuditedAndReadableWithTheAuditTool(t *testing.T) {
	if connector.CallTool != catalog.ConnectorCallTool {
		t.Fatalf("connector.CallTool %q, the catalog's %q", connector.CallTool, catalog.ConnectorCallTool)
	}
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		q := later.New()
		e := newEnv(t, tbl, func(o *connector.Options) { o.After = q })
		c := newCaller(t, "alice")
		allowedEcho(t, e, c)
		allow(t, e, c, "up", "fail")
		const secretArg = "an-argument-the-log-must-not-hold"
		args := json.RawMessage(`{ "text": "` + secretArg + `" }`)
		digest := elicit.ArgumentsDigest(args)

		for _, tc := range []struct {
			name, tool, outcome string
			isError             bool
		}{
			{"a call the upstream answers", "up__echo", "ok", false},
			{"a call the upstream answers with isError", "up__fail", "tool error", true},
			{"a call its policy has not allowed", "up__charge", "approval required", false},
			{"a call of a tool the connector does not list", "up__nope", "error: not_found", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				trace := audit.NewTraceID()
				ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: trace, RequestID: "req-" + trace[:8]})
				e.svc.Call(ctx, c, connector.CallInput{Name: tc.tool, Arguments: args})
				if err := q.Wait(ctx); err != nil {
					t.Fatal(err)
				}
				out, err := audit.New(tbl, nil).GetTrace(ctx, c, audit.TraceInput{TraceID: trace})
				if err != nil {
					t.Fatal(err)
				}
				var called []audit.Event
				for _, ev := range out.Events {
					if ev.Type == audit.ToolCalled {
						called = append(called, ev)
					}
				}
				if len(called) != 1 {
					t.Fatalf("ToolCalled events of the trace: %+v, want one", out.Events)
				}
				got := called[0]
				if ms, _ := got.Detail["duration_ms"].(float64); ms <= 0 {
					t.Errorf("duration_ms = %v, want the call's duration", got.Detail["duration_ms"])
				}
				_, upstreamTool, _ := connector.SplitName(tc.tool)
				want := audit.Event{Tenant: c.Tenant, TraceID: trace, Type: audit.ToolCalled, Tool: tc.tool, Principal: "alice",
					RequestID: "req-" + trace[:8], Outcome: tc.outcome, Detail: map[string]any{
						"connector": "up", "tool": upstreamTool, "is_error": tc.isError, "arguments_sha256": hex.EncodeToString(digest[:]),
					}}
				ignore := cmpopts.IgnoreMapEntries(func(k string, _ any) bool { return k == "duration_ms" || k == "error" })
				if diff := cmp.Diff(want, got, ignore, cmpopts.IgnoreFields(audit.Event{}, "Time")); diff != "" {
					t.Errorf("audit event mismatch (-want +got):\n%s", diff)
				}
				if b, _ := json.Marshal(out); bytes.Contains(b, []byte(secretArg)) {
					t.Errorf("the audit trail holds the raw arguments: %s", b)
				}
			})
		}
	})
}

// With a queue, the event is appended after the call has answered: a call
// returns while its audit write is still held back, and the write lands
// when released, before the queue's Wait returns.
func TestAProxiedCallAnswersBeforeItsAuditEventIsWritten(t *testing.T) {
	tbl := &auditTable{Table: storetest.OpenEmbedded(t), gate: make(chan struct{})}
	q := later.New()
	e := newEnv(t, tbl, func(o *connector.Options) { o.After = q })
	c := newCaller(t, "alice")
	allowedEcho(t, e, c)
	trace := audit.NewTraceID()
	ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: trace})
	tbl.armed.Store(true)

	answered := make(chan error, 1)
	go func() {
		_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		close(tbl.gate)
		t.Fatal("the call waited for its audit write")
	}
	close(tbl.gate)
	if err := q.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	out, _, err := audit.New(tbl, nil).Trace(ctx, c.Tenant, trace, "", 0)
	if err != nil || len(out) != 1 || out[0].Tool != "up__echo" {
		t.Fatalf("trace after the write = %+v, %v", out, err)
	}
}

// A lost audit event never fails the call: it is logged and counted as an
// AuditFailures metric of connector_call.
func TestALostAuditEventIsLoggedAndCounted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after *later.Queue
	}{{"after the answer", later.New()}, {"before the answer", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := &auditTable{Table: storetest.OpenEmbedded(t), fail: true}
			var records bytes.Buffer
			e := newEnv(t, tbl, func(o *connector.Options) { o.After, o.Metrics = tc.after, metrics.New(&records) })
			c := newCaller(t, "alice")
			allowedEcho(t, e, c)
			ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: "trace-lost"})
			tbl.armed.Store(true)
			res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
			if err != nil || text(res) != "echo: hi" {
				t.Fatalf("Call = %q, %v; a lost audit event must not fail the call", text(res), err)
			}
			if tc.after != nil {
				tc.after.Wait(ctx)
			}
			if !strings.Contains(e.logs.String(), `"msg":"audit append failed"`) || !strings.Contains(e.logs.String(), `"tool":"up__echo","trace_id":"trace-lost"`) {
				t.Errorf("no log line names the lost event:\n%s", e.logs.String())
			}
			var lost int
			for _, line := range strings.Split(strings.TrimSpace(records.String()), "\n") {
				var r struct {
					Function      string
					AuditFailures int
					Tenant        string `json:"tenant"`
				}
				if json.Unmarshal([]byte(line), &r) == nil && r.AuditFailures == 1 && r.Function == catalog.ConnectorCallTool && r.Tenant == c.Tenant {
					lost++
				}
			}
			if lost != 1 {
				t.Errorf("%d AuditFailures records of connector_call, want 1:\n%s", lost, records.String())
			}
		})
	}
}

// countingTable counts the table writes that carry audit events: one per
// Put or Transact, however many events it holds.
type countingTable struct {
	store.Table
	writes atomic.Int64
}

func (c *countingTable) Put(ctx context.Context, it store.Item, cond store.Condition) error {
	if strings.Contains(it.PK, "#trace#") {
		c.writes.Add(1)
	}
	return c.Table.Put(ctx, it, cond)
}

func (c *countingTable) Transact(ctx context.Context, writes ...store.Write) error {
	for _, w := range writes {
		if strings.Contains(w.Item.PK, "#trace#") {
			c.writes.Add(1)
			break
		}
	}
	return c.Table.Transact(ctx, writes...)
}

// The audit events of proxied calls made close together, after their
// answers, are written together, in fewer writes than calls (the local
// table syncs its file at each), and every one of them lands.
func TestAuditEventsOfCallsMadeTogetherAreWrittenTogether(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		counting := &countingTable{Table: tbl}
		q := later.New()
		e := newEnv(t, counting, func(o *connector.Options) { o.After = q })
		c := newCaller(t, "alice")
		allowedEcho(t, e, c)
		if _, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "up__echo"}); err != nil {
			t.Fatal(err) // the session is made
		}
		q.Wait(context.Background())
		counting.writes.Store(0)

		const calls = 20
		traces := make([]string, calls)
		var wg sync.WaitGroup
		for i := range traces {
			traces[i] = audit.NewTraceID()
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: traces[i]})
				if _, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if err := q.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := counting.writes.Load(); n >= calls {
			t.Errorf("%d calls' audit events took %d writes, want fewer", calls, n)
		}
		for _, trace := range traces {
			out, _, err := audit.New(tbl, nil).Trace(context.Background(), c.Tenant, trace, "", 0)
			if err != nil || len(out) != 1 || out[0].Type != audit.ToolCalled || out[0].Outcome != "ok" {
				t.Errorf("trace %s = %+v, %v; want its ToolCalled event", trace, out, err)
			}
		}
	})
}

// A batch is written whatever becomes of the call whose event began it: a
// call that ends at its deadline before the batch is written loses neither
// its event nor those of the calls that joined it.
func TestABatchOutlivesTheDeadlineOfTheCallThatBeganIt(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	q := later.New()
	e := newEnv(t, tbl, func(o *connector.Options) { o.After = q })
	c := newCaller(t, "alice")
	allowedEcho(t, e, c)
	if _, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "up__echo"}); err != nil {
		t.Fatal(err) // the session is made
	}
	q.Wait(context.Background())

	short, long := audit.NewTraceID(), audit.NewTraceID()
	ctx, cancel := context.WithTimeout(callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: short}), 5*time.Millisecond)
	defer cancel()
	e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}) // its outcome is not the point
	ctx = callcontext.NewContext(context.Background(), callcontext.Call{Caller: c, TraceID: long})
	if _, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, trace := range []string{short, long} {
		out, _, err := audit.New(tbl, nil).Trace(context.Background(), c.Tenant, trace, "", 0)
		if err != nil || len(out) != 1 || out[0].Type != audit.ToolCalled {
			t.Errorf("trace %s = %+v, %v; want its ToolCalled event", trace, out, err)
		}
	}
	if strings.Contains(e.logs.String(), "audit append failed") {
		t.Errorf("an event was reported lost:\n%s", e.logs.String())
	}
}
