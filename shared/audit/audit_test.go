package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestAuditLog(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		pk := storetest.NewPrefix(t, tbl)
		tn := strings.TrimPrefix(pk, "test#")
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, tenant.Key(tn)+"trace#"+tn) })
		// A frozen clock: events appended in sequence must still come back in sequence.
		frozen := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		log := audit.New(tbl, &audit.Options{Now: func() time.Time { return frozen }})
		trace := tn
		for i := 0; i < 25; i++ {
			if err := log.Append(ctx, audit.Event{Tenant: tn, TraceID: trace, Type: "Step", Tool: fmt.Sprintf("t%02d", i), Outcome: "ok",
				Detail: map[string]any{"i": i}}); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		cursor := ""
		for {
			events, next, err := log.Trace(ctx, tn, trace, cursor, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				got = append(got, e.Tool)
				if e.Detail["i"] == nil || e.Type != "Step" || e.Time.IsZero() {
					t.Errorf("event %+v lost fields", e)
				}
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		for i, name := range got {
			if want := fmt.Sprintf("t%02d", i); name != want {
				t.Fatalf("event %d is %s, want %s: order lost", i, name, want)
			}
		}
		if len(got) != 25 {
			t.Fatalf("read %d events, want 25", len(got))
		}
		// Another tenant sees nothing of the trace.
		other, _, err := log.Trace(ctx, "someone-else", trace, "", 0)
		if err != nil || len(other) != 0 {
			t.Errorf("another tenant reads %d events (%v)", len(other), err)
		}
		// Concurrent appenders lose nothing.
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := audit.New(tbl, nil).Append(ctx, audit.Event{Tenant: tn, TraceID: trace + "-c", Type: "Race", Outcome: "ok"}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, tenant.Key(tn)+"trace#"+trace+"-c") })
		if n := storetest.CountItems(t, tbl, tenant.Key(tn)+"trace#"+trace+"-c", ""); n != 50 {
			t.Errorf("50 concurrent appends stored %d events", n)
		}
		for name, e := range map[string]audit.Event{
			"NoTenant":  {TraceID: trace, Type: "x", Outcome: "ok"},
			"BadTrace":  {Tenant: tn, TraceID: "a b", Type: "x", Outcome: "ok"},
			"NoType":    {Tenant: tn, TraceID: trace, Outcome: "ok"},
			"NoOutcome": {Tenant: tn, TraceID: trace, Type: "x"},
		} {
			if err := log.Append(ctx, e); err == nil {
				t.Errorf("Append(%s) succeeded", name)
			}
		}
		if _, err := log.GetTrace(ctx, tenant.Caller{Tenant: tn}, audit.TraceInput{TraceID: "bad id!"}); fault.KindOf(err) != fault.KindInvalid {
			t.Errorf("GetTrace(bad id) error = %v, want invalid", err)
		}
	})
}

// TestItemLandsOnlyWithTheChangeItRecords writes events built by Item in
// transactions with the change they record: a transaction that fails leaves
// no event, one that commits leaves its event in order with appended ones.
func TestItemLandsOnlyWithTheChangeItRecords(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		pk := storetest.NewPrefix(t, tbl)
		tn := strings.TrimPrefix(pk, "test#")
		trace := tn
		t.Cleanup(func() { storetest.PurgePartition(t, tbl, tenant.Key(tn)+"trace#"+trace) })
		log := audit.New(tbl, nil)
		change := store.Item{PK: pk, SK: "thing", Attrs: store.Attrs{"ver": int64(1)}}
		record := func(typ string) store.Write {
			t.Helper()
			it, err := log.Item(audit.Event{Tenant: tn, TraceID: trace, Type: typ, Outcome: "ok", Detail: map[string]any{"ver": 1}})
			if err != nil {
				t.Fatal(err)
			}
			return store.Put(it, store.IfAbsent())
		}
		if err := log.Append(ctx, audit.Event{Tenant: tn, TraceID: trace, Type: "Attempted", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Transact(ctx, store.Put(change, store.IfExists()), record("Lost")); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("transaction on a missing item: %v, want a failed condition", err)
		}
		if err := tbl.Transact(ctx, store.Put(change, store.IfAbsent()), record("Created")); err != nil {
			t.Fatal(err)
		}
		events, _, err := log.Trace(ctx, tn, trace, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range events {
			got = append(got, fmt.Sprint(e.Type, " ", e.Detail["ver"]))
		}
		if diff := cmp.Diff([]string{"Attempted <nil>", "Created 1"}, got); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
		if _, err := log.Item(audit.Event{Tenant: tn, TraceID: "a b", Type: "x", Outcome: "ok"}); err == nil {
			t.Error("Item(bad trace) succeeded")
		}
	})
}
