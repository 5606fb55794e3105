// Package career is the career-coordination family (seed 003): resumes in a
// [store.Blobs], and experience atoms, opportunities, match reports, index
// runs and interactions in a [store.Table]. Every state change is written
// with conditional or transactional writes and recorded in the audit log
// under the call's trace.
//
// Each collection is a partition of the tenant, so a listing is one query:
//
//	t#<tenant>#career#atoms          <atom id>           text, section, resume_id, source_hash, ver, extracted, created_at, updated_at
//	t#<tenant>#career#opps           <opportunity id>    title, company, description, requirements (JSON), source_hash, ver, ...
//	t#<tenant>#career#resumes        <resume id>         file_name, format, title, object_key, canonical_key, resume_hash, source_hash, atoms, created_at
//	t#<tenant>#career#reports        <report id>         report (JSON), trace_id, created_at
//	t#<tenant>#career#runs           <run id>            scope, provider, model, prompt_scope, status, counts, trace_id, started_at, completed_at
//	t#<tenant>#career#run#<run id>   <kind>#<id>         source_hash (the run's manifest: what it saw)
//	t#<tenant>#career#vec#<p>#<m>#<d> <kind>#<id>        vector, source_hash, run_id (per provider, model, dims)
//	t#<tenant>#career#int#<id>       meta                state, ver, transitions, opportunity_id, ..., created_at, updated_at
//	                                 idem#<key>          event, before, after, index, trace_id (one per applied idempotency key)
//	                                 tr#000001           event, before, after, idempotency_key, at
//	t#<tenant>#career#ints           <interaction id>    created_at (the tenant's interactions)
//
// Resumes live under tenants/<tenant>/resumes/<resume id>/ in the Blobs.
//
//	svc := career.New(table, blobs, nil)
//	res, _ := svc.IngestResume(ctx, caller, career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64})
//	opp, _ := svc.CreateOpportunity(ctx, caller, career.OpportunityCreateInput{Title: "Go engineer", Requirements: []string{"Go", "AWS Lambda"}})
//	m, _ := svc.MatchOpportunity(ctx, caller, career.MatchInput{OpportunityID: opp.Opportunity.OpportunityID})
//	// m.MatchReport.Requirements says which atom satisfied which requirement
package career

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// IDPattern is what every career id (atom, opportunity, interaction, report,
// run, resume) and idempotency key must match.
const IDPattern = tenant.KeyIDPattern

// Limits of the family.
const (
	// MaxTextChars bounds an atom's text, a requirement, a title.
	MaxTextChars = 2000
	// MaxDescriptionChars bounds an opportunity's description.
	MaxDescriptionChars = 20_000
	// MaxRequirements bounds an opportunity's requirements.
	MaxRequirements = 50
	// MaxBatchIDs bounds the ids of one get call.
	MaxBatchIDs = 100
	// DefaultK is the default of k_lex and k_emb; MaxK bounds them.
	DefaultK = 25
	MaxK     = 200
	// MaxAtoms bounds the atoms a tenant's matching considers.
	MaxAtoms = 20_000
)

// ProgressFunc reports progress of a long call to the client.
type ProgressFunc func(ctx context.Context, done, total float64, message string)

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Embedder embeds artifacts for index_build and the hybrid strategy. If
	// nil, those fail with an unavailable error naming the missing embedder.
	Embedder provider.Embedder
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Progress receives progress of index_build. If nil, progress is dropped.
	Progress ProgressFunc
	// Logger receives warnings. If nil, logs are discarded.
	Logger *slog.Logger
}

// Service implements the career tools. It is safe for concurrent use.
type Service struct {
	table    store.Table
	blobs    store.Blobs
	embedder provider.Embedder
	audit    *audit.Log
	now      func() time.Time
	progress ProgressFunc
	log      *slog.Logger
}

// New returns a Service on table and blobs. blobs may be nil for the tools
// that never touch resumes' files.
func New(table store.Table, blobs store.Blobs, opts *Options) *Service {
	s := &Service{table: table, blobs: blobs, now: time.Now, log: slog.New(slog.DiscardHandler),
		progress: func(context.Context, float64, float64, string) {}}
	if opts != nil {
		s.embedder = opts.Embedder
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.Progress != nil {
			s.progress = opts.Progress
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	s.audit = audit.New(table, &audit.Options{Now: s.now})
	s.log = s.log.With("component", "career")
	return s
}

// validateID checks an id argument named field against [IDPattern].
func validateID(field, id string) error {
	if !tenant.IsKeyID(id) {
		return fault.Invalid(field, "%q is not an id: use 1-128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", id)
	}
	return nil
}

// newID returns a fresh id: prefix, then 16 hex digits of the clock (so ids
// sort by creation time) and 8 random ones.
func (s *Service) newID(prefix string) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s_%016x%s", prefix, s.now().UnixNano(), hex.EncodeToString(b[:]))
}

func pk(c tenant.Caller, rest string) string { return tenant.Key(c.Tenant) + "career#" + rest }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// traceID picks the trace of a call: the trace_id argument if given, else
// the call's own (package call's, set by the function that serves it), else
// a fresh one.
func traceID(ctx context.Context, arg string) (string, error) {
	if arg != "" {
		if err := audit.ValidateTraceID(arg); err != nil {
			return "", err
		}
		return arg, nil
	}
	if info, ok := callcontext.FromContext(ctx); ok && audit.ValidateTraceID(info.TraceID) == nil {
		return info.TraceID, nil
	}
	return audit.NewTraceID(), nil
}

// record appends an audit event of type typ for c under trace. A failed
// append is logged, not returned: the state change it records stands.
func (s *Service) record(ctx context.Context, c tenant.Caller, trace, typ, tool, outcome string, detail map[string]any) {
	if err := s.audit.Append(ctx, audit.Event{Tenant: c.Tenant, TraceID: trace, Type: typ, Tool: tool,
		Principal: c.Principal, Outcome: outcome, Detail: detail}); err != nil {
		s.log.ErrorContext(ctx, "audit append failed", "trace_id", trace, "type", typ, "error", err)
	}
}

// auditWrite returns the transaction write that records an event of type typ
// for c under trace, so that a change and its audit record land together or
// not at all.
func (s *Service) auditWrite(c tenant.Caller, trace, typ, tool string, detail map[string]any) (store.Write, error) {
	it, err := s.audit.Item(audit.Event{Tenant: c.Tenant, TraceID: trace, Type: typ, Tool: tool,
		Principal: c.Principal, Outcome: "ok", Detail: detail})
	if err != nil {
		return store.Write{}, err
	}
	return store.Put(it, store.IfAbsent()), nil
}

// unavailable wraps a store failure as a retryable error.
func unavailable(err error, format string, args ...any) error {
	if err == nil || fault.KindOf(err) != fault.KindInternal {
		return err
	}
	return fault.Unavailable(err, format, args...)
}

func lostRace(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict)
}

// queryAll reads every item of partition p with sort keys beginning prefix.
func (s *Service) queryAll(ctx context.Context, p, prefix string) ([]store.Item, error) {
	var out []store.Item
	q := store.Query{Prefix: prefix, Limit: store.MaxQueryLimit}
	for {
		page, err := s.table.Query(ctx, p, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// page clamps a list limit.
func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return store.DefaultQueryLimit, nil
	case limit < 1 || limit > store.MaxQueryLimit:
		return 0, fault.Invalid("limit", "%d is outside 1..%d", limit, store.MaxQueryLimit)
	}
	return limit, nil
}

// validateIDs checks a batch of ids named field.
func validateIDs(field string, ids []string) error {
	if len(ids) == 0 || len(ids) > MaxBatchIDs {
		return fault.Invalid(field, "has %d ids, want 1..%d", len(ids), MaxBatchIDs)
	}
	for i, id := range ids {
		if err := validateID(fmt.Sprintf("%s[%d]", field, i), id); err != nil {
			return err
		}
	}
	return nil
}

// backoff sleeps before retry attempt+1 of a lost race: capped exponential
// with full jitter, as [store.Retry] does.
func backoff(ctx context.Context, attempt int) {
	d := time.Millisecond << min(attempt, 6)
	var b [1]byte
	rand.Read(b[:])
	t := time.NewTimer(d*time.Duration(b[0])/256 + time.Millisecond/4)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
