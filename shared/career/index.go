package career

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The artifact kinds index_build covers, and its scopes.
const (
	kindAtoms   = "atoms"
	kindResumes = "resumes"
	kindOpps    = "opps"
)

// Scopes are the values of index_build's scope; "all" is the default.
var Scopes = []string{kindAtoms, kindResumes, kindOpps, "all"}

// PromptVersion names how artifacts are turned into embedding input. A run's
// prompt scope is PromptVersion/<scope>; drift is judged against the last
// completed run with the same provider, model and prompt version that covered
// the artifact's kind.
const PromptVersion = "career-index-v1"

// embedBatch is how many artifacts are embedded and written at once: a
// vector and a manifest entry each, within one 100-write transaction.
const embedBatch = 48

// The statuses of an index run.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunFailed    = "failed"
)

// IndexBuildInput is the input of index_build.
type IndexBuildInput struct {
	Scope   string `json:"scope,omitempty" jsonschema:"atoms, resumes, opps or all (default all)"`
	TraceID string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// IndexCounts are what a run did.
type IndexCounts struct {
	Indexed int `json:"indexed" jsonschema:"artifacts embedded and stored: new and stale ones"`
	Skipped int `json:"skipped" jsonschema:"artifacts unchanged since the last completed run"`
	Stale   int `json:"stale" jsonschema:"artifacts re-embedded because their source changed"`
}

// IndexRun is one index_build run.
type IndexRun struct {
	RunID       string      `json:"run_id"`
	Scope       string      `json:"scope"`
	Provider    string      `json:"provider"`
	Model       string      `json:"model"`
	Dims        int         `json:"dims"`
	PromptScope string      `json:"prompt_scope"`
	Status      string      `json:"status" jsonschema:"running, completed or failed"`
	Counts      IndexCounts `json:"counts"`
	TraceID     string      `json:"trace_id"`
	StartedAt   string      `json:"started_at"`
	CompletedAt string      `json:"completed_at,omitempty"`
}

// IndexBuildOutput is the output of index_build.
type IndexBuildOutput struct {
	RunID   string      `json:"run_id"`
	Counts  IndexCounts `json:"counts"`
	Run     IndexRun    `json:"run"`
	TraceID string      `json:"trace_id"`
}

// IndexRunListOutput is the output of index_run_list.
type IndexRunListOutput struct {
	Runs       []IndexRun `json:"runs" jsonschema:"runs, newest first"`
	NextCursor string     `json:"next_cursor,omitempty" jsonschema:"set when more runs remain; pass it back as cursor"`
}

func runsPK(c tenant.Caller) string            { return pk(c, "runs") }
func runPK(c tenant.Caller, run string) string { return pk(c, "run#"+run) }
func vecPK(c tenant.Caller, e provider.Embedder) string {
	return pk(c, fmt.Sprintf("vec#%s#%s#%d", e.Provider(), e.Model(), e.Dims()))
}

func runItem(c tenant.Caller, r IndexRun) store.Item {
	return store.Item{PK: runsPK(c), SK: r.RunID, Attrs: store.Attrs{
		"scope": r.Scope, "provider": r.Provider, "model": r.Model, "dims": int64(r.Dims), "prompt_scope": r.PromptScope, "status": r.Status,
		"indexed": int64(r.Counts.Indexed), "skipped": int64(r.Counts.Skipped), "stale": int64(r.Counts.Stale),
		"trace_id": r.TraceID, "started_at": r.StartedAt, "completed_at": r.CompletedAt,
	}}
}

func toRun(it store.Item) IndexRun {
	return IndexRun{RunID: it.SK, Scope: it.String("scope"), Provider: it.String("provider"), Model: it.String("model"),
		Dims: int(it.Int("dims")), PromptScope: it.String("prompt_scope"), Status: it.String("status"),
		Counts:  IndexCounts{Indexed: int(it.Int("indexed")), Skipped: int(it.Int("skipped")), Stale: int(it.Int("stale"))},
		TraceID: it.String("trace_id"), StartedAt: it.String("started_at"), CompletedAt: it.String("completed_at")}
}

// covers reports whether a run of scope covered kind.
func covers(scope, kind string) bool { return scope == "all" || scope == kind }

// artifact is one thing to index.
type artifact struct {
	kind, id, hash string
	text           func(ctx context.Context) (string, error)
}

// IndexBuild serves index_build: it embeds every artifact of the scope whose
// source hash differs from the last completed run's, and records what it saw.
func (s *Service) IndexBuild(ctx context.Context, c tenant.Caller, in IndexBuildInput) (IndexBuildOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return IndexBuildOutput{}, err
	}
	scope := in.Scope
	if scope == "" {
		scope = "all"
	}
	if !contains(Scopes, scope) {
		return IndexBuildOutput{}, fault.Invalid("scope", "%q is not a scope: use atoms, resumes, opps or all", scope)
	}
	emb := s.embedder
	if emb == nil {
		emb = noEmbedder{}
	}
	run := IndexRun{RunID: s.newID("idx"), Scope: scope, Provider: emb.Provider(), Model: emb.Model(),
		Dims: emb.Dims(), PromptScope: PromptVersion + "/" + scope, Status: RunRunning, TraceID: trace, StartedAt: stamp(s.now())}
	const tool = "index_build"
	s.record(ctx, c, trace, audit.IndexBuildStarted, tool, "ok", map[string]any{"scope": scope, "run_id": run.RunID})
	if err := s.table.Put(ctx, runItem(c, run), store.IfAbsent()); err != nil {
		return IndexBuildOutput{}, unavailable(err, "recording the index run failed; retry")
	}
	s.record(ctx, c, trace, audit.IndexRunStarted, tool, "ok", map[string]any{"run_id": run.RunID,
		"provider": run.Provider, "model": run.Model, "prompt_scope": run.PromptScope})
	counts, err := s.indexRun(ctx, c, emb, &run)
	run.Counts = counts
	run.CompletedAt = stamp(s.now())
	run.Status = RunCompleted
	if err != nil {
		run.Status = RunFailed
	}
	if perr := s.table.Put(ctx, runItem(c, run), store.IfEquals("status", RunRunning)); perr != nil && err == nil {
		err = unavailable(perr, "recording the end of index run %s failed; run index_build again", run.RunID)
		run.Status = RunFailed
	}
	detail := map[string]any{"run_id": run.RunID, "status": run.Status, "indexed": counts.Indexed, "skipped": counts.Skipped, "stale": counts.Stale}
	outcome := "ok"
	if err != nil {
		outcome = "error: " + string(fault.KindOf(err))
	}
	s.record(ctx, c, trace, audit.IndexRunCompleted, tool, outcome, detail)
	s.record(ctx, c, trace, audit.IndexBuildCompleted, tool, outcome, detail)
	if err != nil {
		return IndexBuildOutput{}, err
	}
	return IndexBuildOutput{RunID: run.RunID, Counts: counts, Run: run, TraceID: trace}, nil
}

func (s *Service) indexRun(ctx context.Context, c tenant.Caller, emb provider.Embedder, run *IndexRun) (IndexCounts, error) {
	var counts IndexCounts
	var arts []artifact
	for _, kind := range []string{kindAtoms, kindResumes, kindOpps} {
		if !covers(run.Scope, kind) {
			continue
		}
		more, err := s.artifacts(ctx, c, kind)
		if err != nil {
			return counts, err
		}
		arts = append(arts, more...)
	}
	prev := map[string]map[string]string{} // kind -> id -> source hash in the last completed run
	for _, kind := range []string{kindAtoms, kindResumes, kindOpps} {
		if covers(run.Scope, kind) {
			m, err := s.lastManifest(ctx, c, emb, kind, run.RunID)
			if err != nil {
				return counts, err
			}
			prev[kind] = m
		}
	}
	var todo, same []artifact
	for _, a := range arts {
		old, seen := prev[a.kind][a.id]
		switch {
		case seen && old == a.hash:
			same = append(same, a)
		case seen:
			counts.Stale++
			todo = append(todo, a)
		default:
			todo = append(todo, a)
		}
	}
	total := float64(len(arts))
	manifest := func(a artifact) store.Write {
		return store.Put(store.Item{PK: runPK(c, run.RunID), SK: a.kind + "#" + a.id, Attrs: store.Attrs{"source_hash": a.hash}}, store.Condition{})
	}
	// Unchanged artifacts only join the run's manifest.
	for start := 0; start < len(same); start += store.MaxTransactWrites {
		batch := same[start:min(start+store.MaxTransactWrites, len(same))]
		ws := make([]store.Write, len(batch))
		for i, a := range batch {
			ws[i] = manifest(a)
		}
		if err := s.table.Transact(ctx, ws...); err != nil {
			return counts, unavailable(err, "recording the index run's manifest failed; retry")
		}
		counts.Skipped += len(batch)
		s.progress(ctx, float64(counts.Skipped), total, "unchanged artifacts recorded")
	}
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(start+embedBatch, len(todo))]
		texts := make([]string, len(batch))
		for i, a := range batch {
			t, err := a.text(ctx)
			if err != nil {
				return counts, err
			}
			texts[i] = t
		}
		e, err := emb.Embed(ctx, provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
		if fault.KindOf(err) != fault.KindInternal {
			return counts, err
		}
		if err != nil {
			return counts, fault.Unavailable(err, "embedding artifacts failed; run index_build again")
		}
		if len(e.Vectors) != len(batch) {
			return counts, fmt.Errorf("career: embedder returned %d vectors for %d texts", len(e.Vectors), len(batch))
		}
		ws := make([]store.Write, 0, 2*len(batch))
		for i, a := range batch {
			ws = append(ws, manifest(a), store.Put(store.Item{PK: vecPK(c, emb), SK: a.kind + "#" + a.id, Attrs: store.Attrs{
				"vector": encodeVector(e.Vectors[i]), "source_hash": a.hash, "run_id": run.RunID,
			}}, store.Condition{}))
		}
		if err := s.table.Transact(ctx, ws...); err != nil {
			return counts, unavailable(err, "storing embeddings failed; run index_build again")
		}
		// One event per batch, naming its artifacts: an event per artifact
		// would make the audit log, not embedding, the cost of a build.
		done := make([]map[string]any, len(batch))
		for i, a := range batch {
			done[i] = map[string]any{"kind": a.kind, "id": a.id, "source_hash": a.hash}
		}
		s.record(ctx, c, run.TraceID, audit.IndexedArtifact, "index_build", "ok", map[string]any{"run_id": run.RunID, "artifacts": done})
		counts.Indexed += len(batch)
		s.progress(ctx, float64(counts.Skipped+counts.Indexed), total, "artifacts embedded")
	}
	return counts, nil
}

// lastManifest returns what the last completed run for this embedder and
// prompt version covering kind saw, other than run itself.
func (s *Service) lastManifest(ctx context.Context, c tenant.Caller, emb provider.Embedder, kind, self string) (map[string]string, error) {
	q := store.Query{Reverse: true, Limit: store.MaxQueryLimit}
	for {
		page, err := s.table.Query(ctx, runsPK(c), q)
		if err != nil {
			return nil, unavailable(err, "reading earlier index runs failed; retry")
		}
		for _, it := range page.Items {
			r := toRun(it)
			scope, _ := strings.CutPrefix(r.PromptScope, PromptVersion+"/")
			if r.RunID == self || r.Status != RunCompleted || r.Provider != emb.Provider() || r.Model != emb.Model() || r.Dims != emb.Dims() ||
				!strings.HasPrefix(r.PromptScope, PromptVersion+"/") || !covers(scope, kind) {
				continue
			}
			items, err := s.queryAll(ctx, runPK(c, r.RunID), kind+"#")
			if err != nil {
				return nil, unavailable(err, "reading index run %s failed; retry", r.RunID)
			}
			m := make(map[string]string, len(items))
			for _, it := range items {
				m[strings.TrimPrefix(it.SK, kind+"#")] = it.String("source_hash")
			}
			return m, nil
		}
		if page.Next == "" {
			return map[string]string{}, nil
		}
		q.Cursor = page.Next
	}
}

// artifacts lists the caller's artifacts of kind.
func (s *Service) artifacts(ctx context.Context, c tenant.Caller, kind string) ([]artifact, error) {
	var out []artifact
	switch kind {
	case kindAtoms:
		atoms, err := s.allAtoms(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, a := range atoms {
			text := a.Text
			out = append(out, artifact{kind: kind, id: a.AtomID, hash: a.SourceHash, text: func(context.Context) (string, error) { return text, nil }})
		}
	case kindOpps:
		items, err := s.queryAll(ctx, oppsPK(c), "")
		if err != nil {
			return nil, unavailable(err, "reading your opportunities failed; retry")
		}
		for _, it := range items {
			o := toOpportunity(it)
			text := o.canonicalText()
			out = append(out, artifact{kind: kind, id: o.OpportunityID, hash: o.SourceHash, text: func(context.Context) (string, error) { return text, nil }})
		}
	case kindResumes:
		items, err := s.queryAll(ctx, resumesPK(c), "")
		if err != nil {
			return nil, unavailable(err, "reading your resumes failed; retry")
		}
		for _, it := range items {
			key := it.String("canonical_key")
			out = append(out, artifact{kind: kind, id: it.SK, hash: it.String("source_hash"), text: func(ctx context.Context) (string, error) {
				return s.readCanonical(ctx, key)
			}})
		}
	}
	return out, nil
}

// readCanonical reads a stored resume's canonical Markdown.
func (s *Service) readCanonical(ctx context.Context, key string) (string, error) {
	if s.blobs == nil {
		return "", fault.Unavailable(nil, "indexing resumes needs the object store and none is configured")
	}
	r, _, err := s.blobs.Get(ctx, key, nil)
	if errors.Is(err, store.ErrNotFound) {
		return "", fault.Unavailable(err, "resume object %s is missing; ingest the resume again", key)
	}
	if err != nil {
		return "", fault.Unavailable(err, "reading resume object %s failed; retry", key)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fault.Unavailable(err, "reading resume object %s failed; retry", key)
	}
	return string(b), nil
}

// ListIndexRuns serves index_run_list: the caller's index runs, newest first.
func (s *Service) ListIndexRuns(ctx context.Context, c tenant.Caller, in ListInput) (IndexRunListOutput, error) {
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return IndexRunListOutput{}, err
	}
	page, err := s.table.Query(ctx, runsPK(c), store.Query{Reverse: true, Cursor: in.Cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return IndexRunListOutput{}, fault.Invalid("cursor", "is not a cursor from a previous index_run_list call")
	}
	if err != nil {
		return IndexRunListOutput{}, unavailable(err, "listing index runs failed; retry")
	}
	out := IndexRunListOutput{Runs: make([]IndexRun, len(page.Items)), NextCursor: page.Next}
	for i, it := range page.Items {
		out.Runs[i] = toRun(it)
	}
	return out, nil
}

// noEmbedder stands in when none is configured: a run with nothing to embed
// completes, and any artifact to embed fails the run with an unavailable error.
type noEmbedder struct{}

func (noEmbedder) Embed(context.Context, provider.EmbedRequest) (provider.Embeddings, error) {
	return provider.Embeddings{}, fault.Unavailable(nil, "index_build needs an embedder and none is configured")
}
func (noEmbedder) Provider() string { return "none" }
func (noEmbedder) Model() string    { return "none" }
func (noEmbedder) Dims() int        { return 0 }
