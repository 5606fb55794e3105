package connector_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// sweepers is how many scheduled runs race over the same lapsed approvals.
const sweepers = 6

// An approval that lapses unseen is recorded expired by the scheduled sync's
// sweep: one ApprovalExpired event and one count, however many sweeps (each
// another instance of the function) and page views race for it.
func TestLapsedApprovalsAreRecordedExpiredOnce(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		mustSync(t, e, c, "up")
		args := json.RawMessage(`{"text":"10 EUR"}`)
		keys, _ := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
		gw := gateway{keys: keys, now: e.now.Now}

		// sweep runs the scheduled sync of n instances at once, each under a
		// trace of its own, and returns the ApprovalExpired events they wrote
		// for c's tenant and the expiries they reported, which on a shared
		// table include other tests' tenants'.
		sweep := func(t *testing.T, n int, alongside func()) (events []audit.Event, reported int) {
			t.Helper()
			traces := make([]string, n)
			outs := make([]connector.SyncDueOutput, n)
			var wg sync.WaitGroup
			for i := range n {
				svc := e.instance(t, nil)
				traces[i] = audit.NewTraceID()
				wg.Go(func() {
					var err error
					outs[i], err = svc.SyncDue(callcontext.NewContext(ctx, callcontext.Call{TraceID: traces[i]}), 0)
					if err != nil {
						t.Error(err)
					}
				})
			}
			if alongside != nil {
				wg.Go(alongside)
			}
			wg.Wait()
			for i, trace := range traces {
				reported += outs[i].Expired
				evs, _, err := audit.New(tbl, nil).Trace(ctx, c.Tenant, trace, "", 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					if ev.Type == audit.ApprovalExpired {
						events = append(events, ev)
					}
				}
			}
			return events, reported
		}
		expired := func(t *testing.T) int64 {
			t.Helper()
			h, err := e.svc.Health(ctx, c, connector.HealthInput{})
			if err != nil {
				t.Fatal(err)
			}
			return h.Connectors[0].Approvals.Expired
		}

		t.Run("a page approval nobody opens again is recorded once by racing sweeps", func(t *testing.T) {
			res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			if err != nil || !res.IsError {
				t.Fatalf("Call = %q, %v; want the approval's link", text(res), err)
			}
			id := res.Meta[connector.ApprovalMetaKey].(string)
			if evs, n := sweep(t, 1, nil); len(evs) != 0 {
				t.Fatalf("a sweep before the expiry recorded %d events, reported %d", len(evs), n)
			}
			e.now.Advance(connector.DefaultPageApprovalTTL + time.Second)
			before := expired(t)
			view := audit.NewTraceID()
			evs, n := sweep(t, sweepers, func() {
				e.svc.ApprovalGet(callcontext.NewContext(ctx, callcontext.Call{Caller: c, TraceID: view}), c, connector.ApprovalInput{ID: id})
			})
			viewed, _, _ := audit.New(tbl, nil).Trace(ctx, c.Tenant, view, "", 0)
			if got, _ := e.svc.ApprovalGet(ctx, c, connector.ApprovalInput{ID: id}); got.Approval.Status != connector.ApprovalExpired {
				t.Fatalf("status = %s, want %s", got.Approval.Status, connector.ApprovalExpired)
			}
			if len(evs)+len(viewed) != 1 || n < len(evs) {
				t.Fatalf("the sweeps recorded %d ApprovalExpired events (reported %d), the page view %d; want one in all", len(evs), n, len(viewed))
			}
			if got := expired(t) - before; got != 1 {
				t.Fatalf("connector_health counts %d more expired approvals, want 1", got)
			}
			if len(evs) == 1 && (evs[0].Detail["approval_id"] != id || evs[0].Principal != connector.SchedulerPrincipal || evs[0].Tool != "up__charge") {
				t.Fatalf("event = %+v", evs[0])
			}
			if evs, n := sweep(t, 1, nil); len(evs) != 0 {
				t.Fatalf("a later sweep recorded %d events, reported %d; want none", len(evs), n)
			}
		})
		t.Run("an approval asked by elicitation and left unanswered is recorded once", func(t *testing.T) {
			first := elicit.NewContext(ctx, &elicit.Round{Can: []string{elicit.MethodElicit}})
			_, err := e.svc.Call(first, c, connector.CallInput{Name: "up__charge", Arguments: args})
			gw.ask(t, err, c, "up__charge", args)
			before := expired(t)
			e.now.Advance(connector.DefaultApprovalTTL + time.Minute)
			if evs, n := sweep(t, sweepers, nil); len(evs) != 1 || n < 1 {
				t.Fatalf("the sweeps recorded %d ApprovalExpired events and reported %d; want one", len(evs), n)
			}
			if got := expired(t) - before; got != 1 {
				t.Fatalf("connector_health counts %d more expired approvals, want 1", got)
			}
		})
		t.Run("an answer with an expired state expires it once, and the sweep adds nothing", func(t *testing.T) {
			first := elicit.NewContext(ctx, &elicit.Round{Can: []string{elicit.MethodElicit}})
			_, err := e.svc.Call(first, c, connector.CallInput{Name: "up__charge", Arguments: args})
			token, _ := gw.ask(t, err, c, "up__charge", args)
			retry, err := gw.retry(token, c, "up__charge", args, "accept")
			if err != nil {
				t.Fatal(err)
			}
			before := expired(t)
			e.now.Advance(connector.DefaultApprovalTTL + time.Second)
			_, err = e.svc.Call(retry, c, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
			e.now.Advance(time.Minute)
			if evs, n := sweep(t, 2, nil); len(evs) != 0 {
				t.Fatalf("the sweeps recorded %d events, reported %d; the retry had recorded it", len(evs), n)
			}
			if got := expired(t) - before; got != 1 {
				t.Fatalf("connector_health counts %d more expired approvals, want 1", got)
			}
		})
		t.Run("a used or denied approval is never recorded expired", func(t *testing.T) {
			allowedCalls := up.calls.Load()
			res, _ := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			used := res.Meta[connector.ApprovalMetaKey].(string)
			if _, err := e.svc.Approve(ctx, c, connector.ApprovalInput{ID: used}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args, ApprovalID: used}); err != nil {
				t.Fatal(err)
			}
			res, _ = e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			if _, err := e.svc.Deny(ctx, c, connector.ApprovalInput{ID: res.Meta[connector.ApprovalMetaKey].(string)}); err != nil {
				t.Fatal(err)
			}
			before := expired(t)
			e.now.Advance(connector.DefaultPageApprovalTTL + time.Second)
			if evs, n := sweep(t, 2, nil); len(evs) != 0 {
				t.Fatalf("the sweeps recorded %d events, reported %d; want none", len(evs), n)
			}
			if got := expired(t) - before; got != 0 || up.calls.Load() != allowedCalls+1 {
				t.Fatalf("%d more expired, %d more upstream calls; want 0 and 1", got, up.calls.Load()-allowedCalls)
			}
		})
	})
}
