// Package audit keeps the append-only audit log: what was done, by whom, for
// which tenant, under which trace, and how it ended. Events are only ever
// added, with conditional puts that never overwrite, and read back in order by
// trace.
//
//	t#<tenant>#trace#<trace id>  <unix nanos, 19 digits>#<random>  type, tool, principal, request_id, outcome, detail
//
//	log := audit.New(table, nil)
//	_ = log.Append(ctx, audit.Event{Tenant: "acme", TraceID: tid, Type: audit.ToolCalled, Tool: "memory_add_message", Outcome: "ok"})
//	events, next, _ := log.Trace(ctx, "acme", tid, "", 0)
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// ToolCalled is the event type of a mutating tool call.
const ToolCalled = "ToolCalled"

// Event is one entry of the audit log.
type Event struct {
	Tenant    string `json:"tenant"`
	TraceID   string `json:"trace_id"`
	Type      string `json:"type"`
	Tool      string `json:"tool,omitempty"`
	Principal string `json:"principal,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Outcome is "ok", or "error: <kind>" for a call that failed.
	Outcome string         `json:"outcome"`
	Detail  map[string]any `json:"detail,omitempty"`
	Time    time.Time      `json:"time"`
}

// TracePattern is what a trace id must match.
const TracePattern = tenant.KeyIDPattern

// NewTraceID returns a fresh trace id: 32 hex digits, the W3C trace-id form.
func NewTraceID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
}

// Log is the audit log on a [store.Table]. It is safe for concurrent use.
type Log struct {
	table store.Table
	now   func() time.Time

	mu   sync.Mutex
	last int64 // the last timestamp handed out, to keep one process's events in order
}

// New returns a Log writing to table.
func New(table store.Table, opts *Options) *Log {
	l := &Log{table: table, now: time.Now}
	if opts != nil && opts.Now != nil {
		l.now = opts.Now
	}
	return l
}

func tracePK(t, traceID string) string { return tenant.Key(t) + "trace#" + traceID }

// stamp returns a timestamp strictly after the previous one this Log gave,
// so that events one process appends in sequence sort in that sequence.
func (l *Log) stamp() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.now().UnixNano()
	if n <= l.last {
		n = l.last + 1
	}
	l.last = n
	return n
}

// Append adds e to the log. It never overwrites: each event gets a key of its
// own and is written only if that key is free.
func (l *Log) Append(ctx context.Context, e Event) error {
	return store.Retry(ctx, func() error {
		it, err := l.Item(e)
		if err != nil {
			return err
		}
		return l.table.Put(ctx, it, store.IfAbsent())
	})
}

// Item returns the item that records e under a fresh key, without writing
// it, for a change that lands in one transaction with its audit record. Put it
// with [store.IfAbsent], as [Append] does: if the transaction fails on that
// condition, retry with a new Item.
func (l *Log) Item(e Event) (store.Item, error) {
	if err := tenant.Validate(e.Tenant); err != nil {
		return store.Item{}, fmt.Errorf("audit: %w", err)
	}
	if !tenant.IsKeyID(e.TraceID) || e.Type == "" || e.Outcome == "" {
		return store.Item{}, fmt.Errorf("audit: event needs a valid trace id, a type and an outcome: %+v", e)
	}
	detail := ""
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail)
		if err != nil {
			return store.Item{}, fmt.Errorf("audit: encoding detail: %w", err)
		}
		detail = string(b)
	}
	var r [4]byte
	rand.Read(r[:])
	ts := l.stamp()
	return store.Item{
		PK: tracePK(e.Tenant, e.TraceID),
		SK: fmt.Sprintf("%019d#%s", ts, hex.EncodeToString(r[:])),
		Attrs: store.Attrs{
			"type": e.Type, "tool": e.Tool, "principal": e.Principal, "request_id": e.RequestID,
			"outcome": e.Outcome, "detail": detail, "at": ts,
		},
	}, nil
}

// ValidateTraceID checks a trace id against [TracePattern].
func ValidateTraceID(id string) error {
	if !tenant.IsKeyID(id) {
		return fault.Invalid("trace_id", "%q is not a trace id: use 1-128 letters, digits, '_', '-', '.' or ':'", id)
	}
	return nil
}

// Trace returns a page of the events of traceID in tenant t, oldest first.
// limit 0 means [store.DefaultQueryLimit].
func (l *Log) Trace(ctx context.Context, t, traceID, cursor string, limit int) ([]Event, string, error) {
	if err := ValidateTraceID(traceID); err != nil {
		return nil, "", err
	}
	page, err := l.table.Query(ctx, tracePK(t, traceID), store.Query{Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return nil, "", fault.Invalid("cursor", "is not a cursor from a previous call for this trace, or limit is out of range")
	}
	if err != nil {
		return nil, "", fault.Unavailable(err, "reading the audit log failed; retry")
	}
	events := make([]Event, len(page.Items))
	for i, it := range page.Items {
		e := Event{Tenant: t, TraceID: traceID, Type: it.String("type"), Tool: it.String("tool"),
			Principal: it.String("principal"), RequestID: it.String("request_id"), Outcome: it.String("outcome"),
			Time: time.Unix(0, it.Int("at")).UTC()}
		if d := it.String("detail"); d != "" {
			if err := json.NewDecoder(strings.NewReader(d)).Decode(&e.Detail); err != nil {
				return nil, "", fmt.Errorf("audit: decoding detail of %s: %w", it.SK, err)
			}
		}
		events[i] = e
	}
	return events, page.Next, nil
}

// TraceInput is the input of get_audit_trace.
type TraceInput struct {
	TraceID string `json:"trace_id" jsonschema:"the trace to read, as returned in a tool result's _meta or passed in a traceparent header"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit   int    `json:"limit,omitempty" jsonschema:"page size (default 100, at most 1000)"`
}

// TraceOutput is the output of get_audit_trace.
type TraceOutput struct {
	TraceID    string  `json:"trace_id"`
	Events     []Event `json:"events" jsonschema:"the trace's events, oldest first"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"set when more events remain; pass it back as cursor"`
}

// GetTrace serves get_audit_trace: the caller's tenant's events of one trace.
func (l *Log) GetTrace(ctx context.Context, c tenant.Caller, in TraceInput) (TraceOutput, error) {
	if in.Limit < 0 || in.Limit > store.MaxQueryLimit {
		return TraceOutput{}, fault.Invalid("limit", "%d is outside 1..%d", in.Limit, store.MaxQueryLimit)
	}
	events, next, err := l.Trace(ctx, c.Tenant, in.TraceID, in.Cursor, in.Limit)
	if err != nil {
		return TraceOutput{}, err
	}
	if events == nil {
		events = []Event{}
	}
	return TraceOutput{TraceID: in.TraceID, Events: events, NextCursor: next}, nil
}

// traceKey carries the trace id of a call in a context.
type traceKey struct{}

// WithTraceID returns ctx carrying the trace id of the call it serves, under
// which a domain package appends its audit events.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceIDFrom returns the trace id [WithTraceID] put in ctx, if it is a valid
// one, or a fresh one.
func TraceIDFrom(ctx context.Context) string {
	if id, ok := ctx.Value(traceKey{}).(string); ok && tenant.IsKeyID(id) {
		return id
	}
	return NewTraceID()
}
