package career_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// newCaller returns a caller in a tenant of its own, so that tests sharing a
// DynamoDB table never see each other's data.
func newCaller(t *testing.T, tbl store.Table) tenant.Caller {
	p := storetest.NewPrefix(t, tbl)
	return tenant.Caller{Tenant: strings.ReplaceAll(strings.TrimPrefix(p, "test#"), "#", ""), Principal: "tester"}
}

func wantKind(t *testing.T, err error, kind fault.Kind, field string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != kind || fe.Field != field {
		t.Fatalf("error = %v, want kind %s on field %q", err, kind, field)
	}
}

// events returns the types of the audit events of trace, oldest first.
func events(t *testing.T, tbl store.Table, c tenant.Caller, trace string) []audit.Event {
	t.Helper()
	evs, _, err := audit.New(tbl, nil).Trace(context.Background(), c.Tenant, trace, "", store.MaxQueryLimit)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func countType(evs []audit.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func mustInteraction(t *testing.T, svc *career.Service, c tenant.Caller, id string) {
	t.Helper()
	if _, err := svc.CreateInteraction(context.Background(), c, career.InteractionCreateInput{InteractionID: id, Contact: "Sam"}); err != nil {
		t.Fatalf("CreateInteraction(%q): %v", id, err)
	}
}

func apply(t *testing.T, svc *career.Service, c tenant.Caller, id, event, key string) career.ApplyResult {
	t.Helper()
	out, err := svc.ApplyEvent(context.Background(), c, career.ApplyEventInput{InteractionID: id, Event: event, IdempotencyKey: key})
	if err != nil {
		t.Fatalf("ApplyEvent(%s, %s): %v", event, key, err)
	}
	return out.Result
}

func TestInteractions(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		for _, tc := range []struct {
			name string
			fn   func(t *testing.T, tbl store.Table)
		}{
			{"TheStateMachineMovesOnlyAlongItsTransitions", testStateMachine},
			{"FiftyConcurrentCallsWithOneKeyApplyOnce", testConcurrentSameKey},
			{"TwoDifferentEventsRacingLeaveOneLegalState", testRacingEvents},
			{"AnAppliedTransitionIsNeverWithoutItsCompletedEvent", testCompletedWithTransition},
			{"InteractionsAreCreatedOnlyForOpportunitiesThatExist", testCreateInteraction},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.fn(t, tbl) })
		}
	})
}

func testStateMachine(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	mustInteraction(t, svc, c, "int-1")
	if _, err := svc.CreateInteraction(ctx, c, career.InteractionCreateInput{InteractionID: "int-1"}); fault.KindOf(err) != fault.KindConflict {
		t.Errorf("creating int-1 twice: error = %v, want conflict", err)
	}
	type step struct {
		event, key    string
		outcome       string
		before, after career.State
		index         int64
	}
	for _, s := range []step{
		{"Send", "k0", career.InvalidTransition, career.Draft, career.Draft, 0},
		{"Prepare", "k1", career.Applied, career.Draft, career.Ready, 1},
		{"Prepare", "k1", career.AlreadyApplied, career.Draft, career.Ready, 1},
		{"Send", "k1", career.Conflict, career.Ready, career.Ready, 0}, // a key is for one event
		{"ReceiveReply", "k2", career.InvalidTransition, career.Ready, career.Ready, 0},
		{"Send", "k3", career.Applied, career.Ready, career.Sent, 2},
		{"ReceiveReply", "k4", career.Applied, career.Sent, career.Replied, 3},
		{"Close", "k5", career.Applied, career.Replied, career.Closed, 4},
		{"Close", "k6", career.InvalidTransition, career.Closed, career.Closed, 0},
		{"Prepare", "k1", career.AlreadyApplied, career.Draft, career.Ready, 1},
	} {
		r := apply(t, svc, c, "int-1", s.event, s.key)
		got := step{s.event, s.key, r.Outcome, r.BeforeState, r.AfterState, r.TransitionIndex}
		if got != s {
			t.Errorf("%s with key %s = %+v, want %+v", s.event, s.key, got, s)
		}
	}
	if r := apply(t, svc, c, "no-such", "Prepare", "k1"); r.Outcome != career.NotFound {
		t.Errorf("an event on a missing interaction: outcome %s, want not_found", r.Outcome)
	}
	got, err := svc.GetInteractions(ctx, c, career.InteractionGetInput{InteractionIDs: []string{"int-1", "no-such"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Interactions) != 1 || got.Interactions[0].State != career.Closed || got.Interactions[0].Transitions != 4 ||
		len(got.Interactions[0].History) != 4 || !cmp.Equal(got.Missing, []string{"no-such"}) {
		t.Fatalf("GetInteractions = %+v", got)
	}
	var path []string
	for _, tr := range got.Interactions[0].History {
		path = append(path, fmt.Sprintf("%d:%s %s->%s", tr.Index, tr.Event, tr.Before, tr.After))
	}
	want := []string{"1:Prepare draft->ready", "2:Send ready->sent", "3:ReceiveReply sent->replied", "4:Close replied->closed"}
	if diff := cmp.Diff(want, path); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
}

func testConcurrentSameKey(t *testing.T, tbl store.Table) {
	const callers = 50
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	mustInteraction(t, svc, c, "int-busy")
	trace := audit.NewTraceID()
	var wg sync.WaitGroup
	results := make(chan career.ApplyResult, callers)
	start := make(chan struct{})
	for range callers {
		wg.Go(func() {
			<-start
			out, err := svc.ApplyEvent(ctx, c, career.ApplyEventInput{InteractionID: "int-busy", Event: "Prepare", IdempotencyKey: "once", TraceID: trace})
			if err != nil {
				t.Errorf("ApplyEvent: %v", err)
				return
			}
			results <- out.Result
		})
	}
	close(start)
	wg.Wait()
	close(results)
	outcomes := map[string]int{}
	for r := range results {
		outcomes[r.Outcome]++
		if r.BeforeState != career.Draft || r.AfterState != career.Ready || r.TransitionIndex != 1 {
			t.Errorf("result %+v, want draft -> ready as transition 1", r)
		}
	}
	if diff := cmp.Diff(map[string]int{career.Applied: 1, career.AlreadyApplied: callers - 1}, outcomes); diff != "" {
		t.Errorf("outcomes mismatch (-want +got):\n%s", diff)
	}
	evs := events(t, tbl, c, trace)
	if n := countType(evs, audit.InteractionTransitionCompleted); n != 1 {
		t.Errorf("%d InteractionTransitionCompleted events, want 1", n)
	}
	if n := countType(evs, audit.InteractionTransitionAttempted); n != callers {
		t.Errorf("%d InteractionTransitionAttempted events, want %d", n, callers)
	}
	got, _ := svc.GetInteractions(ctx, c, career.InteractionGetInput{InteractionIDs: []string{"int-busy"}})
	if x := got.Interactions[0]; x.State != career.Ready || x.Transitions != 1 || len(x.History) != 1 {
		t.Errorf("stored interaction %+v, want ready after one transition", x)
	}
}

func testRacingEvents(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	draft := 0
	lost := func(r career.ApplyResult) bool {
		return r.Outcome == career.Conflict || r.Outcome == career.InvalidTransition
	}
	race := func(id string, a, b career.ApplyEventInput) (career.ApplyResult, career.ApplyResult, career.Interaction) {
		mustInteraction(t, svc, c, id)
		a.InteractionID, b.InteractionID = id, id
		var ra, rb career.ApplyResult
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, x := range []struct {
			in  career.ApplyEventInput
			out *career.ApplyResult
		}{{a, &ra}, {b, &rb}} {
			wg.Go(func() {
				<-start
				out, err := svc.ApplyEvent(ctx, c, x.in)
				if err != nil {
					t.Errorf("ApplyEvent: %v", err)
				}
				*x.out = out.Result
			})
		}
		close(start)
		wg.Wait()
		got, _ := svc.GetInteractions(ctx, c, career.InteractionGetInput{InteractionIDs: []string{id}})
		return ra, rb, got.Interactions[0]
	}
	for round := range 6 {
		// Both decided on draft: exactly one lands.
		prep, closing, x := race(fmt.Sprintf("int-race-%d", round),
			career.ApplyEventInput{Event: "Prepare", IdempotencyKey: "p", ExpectedState: &draft},
			career.ApplyEventInput{Event: "Close", IdempotencyKey: "c", ExpectedState: &draft})
		switch {
		case prep.Outcome == career.Applied && lost(closing):
			if x.State != career.Ready || x.Transitions != 1 {
				t.Errorf("round %d: Prepare won but the interaction is %s after %d transitions", round, x.StateName, x.Transitions)
			}
		case closing.Outcome == career.Applied && lost(prep):
			if x.State != career.Closed || x.Transitions != 1 {
				t.Errorf("round %d: Close won but the interaction is %s after %d transitions", round, x.StateName, x.Transitions)
			}
		default:
			t.Errorf("round %d: Prepare %s, Close %s; want exactly one applied and the other conflict or invalid_transition", round, prep.Outcome, closing.Outcome)
		}
		// The same event under two keys: the second finds it done.
		p1, p2, x := race(fmt.Sprintf("int-twice-%d", round),
			career.ApplyEventInput{Event: "Prepare", IdempotencyKey: "p1"},
			career.ApplyEventInput{Event: "Prepare", IdempotencyKey: "p2"})
		if (p1.Outcome == career.Applied) == (p2.Outcome == career.Applied) || !(lost(p1) || lost(p2)) || x.State != career.Ready || x.Transitions != 1 {
			t.Errorf("round %d: Prepare twice gave %s and %s, interaction %s after %d", round, p1.Outcome, p2.Outcome, x.StateName, x.Transitions)
		}
		// Without an expected state, calls that do not overlap may both land,
		// in an order the machine allows; overlapping ones never both do.
		prep, closing, x = race(fmt.Sprintf("int-free-%d", round),
			career.ApplyEventInput{Event: "Prepare", IdempotencyKey: "p"},
			career.ApplyEventInput{Event: "Close", IdempotencyKey: "c"})
		switch {
		case prep.Outcome == career.Applied && closing.Outcome == career.Applied:
			if prep.TransitionIndex != 1 || closing.TransitionIndex != 2 || closing.BeforeState != career.Ready || x.State != career.Closed || x.Transitions != 2 {
				t.Errorf("round %d: both applied out of order: %+v, %+v, interaction %+v", round, prep, closing, x)
			}
		case prep.Outcome == career.Applied && lost(closing):
			if x.State != career.Ready || x.Transitions != 1 {
				t.Errorf("round %d: Prepare won but the interaction is %s", round, x.StateName)
			}
		case closing.Outcome == career.Applied && lost(prep):
			if x.State != career.Closed || x.Transitions != 1 {
				t.Errorf("round %d: Close won but the interaction is %s", round, x.StateName)
			}
		default:
			t.Errorf("round %d: Prepare %s, Close %s", round, prep.Outcome, closing.Outcome)
		}
	}
}

// lostAppends is a store.Table on which every single-item Put fails, as if the
// process died after each transaction: only what a transaction wrote lands.
type lostAppends struct{ store.Table }

func (lostAppends) Put(context.Context, store.Item, store.Condition) error {
	return errors.New("process died")
}

func testCompletedWithTransition(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	c := newCaller(t, tbl)
	mustInteraction(t, career.New(tbl, nil, nil), c, "int-crash")
	svc := career.New(lostAppends{tbl}, nil, nil)
	trace := audit.NewTraceID()
	in := career.ApplyEventInput{InteractionID: "int-crash", Event: "Prepare", IdempotencyKey: "k1", TraceID: trace}
	out, err := svc.ApplyEvent(ctx, c, in)
	if err != nil || out.Result.Outcome != career.Applied {
		t.Fatalf("ApplyEvent = %+v, %v", out, err)
	}
	// The retry after the "crash" answers already_applied; the one Completed
	// event is the one written with the transition.
	retry, err := career.New(tbl, nil, nil).ApplyEvent(ctx, c, in)
	if err != nil || retry.Result.Outcome != career.AlreadyApplied {
		t.Fatalf("retry = %+v, %v", retry, err)
	}
	var got []audit.Event
	for _, e := range events(t, tbl, c, trace) {
		if e.Type == audit.InteractionTransitionCompleted {
			got = append(got, e)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d InteractionTransitionCompleted events, want 1", len(got))
	}
	want := map[string]any{"interaction_id": "int-crash", "event": "Prepare", "idempotency_key": "k1", "outcome": career.Applied,
		"before_state": float64(career.Draft), "after_state": float64(career.Ready), "transition_index": float64(1)}
	if diff := cmp.Diff(want, got[0].Detail); diff != "" {
		t.Errorf("Completed detail mismatch (-want +got):\n%s", diff)
	}
}

func testCreateInteraction(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	_, err := svc.CreateInteraction(ctx, c, career.InteractionCreateInput{InteractionID: "int-ghost", OpportunityID: "opp-ghost"})
	wantKind(t, err, fault.KindNotFound, "opportunity_id")
	if got, _ := svc.GetInteractions(ctx, c, career.InteractionGetInput{InteractionIDs: []string{"int-ghost"}}); len(got.Missing) != 1 {
		t.Errorf("a refused interaction was stored: %+v", got)
	}
	// Another tenant's opportunity is as unknown as none.
	other := newCaller(t, tbl)
	o, err := svc.CreateOpportunity(ctx, other, career.OpportunityCreateInput{Title: "Go engineer", Requirements: []string{"Go"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateInteraction(ctx, c, career.InteractionCreateInput{OpportunityID: o.Opportunity.OpportunityID})
	wantKind(t, err, fault.KindNotFound, "opportunity_id")

	mine, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: "Go engineer", Requirements: []string{"Go"}})
	if err != nil {
		t.Fatal(err)
	}
	trace := audit.NewTraceID()
	x, err := svc.CreateInteraction(ctx, c, career.InteractionCreateInput{InteractionID: "int-real", OpportunityID: mine.Opportunity.OpportunityID, TraceID: trace})
	if err != nil || x.Interaction.OpportunityID != mine.Opportunity.OpportunityID {
		t.Fatalf("CreateInteraction = %+v, %v", x, err)
	}
	_, err = svc.CreateInteraction(ctx, c, career.InteractionCreateInput{InteractionID: "int-real", OpportunityID: mine.Opportunity.OpportunityID})
	wantKind(t, err, fault.KindConflict, "")
	var got []string
	for _, e := range events(t, tbl, c, trace) {
		got = append(got, fmt.Sprint(e.Type, " ", e.Detail["interaction_id"], " ", e.Detail["opportunity_id"], " v", e.Detail["version"]))
	}
	want := []string{fmt.Sprint(audit.InteractionCreated, " int-real ", mine.Opportunity.OpportunityID, " v1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
}
