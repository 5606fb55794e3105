package career

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// State is an interaction's state. The numbers are the seed's.
type State int

// The states of an interaction.
const (
	Draft State = iota
	Ready
	Sent
	Replied
	Closed
)

// StateNames names the states, indexed by [State].
var StateNames = []string{"draft", "ready", "sent", "replied", "closed"}

func (s State) String() string {
	if s < 0 || int(s) >= len(StateNames) {
		return fmt.Sprintf("state(%d)", int(s))
	}
	return StateNames[s]
}

// Events are the interaction events, in the seed's names.
var Events = []string{"Prepare", "Send", "ReceiveReply", "Close"}

// next returns the state event leads to from s, or false if it is not a
// legal transition: draft -Prepare-> ready -Send-> sent -ReceiveReply->
// replied, and Close from any state but closed.
func next(s State, event string) (State, bool) {
	switch {
	case event == "Prepare" && s == Draft:
		return Ready, true
	case event == "Send" && s == Ready:
		return Sent, true
	case event == "ReceiveReply" && s == Sent:
		return Replied, true
	case event == "Close" && s != Closed:
		return Closed, true
	}
	return s, false
}

// The outcomes of interaction_apply_event.
const (
	Applied           = "applied"
	AlreadyApplied    = "already_applied"
	InvalidTransition = "invalid_transition"
	NotFound          = "not_found"
	Conflict          = "conflict"
	BackendError      = "backend_error"
)

// Interaction is a contact with an opportunity, moved through its states by events.
type Interaction struct {
	InteractionID string       `json:"interaction_id"`
	OpportunityID string       `json:"opportunity_id,omitempty"`
	Contact       string       `json:"contact,omitempty"`
	Channel       string       `json:"channel,omitempty"`
	State         State        `json:"state" jsonschema:"0 draft, 1 ready, 2 sent, 3 replied, 4 closed"`
	StateName     string       `json:"state_name"`
	Version       int64        `json:"version" jsonschema:"bumped by every applied transition"`
	Transitions   int64        `json:"transition_count" jsonschema:"how many transitions have been applied"`
	History       []Transition `json:"transitions,omitempty" jsonschema:"the applied transitions, oldest first"`
	CreatedAt     string       `json:"created_at"`
	UpdatedAt     string       `json:"updated_at"`
}

// Transition is one applied event.
type Transition struct {
	Index          int64  `json:"transition_index"`
	Event          string `json:"event"`
	Before         State  `json:"before_state"`
	After          State  `json:"after_state"`
	IdempotencyKey string `json:"idempotency_key"`
	TraceID        string `json:"trace_id"`
	At             string `json:"at"`
}

// InteractionCreateInput is the input of interaction_create.
type InteractionCreateInput struct {
	InteractionID string `json:"interaction_id,omitempty" jsonschema:"an id of your choosing; generated if omitted. Creating an id that exists is a conflict"`
	OpportunityID string `json:"opportunity_id,omitempty" jsonschema:"the opportunity the interaction is about"`
	Contact       string `json:"contact,omitempty" jsonschema:"who the interaction is with"`
	Channel       string `json:"channel,omitempty" jsonschema:"email, phone, referral, ..."`
	TraceID       string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// InteractionOutput is the output of interaction_create.
type InteractionOutput struct {
	Interaction Interaction `json:"interaction"`
	TraceID     string      `json:"trace_id"`
}

// InteractionGetInput is the input of interaction_get.
type InteractionGetInput struct {
	InteractionIDs []string `json:"interaction_ids" jsonschema:"the interactions to read, 1 to 100"`
}

// InteractionGetOutput is the output of interaction_get.
type InteractionGetOutput struct {
	Interactions []Interaction `json:"interactions" jsonschema:"the interactions found, with their transitions, in the order asked"`
	Missing      []string      `json:"missing" jsonschema:"ids you have no interaction with"`
}

// ApplyEventInput is the input of interaction_apply_event.
type ApplyEventInput struct {
	InteractionID  string `json:"interaction_id"`
	Event          string `json:"event" jsonschema:"Prepare, Send, ReceiveReply or Close"`
	IdempotencyKey string `json:"idempotency_key" jsonschema:"unique per intended transition: a retry with the same key returns the original result as already_applied"`
	ExpectedState  *int   `json:"expected_state,omitempty" jsonschema:"the state (0-4) you decided on; if the interaction is in another, the outcome is conflict and nothing changes"`
	TraceID        string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// ApplyResult is what an event did.
type ApplyResult struct {
	Outcome         string `json:"outcome" jsonschema:"applied, already_applied, invalid_transition, not_found, conflict or backend_error"`
	Event           string `json:"event"`
	BeforeState     State  `json:"before_state"`
	AfterState      State  `json:"after_state"`
	BeforeStateName string `json:"before_state_name"`
	AfterStateName  string `json:"after_state_name"`
	TransitionIndex int64  `json:"transition_index" jsonschema:"the index of the transition applied (for already_applied: the original one); 0 if none"`
	Message         string `json:"message,omitempty"`
	// OriginalTraceID is the trace of the call that applied the transition, for already_applied.
	OriginalTraceID string `json:"original_trace_id,omitempty"`
}

// ApplyEventOutput is the output of interaction_apply_event.
type ApplyEventOutput struct {
	InteractionID string      `json:"interaction_id"`
	TraceID       string      `json:"trace_id"`
	Result        ApplyResult `json:"result"`
}

// MaxContactChars bounds an interaction's contact and channel.
const MaxContactChars = 300

func interactionPK(c tenant.Caller, id string) string { return pk(c, "int#"+id) }
func interactionsPK(c tenant.Caller) string           { return pk(c, "ints") }

const (
	skIntMeta   = "meta"
	idemPrefix  = "idem#"
	transPrefix = "tr#"
)

func transSK(i int64) string { return fmt.Sprintf("%s%06d", transPrefix, i) }

func interactionMeta(c tenant.Caller, in Interaction) store.Item {
	return store.Item{PK: interactionPK(c, in.InteractionID), SK: skIntMeta, Attrs: store.Attrs{
		"state": int64(in.State), "ver": in.Version, "transitions": in.Transitions, "opportunity_id": in.OpportunityID,
		"contact": in.Contact, "channel": in.Channel, "created_at": in.CreatedAt, "updated_at": in.UpdatedAt,
	}}
}

func toInteraction(id string, it store.Item) Interaction {
	st := State(it.Int("state"))
	return Interaction{InteractionID: id, OpportunityID: it.String("opportunity_id"), Contact: it.String("contact"),
		Channel: it.String("channel"), State: st, StateName: st.String(), Version: it.Int("ver"),
		Transitions: it.Int("transitions"), CreatedAt: it.String("created_at"), UpdatedAt: it.String("updated_at")}
}

// CreateInteraction serves interaction_create: a new interaction in state draft.
func (s *Service) CreateInteraction(ctx context.Context, c tenant.Caller, in InteractionCreateInput) (InteractionOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return InteractionOutput{}, err
	}
	id := in.InteractionID
	if id == "" {
		id = s.newID("int")
	} else if err := validateID("interaction_id", id); err != nil {
		return InteractionOutput{}, err
	}
	if in.OpportunityID != "" {
		if err := validateID("opportunity_id", in.OpportunityID); err != nil {
			return InteractionOutput{}, err
		}
	}
	contact, err := checkOptional("contact", in.Contact, MaxContactChars)
	if err != nil {
		return InteractionOutput{}, err
	}
	channel, err := checkOptional("channel", in.Channel, MaxContactChars)
	if err != nil {
		return InteractionOutput{}, err
	}
	now := stamp(s.now())
	x := Interaction{InteractionID: id, OpportunityID: in.OpportunityID, Contact: contact, Channel: channel,
		State: Draft, StateName: Draft.String(), Version: 1, CreatedAt: now, UpdatedAt: now}
	rec, err := s.auditWrite(c, trace, audit.InteractionCreated, "interaction_create", map[string]any{
		"interaction_id": id, "opportunity_id": in.OpportunityID, "version": x.Version, "state": int(x.State)})
	if err != nil {
		return InteractionOutput{}, err
	}
	writes := []store.Write{
		store.Put(interactionMeta(c, x), store.IfAbsent()),
		store.Put(store.Item{PK: interactionsPK(c), SK: id, Attrs: store.Attrs{"created_at": now}}, store.IfAbsent()),
		rec,
	}
	if in.OpportunityID != "" {
		// The opportunity must exist when the interaction is made, checked in
		// the same transaction.
		writes = append(writes, store.Check(oppsPK(c), in.OpportunityID, store.IfExists()))
	}
	err = s.table.Transact(ctx, writes...)
	if lostRace(err) {
		if in.OpportunityID != "" {
			if _, oerr := s.loadOpportunity(ctx, c, in.OpportunityID); fault.KindOf(oerr) == fault.KindNotFound {
				return InteractionOutput{}, &fault.Error{Kind: fault.KindNotFound, Field: "opportunity_id",
					Message: fmt.Sprintf("opportunity %q does not exist; create it with opportunity_create, or leave opportunity_id out", in.OpportunityID)}
			}
		}
		return InteractionOutput{}, fault.Conflict(err, "interaction %q already exists; read it with interaction_get", id)
	}
	if err != nil {
		return InteractionOutput{}, unavailable(err, "storing the interaction failed; retry")
	}
	return InteractionOutput{Interaction: x, TraceID: trace}, nil
}

// GetInteractions serves interaction_get: each interaction with its transitions.
func (s *Service) GetInteractions(ctx context.Context, c tenant.Caller, in InteractionGetInput) (InteractionGetOutput, error) {
	if err := validateIDs("interaction_ids", in.InteractionIDs); err != nil {
		return InteractionGetOutput{}, err
	}
	out := InteractionGetOutput{Interactions: []Interaction{}, Missing: []string{}}
	for _, id := range in.InteractionIDs {
		meta, err := s.table.Get(ctx, interactionPK(c, id), skIntMeta)
		if errors.Is(err, store.ErrNotFound) {
			out.Missing = append(out.Missing, id)
			continue
		}
		if err != nil {
			return InteractionGetOutput{}, unavailable(err, "reading interaction %q failed; retry", id)
		}
		x := toInteraction(id, meta)
		items, err := s.queryAll(ctx, interactionPK(c, id), transPrefix)
		if err != nil {
			return InteractionGetOutput{}, unavailable(err, "reading the transitions of %q failed; retry", id)
		}
		x.History = make([]Transition, 0, len(items))
		for _, it := range items {
			x.History = append(x.History, toTransition(it))
		}
		out.Interactions = append(out.Interactions, x)
	}
	return out, nil
}

func toTransition(it store.Item) Transition {
	var i int64
	fmt.Sscanf(it.SK[len(transPrefix):], "%d", &i)
	return Transition{Index: i, Event: it.String("event"), Before: State(it.Int("before")), After: State(it.Int("after")),
		IdempotencyKey: it.String("idempotency_key"), TraceID: it.String("trace_id"), At: it.String("at")}
}

func result(outcome, event string, before, after State, index int64, msg string) ApplyResult {
	return ApplyResult{Outcome: outcome, Event: event, BeforeState: before, AfterState: after,
		BeforeStateName: before.String(), AfterStateName: after.String(), TransitionIndex: index, Message: msg}
}

// ApplyEvent serves interaction_apply_event. The transition lands in one
// transaction that puts the idempotency record if absent, moves the
// interaction if its version is the one read, puts the transition record if
// its slot is free and appends InteractionTransitionCompleted to the audit
// log, so no applied transition is ever left unaudited. Exactly one of any
// number of concurrent calls with one key applies it, and the others find its
// record and answer already_applied with the original result. A different event that lost the
// race to a transition answers conflict rather than being applied to a state
// its caller never saw.
func (s *Service) ApplyEvent(ctx context.Context, c tenant.Caller, in ApplyEventInput) (ApplyEventOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return ApplyEventOutput{}, err
	}
	if err := validateID("interaction_id", in.InteractionID); err != nil {
		return ApplyEventOutput{}, err
	}
	if !slices.Contains(Events, in.Event) {
		return ApplyEventOutput{}, fault.Invalid("event", "%q is not an event: use Prepare, Send, ReceiveReply or Close", in.Event)
	}
	if err := validateID("idempotency_key", in.IdempotencyKey); err != nil {
		return ApplyEventOutput{}, err
	}
	if in.ExpectedState != nil && (*in.ExpectedState < 0 || *in.ExpectedState > int(Closed)) {
		return ApplyEventOutput{}, fault.Invalid("expected_state", "%d is not a state: use 0 (draft) to 4 (closed)", *in.ExpectedState)
	}
	detail := map[string]any{"interaction_id": in.InteractionID, "event": in.Event, "idempotency_key": in.IdempotencyKey}
	s.record(ctx, c, trace, audit.InteractionTransitionAttempted, applyTool, "ok", detail)
	res := s.apply(ctx, c, in, trace)
	switch res.Outcome {
	case Applied, AlreadyApplied:
		// InteractionTransitionCompleted landed with the transition itself.
	default:
		s.record(ctx, c, trace, audit.InteractionTransitionRejected, applyTool, res.Outcome, transitionDetail(in, res))
	}
	return ApplyEventOutput{InteractionID: in.InteractionID, TraceID: trace, Result: res}, nil
}

const applyTool = "interaction_apply_event"

// transitionDetail is the audit detail of the outcome res of event in.
func transitionDetail(in ApplyEventInput, res ApplyResult) map[string]any {
	return map[string]any{"interaction_id": in.InteractionID, "event": in.Event, "idempotency_key": in.IdempotencyKey,
		"outcome": res.Outcome, "before_state": int(res.BeforeState), "after_state": int(res.AfterState), "transition_index": res.TransitionIndex}
}

func (s *Service) apply(ctx context.Context, c tenant.Caller, in ApplyEventInput, trace string) ApplyResult {
	p := interactionPK(c, in.InteractionID)
	idemSK := idemPrefix + in.IdempotencyKey
	var firstVer int64 = -1
	for attempt := 0; ; attempt++ {
		// The interaction first, then the key: if the key is absent after the
		// interaction was read, the state read is one the key never produced.
		meta, err := s.table.Get(ctx, p, skIntMeta)
		if errors.Is(err, store.ErrNotFound) {
			return result(NotFound, in.Event, 0, 0, 0, fmt.Sprintf("interaction %q does not exist; create it with interaction_create", in.InteractionID))
		}
		if err != nil {
			return result(BackendError, in.Event, 0, 0, 0, "reading the interaction failed; retry with the same key")
		}
		if done, ok, err := s.idempotent(ctx, p, idemSK, in.Event); err != nil {
			return result(BackendError, in.Event, 0, 0, 0, "reading the idempotency record failed; retry with the same key")
		} else if ok {
			return done
		}
		x := toInteraction(in.InteractionID, meta)
		if firstVer >= 0 && x.Version != firstVer {
			// Another event moved the interaction while this one was in flight.
			return result(Conflict, in.Event, x.State, x.State, 0,
				fmt.Sprintf("the interaction moved to %s while %s was being applied; read it and decide again", x.State, in.Event))
		}
		firstVer = x.Version
		if in.ExpectedState != nil && x.State != State(*in.ExpectedState) {
			return result(Conflict, in.Event, x.State, x.State, 0,
				fmt.Sprintf("the interaction is %s, not %s as expected; read it and decide again", x.State, State(*in.ExpectedState)))
		}
		after, ok := next(x.State, in.Event)
		if !ok {
			return result(InvalidTransition, in.Event, x.State, x.State, 0,
				fmt.Sprintf("%s is not allowed in state %s", in.Event, x.State))
		}
		now := stamp(s.now())
		idx := x.Transitions + 1
		moved := x
		moved.State, moved.Version, moved.Transitions, moved.UpdatedAt = after, x.Version+1, idx, now
		rec := store.Attrs{"event": in.Event, "before": int64(x.State), "after": int64(after), "index": idx,
			"trace_id": trace, "idempotency_key": in.IdempotencyKey, "at": now}
		res := result(Applied, in.Event, x.State, after, idx, "")
		completed, err := s.auditWrite(c, trace, audit.InteractionTransitionCompleted, applyTool, transitionDetail(in, res))
		if err != nil {
			return result(BackendError, in.Event, x.State, x.State, 0, "recording the transition failed; retry with the same key")
		}
		err = s.table.Transact(ctx,
			store.Put(store.Item{PK: p, SK: idemSK, Attrs: rec}, store.IfAbsent()),
			store.Put(interactionMeta(c, moved), store.IfEquals("ver", x.Version)),
			store.Put(store.Item{PK: p, SK: transSK(idx), Attrs: rec}, store.IfAbsent()),
			completed,
		)
		if err == nil {
			return res
		}
		if !lostRace(err) {
			return result(BackendError, in.Event, x.State, x.State, 0, "storing the transition failed; retry with the same key")
		}
		if attempt >= store.MaxRetries || ctx.Err() != nil {
			return result(Conflict, in.Event, x.State, x.State, 0, "the interaction is too busy to update; retry with the same key")
		}
		// Lost a race: either the same key won (idempotent answer next time
		// round), another event moved the interaction (conflict next time
		// round), or a transaction collided and nothing changed (try again).
		backoff(ctx, attempt)
	}
}

// idempotent returns the recorded result of key if it was applied.
func (s *Service) idempotent(ctx context.Context, p, sk, event string) (ApplyResult, bool, error) {
	it, err := s.table.Get(ctx, p, sk)
	if errors.Is(err, store.ErrNotFound) {
		return ApplyResult{}, false, nil
	}
	if err != nil {
		return ApplyResult{}, false, err
	}
	before, after := State(it.Int("before")), State(it.Int("after"))
	if ev := it.String("event"); ev != event {
		r := result(Conflict, event, after, after, 0, fmt.Sprintf("idempotency key already applied event %s; use a new key for %s", ev, event))
		return r, true, nil
	}
	r := result(AlreadyApplied, event, before, after, it.Int("index"), "")
	r.OriginalTraceID = it.String("trace_id")
	return r, true, nil
}
