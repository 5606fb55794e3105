// Package rag answers questions from a tenant's vector stores: the RAG
// pipeline tools rag_basic, rag_basic_rerank, rag_crag, rag_graphrag,
// rag_iris_global_graphrag and rag_pylate_colbert with seed 002's request
// and response, the
// internal steps optimizer_vs-rephrase and optimizer_vs-grade the pipeline
// invokes, and rag_health_check.
//
// Every pipeline tool but rag_iris_global_graphrag runs the rephrase ->
// retrieve -> grade pipeline through
// a [pipeline.Runner] (the Step Functions state machine on AWS, the same definition
// interpreted locally), then writes the answer with the generator from the
// documents graded relevant; documents graded not relevant are dropped and the
// answer is written without them, as if retrieval had not happened (seed 000's
// "transparent" completion). rag_basic_rerank retrieves a larger candidate
// pool and reranks it; rag_crag scores its confidence in the retrieval and,
// below a threshold, corrects the query and retrieves again; rag_graphrag
// fuses the stores' entity graphs into the retrieval; rag_iris_global_graphrag
// answers from community reports, in its own function (graphrag.go);
// rag_pylate_colbert ranks by late interaction over token vectors
// (colbert.go).
//
//	svc := rag.New(table, rag.Options{Generator: gen, Runner: runner})
//	resp, err := svc.Basic(ctx, caller, rag.BasicInput{Request: rag.Request{Query: "What are the symptoms of diabetes?"}})
//	// resp.Answer, resp.RetrievedDocuments, resp.Sources, resp.Metadata.PipelineName == "basic"
//
// Each pipeline has resource limits (seed 002: 5 concurrent queries, 30 s,
// 4096 tokens): the concurrency is its function's reserved concurrency, which
// Lambda applies on AWS and package local in one process (a call beyond it is
// refused at once); the service applies the deadline and the generator's
// token bound. Every call past
// validation records its outcome and latency in the table, from which
// [Service.Health] computes seed 002's health status.
package rag

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// The pipelines, by seed 002's pipeline_name.
const (
	PipelineBasic          = "basic"
	PipelineBasicRerank    = "basic_rerank"
	PipelineCRAG           = "crag"
	PipelineGraphRAG       = "graphrag"
	PipelineGlobalGraphRAG = "iris_global_graphrag"
)

// Pipelines lists every pipeline this package serves, in the order health
// reports them when [Options.Pipelines] names none.
var Pipelines = []string{PipelineBasic, PipelineBasicRerank, PipelineCRAG, PipelineGraphRAG, PipelineGlobalGraphRAG, PipelineColbert}

// Seed 002's request limits and defaults.
const (
	MaxQueryChars              = 8000
	DefaultTopK                = 5
	MaxTopK                    = 50
	DefaultConfidenceThreshold = 0.8
	// MaxCandidatePool bounds basic_rerank's candidates: the retriever's own top_k limit.
	MaxCandidatePool = 50
)

// The correction strategies rag_crag supports.
const (
	StrategyRewrite = "rewrite"
	StrategyExpand  = "expand"
)

// Strategies lists the correction strategies, the default first.
var Strategies = []string{StrategyRewrite, StrategyExpand}

// Modes lists the retrieval modes a request may ask for.
var Modes = []string{"hybrid", "bm25", "vector"}

// UUIDv4Pattern is what a request_id must match.
const UUIDv4Pattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`

var uuidRE = regexp.MustCompile(UUIDv4Pattern)

// Limits are the resource limits of a pipeline's calls that the service
// applies (seed 002's ResourceLimits; its 5 concurrent queries are the
// functions' reserved concurrency, in the catalog).
type Limits struct {
	// Timeout bounds one call. If zero, defaults to 30 s.
	Timeout time.Duration
	// MaxTokens bounds the answer's generation. If zero, defaults to 4096.
	MaxTokens int
}

// DefaultLimits are seed 002's resource limits.
var DefaultLimits = Limits{Timeout: 30 * time.Second, MaxTokens: 4096}

func (l Limits) withDefaults() Limits {
	l.Timeout = cmp.Or(l.Timeout, DefaultLimits.Timeout)
	l.MaxTokens = cmp.Or(l.MaxTokens, DefaultLimits.MaxTokens)
	return l
}

// Options configures [New].
type Options struct {
	// Generator writes answers and crag's query rewrites. Required for the pipelines.
	Generator provider.Generator
	// Runner runs the rephrase -> retrieve -> grade pipeline. Required for the pipelines.
	Runner pipeline.Runner
	// Limits apply to each pipeline. Zero fields take [DefaultLimits].
	Limits Limits
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings (outcomes that could not be recorded). If nil, logs are discarded.
	Logger *slog.Logger
	// Late searches by late interaction. Required for rag_pylate_colbert.
	Late LateInteraction
	// Pipelines are the pipelines [Service.Health] reports, in order: the
	// function passes the catalog's (catalog.RAGPipelines), so that a
	// pipeline served by another package is reported too. If nil, defaults
	// to [Pipelines].
	Pipelines []string
	// Reports gives rag_iris_global_graphrag the stores' community reports.
	// Required for that pipeline only.
	Reports Reporter
	// After records each call's outcome after its answer, off the caller's
	// path, and [Service.Health] waits for what it has queued. If nil, the
	// outcome is recorded before the call answers.
	After *later.Queue
}

// Service implements the RAG pipeline tools and rag_health_check on a
// [store.Table]. It is safe for concurrent use.
type Service struct {
	table   store.Table
	gen     provider.Generator
	prompts prompt.Lookup
	runner  pipeline.Runner
	late    LateInteraction
	reports Reporter
	limits  Limits
	health  *recorder
	// pipelines are the pipelines health reports.
	pipelines []string
	after     *later.Queue
	now       func() time.Time
	log       *slog.Logger
}

// New returns a Service recording pipeline outcomes in table.
func New(table store.Table, opts Options) *Service {
	s := &Service{table: table, gen: opts.Generator, prompts: prompt.NewStore(table, nil), runner: opts.Runner, late: opts.Late, reports: opts.Reports, limits: opts.Limits.withDefaults(),
		after: opts.After, now: opts.Now, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))}
	if s.now == nil {
		s.now = time.Now
	}
	s.log = s.log.With("component", "rag")
	s.health = &recorder{table: table, now: s.now}
	s.pipelines = opts.Pipelines
	if s.pipelines == nil {
		s.pipelines = Pipelines
	}
	return s
}

// Limits returns the limits the service applies to each pipeline.
func (s *Service) Limits() Limits { return s.limits }

// params are a validated [Request] with its defaults filled in.
type params struct {
	Request
	// conversation is thread_id or conversation_id, whichever was given.
	conversation    string
	topK            int
	includeSources  bool
	includeMetadata bool
}

// validate checks r against seed 002's rules, and its stores and filter
// against the vector family's, so that the retriever never refuses what was
// accepted here; errors name the field at fault.
func validate(r Request) (params, error) {
	p := params{Request: r, topK: DefaultTopK, includeSources: true, includeMetadata: true}
	if err := validateQuestion("query", r.Query); err != nil {
		return params{}, err
	}
	if r.TopK != nil {
		if *r.TopK < 1 || *r.TopK > MaxTopK {
			return params{}, fault.Invalid("top_k", "%d is outside 1..%d", *r.TopK, MaxTopK)
		}
		p.topK = *r.TopK
	}
	if r.IncludeSources != nil {
		p.includeSources = *r.IncludeSources
	}
	if r.IncludeMetadata != nil {
		p.includeMetadata = *r.IncludeMetadata
	}
	if r.RequestID == "" {
		p.RequestID = newUUID()
	} else if !uuidRE.MatchString(r.RequestID) {
		return params{}, fault.Invalid("request_id", "%q is not a UUID v4 (like 550e8400-e29b-41d4-a716-446655440000); omit it to have one generated", truncate(r.RequestID, 60))
	}
	var err error
	if p.conversation, err = conversationNamed(r.ThreadID, r.ConversationID); err != nil {
		return params{}, err
	}
	if r.Mode != "" && !slices.Contains(Modes, r.Mode) {
		return params{}, fault.Invalid("mode", "%q is not a retrieval mode: use %s", r.Mode, strings.Join(Modes, ", "))
	}
	if len(r.Stores) > query.MaxSearchStores {
		return params{}, fault.Invalid("stores", "names %d stores, more than %d", len(r.Stores), query.MaxSearchStores)
	}
	for _, st := range r.Stores {
		if err := query.ValidateAlias("stores", st); err != nil {
			return params{}, err
		}
	}
	if err := query.ValidateFilter("filter", r.Filter); err != nil {
		return params{}, err
	}
	return p, nil
}

// conversationNamed returns the conversation a request names by thread_id or by
// conversation_id (the memory family's name for the same id), or "" if it
// names none; naming two different ones, or an id that cannot be a
// conversation's, is an error naming the field.
func conversationNamed(threadID, conversationID string) (string, error) {
	id, field := threadID, "thread_id"
	switch {
	case id == "":
		id, field = conversationID, "conversation_id"
	case conversationID != "" && conversationID != id:
		return "", fault.Invalid("conversation_id", "names %q but thread_id names %q: they mean the same, give one of the two", truncate(conversationID, 60), truncate(id, 60))
	}
	if id != "" && memory.ValidateID(id) != nil {
		return "", fault.Invalid(field, "%q is not a conversation id: use 1-128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", truncate(id, 60))
	}
	return id, nil
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// call is one pipeline call in progress.
type call struct {
	pipeline   string
	gen        provider.Generator // the configured generator, or the request's llm_model
	caller     tenant.Caller
	p          params
	received   time.Time
	retrieval  time.Duration
	generation time.Duration
	tokens     int
	degraded   bool
	// graphDepth, when set, makes retrievals fuse the entity graph (graphrag).
	graphDepth *int
	// answerBy is when every pipeline run must have ended, to leave time
	// ([AnswerReserve]) for writing the answer.
	answerBy time.Time
}

// beforeAnswer returns ctx ending at cl.answerBy, with [errNoTimeLeft] as
// its cause then. Nested, it keeps the same deadline.
func (cl *call) beforeAnswer(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadlineCause(ctx, cl.answerBy, errNoTimeLeft)
}

// callerFault reports whether err is the caller's mistake (invalid
// arguments, a store that does not exist) rather than the pipeline's.
func callerFault(err error) bool {
	k := fault.KindOf(err)
	return k == fault.KindInvalid || k == fault.KindNotFound
}

// serve runs body as a call of pipeline: it validates, bounds the call by
// the pipeline's timeout, records the outcome, and fills in the response's
// common fields.
func (s *Service) serve(ctx context.Context, c tenant.Caller, pipeline string, r Request, body func(ctx context.Context, cl *call) (Response, error)) (Response, error) {
	received := s.now()
	p, err := validate(r)
	if err != nil {
		return Response{}, err
	}
	if s.gen == nil || s.runner == nil && pipeline != PipelineGlobalGraphRAG {
		return Response{}, fault.Unavailable(nil, "pipeline %s is not configured: it needs the pipeline runner and a generator", pipeline)
	}
	gen, err := provider.GeneratorFor(s.gen, p.LLMModel)
	if err != nil {
		return Response{}, err
	}
	cl := &call{pipeline: pipeline, caller: c, p: p, received: received, gen: gen}
	// Recorded after the answer, the outcome is read then too: a read
	// begun with the call would compete with it (on a cold start, its first
	// table request and connection). Recorded before it, the read overlaps
	// the call.
	var rec *pending
	if s.after == nil {
		rec = s.health.begin(ctx, c, pipeline)
	}
	resp, err := s.run(ctx, cl, body)
	elapsed := s.now().Sub(received)
	// A call refused for the caller's mistake, by validation here or by the
	// retriever, is a failed validation (seed 002's Validating -> Failed), not
	// a pipeline failure: it says nothing of the pipeline's health.
	switch {
	case err != nil && callerFault(err):
		if rec != nil {
			rec.discard()
		}
	case s.after != nil:
		degraded := cl.degraded
		s.after.Go(ctx, recordTimeout, func(ctx context.Context) { s.record(ctx, s.health.begin(ctx, c, pipeline), err, degraded, elapsed) })
	default: // after the call's own deadline, maybe
		s.record(context.WithoutCancel(ctx), rec, err, cl.degraded, elapsed)
	}
	if err != nil {
		return Response{}, err
	}
	ms := max(elapsed.Milliseconds(), 0)
	resp.ResponseID = p.RequestID
	resp.Metadata.PipelineName = pipeline
	resp.Metadata.ExecutionTimeMS = ms
	resp.Metadata.TokensUsed = cl.tokens
	resp.Metadata.Timestamp = received.UTC().Format(time.RFC3339Nano)
	resp.PerformanceMetrics = PerformanceMetrics{
		ExecutionTimeMS:  ms,
		RetrievalTimeMS:  max(cl.retrieval.Milliseconds(), 0),
		GenerationTimeMS: max(cl.generation.Milliseconds(), 0),
		TokensUsed:       cl.tokens,
	}
	return resp, nil
}

func (s *Service) run(ctx context.Context, cl *call, body func(ctx context.Context, cl *call) (Response, error)) (Response, error) {
	// The pipeline's limit, or less when the invocation's own deadline comes
	// sooner: the call then still ends with an answer that says why, in time
	// to record it, rather than being cut off by the runtime.
	limit := s.limits.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		limit = min(limit, max(time.Until(deadline)-DeadlineMargin, 0))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errTimeout)
	defer cancel()
	cl.answerBy = time.Now().Add(limit - min(AnswerReserve, limit/2))
	resp, err := body(ctx, cl)
	// A run stopped to leave time for the answer says so, even when the
	// call's limit has passed too by the time it returns.
	if err != nil && ctx.Err() != nil && !errors.Is(err, errNoTimeLeft) {
		if errors.Is(context.Cause(ctx), errTimeout) {
			return Response{}, fault.Unavailable(err, "pipeline %s did not finish within its limit of %s; retry, or narrow the query", cl.pipeline, limit.Round(time.Millisecond))
		}
		return Response{}, fault.Unavailable(err, "pipeline %s stopped: %v", cl.pipeline, context.Cause(ctx))
	}
	return resp, err
}

var (
	errTimeout    = errors.New("pipeline timeout")
	errNoTimeLeft = errors.New("no time left for the pipeline before the answer")
)

// A call's time budget: a pipeline run gets what remains of the call's limit
// but for AnswerReserve, kept for writing the answer, and the limit itself
// stops DeadlineMargin short of the invocation's deadline. The state
// machine's worst case must fit (shared/deploy checks it against the
// functions' timeouts); crag's second run gets whatever the first left.
const (
	// DeadlineMargin is the time kept back from an invocation's deadline to
	// record the call's outcome and answer.
	DeadlineMargin = time.Second
	// AnswerReserve is the time kept back from pipeline runs for writing
	// the answer (half the limit, when that is shorter).
	AnswerReserve = 5 * time.Second
)

// recordTimeout bounds the write of a call's outcome.
const recordTimeout = 2 * time.Second

// record stores the outcome of a call for rag_health_check, within
// [recordTimeout] or ctx's deadline. It must not fail the call.
func (s *Service) record(ctx context.Context, rec *pending, err error, degraded bool, latency time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	o := outcome{ok: err == nil, degraded: degraded, latency: latency}
	if rerr := rec.finish(ctx, o); rerr != nil {
		s.log.WarnContext(ctx, "recording the outcome of a pipeline call failed", "pipeline", rec.pipeline, "tenant", rec.c.Tenant, "error", rerr)
	}
}

// retrieve runs the pipeline once for question, ending it in time to leave
// [AnswerReserve] for the answer, and accounts for its time. A refusal of
// the caller's arguments is the call's error.
func (s *Service) retrieve(ctx context.Context, cl *call, question, threadID string, topK int) (pipeline.Output, error) {
	ctx, cancel := cl.beforeAnswer(ctx)
	defer cancel()
	t0 := s.now()
	info, _ := callcontext.FromContext(ctx) // the steps log under the tool call's trace
	out, err := s.runner.Run(ctx, pipeline.Input{
		Request:  pipeline.Request{Caller: cl.caller, TraceID: info.TraceID, RequestID: cl.p.RequestID},
		Question: question, ThreadID: threadID, Stores: cl.p.Stores, TopK: topK, Mode: cl.p.Mode, Filter: cl.p.Filter,
		LLMModel: cl.p.LLMModel, EmbeddingModel: cl.p.EmbeddingModel, GraphTraversalDepth: cl.graphDepth,
	})
	cl.retrieval += s.now().Sub(t0)
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errNoTimeLeft):
		return pipeline.Output{}, fault.Unavailable(fmt.Errorf("%w: %w", errNoTimeLeft, err), "pipeline %s did not retrieve in time to write an answer within its limit; retry, or narrow the query", cl.pipeline)
	case err != nil && fault.KindOf(err) != fault.KindInternal:
		return pipeline.Output{}, err
	case err != nil:
		return pipeline.Output{}, fault.Unavailable(err, "the %s pipeline could not run; retry", cl.pipeline)
	case out.Refusal != nil:
		return pipeline.Output{}, refusal(out.Refusal)
	}
	if len(out.Degraded) > 0 {
		cl.degraded = true
	}
	if out.ContextInput == "" {
		out.ContextInput = question
	}
	return out, nil
}

// generate calls the generator and accounts for its time and tokens.
func (s *Service) generate(ctx context.Context, cl *call, req provider.GenerateRequest, doing string) (provider.Generation, error) {
	// The tenant's prompt overrides; if they cannot be read, the defaults
	// (a degraded answer rather than none).
	if r, err := provider.Prompted(ctx, s.prompts, cl.caller.Tenant, req); err == nil {
		req = r
	} else {
		s.log.WarnContext(ctx, "prompt overrides unreadable; using the defaults", "tenant", cl.caller.Tenant, "error", err)
		cl.degraded = true
	}
	t0 := s.now()
	g, err := cl.gen.Generate(ctx, req)
	cl.generation += s.now().Sub(t0)
	if err != nil {
		return provider.Generation{}, generatorFault(err, doing)
	}
	cl.tokens += max(g.InputTokens, 0) + max(g.OutputTokens, 0)
	return g, nil
}

// respond writes the answer to question from out's documents (docs, already
// ordered and cut to top_k) and builds the response.
func (s *Service) respond(ctx context.Context, cl *call, out pipeline.Output, docs []pipeline.Document) (Response, error) {
	relevant := out.Relevant != "no"
	discarded := 0
	if !relevant {
		discarded, docs = len(docs), nil
	}
	contents, names := make([]string, len(docs)), make([]string, len(docs))
	for i, d := range docs {
		contents[i], names[i] = d.Content, source(d)
	}
	g, err := s.generate(ctx, cl, provider.GenerateRequest{Task: provider.TaskAnswer, Question: out.ContextInput, Documents: contents, Sources: names, MaxTokens: s.limits.MaxTokens}, "answering")
	if err != nil {
		return Response{}, err
	}
	resp := Response{
		Answer:             strings.TrimSpace(g.Text),
		RetrievedDocuments: make([]RetrievedDocument, len(docs)),
		Sources:            []string{},
		Metadata: Metadata{
			Provider: g.Provider, Model: g.Model, ContextInput: out.ContextInput, Rephrased: out.Rephrased,
			Relevant: cmp.Or(out.Relevant, "yes"), Graded: out.Graded, Degraded: nonNil(out.Degraded),
			SearchedStores: nonNil(out.SearchedStores), Steps: out.Steps, Discarded: discarded,
		},
	}
	if out.StoreSelection.By != "" {
		resp.Metadata.StoreSelection = &out.StoreSelection
	}
	for i, d := range docs {
		md := map[string]string{}
		if cl.p.includeMetadata && d.Metadata != nil {
			md = d.Metadata
		}
		resp.RetrievedDocuments[i] = RetrievedDocument{DocID: d.DocID, Content: d.Content, Score: d.Score, Metadata: md}
	}
	if cl.p.includeSources {
		resp.Sources = sources(docs)
	}
	return resp, nil
}

// sources returns where docs came from, deduplicated in order: each
// document's metadata "source", else its doc_id.
func sources(docs []pipeline.Document) []string {
	out := []string{}
	for _, d := range docs {
		if src := source(d); src != "" && !slices.Contains(out, src) {
			out = append(out, src)
		}
	}
	return out
}

// source names where d came from: its metadata "source", else its doc_id.
func source(d pipeline.Document) string { return cmp.Or(d.Metadata["source"], d.DocID) }

// byScore orders documents by descending score, keeping the retriever's
// order among equals, and cuts them to k.
func byScore(docs []pipeline.Document, k int) []pipeline.Document {
	docs = slices.Clone(docs)
	slices.SortStableFunc(docs, func(a, b pipeline.Document) int { return cmp.Compare(b.Score, a.Score) })
	return docs[:min(k, len(docs))]
}

// Basic serves rag_basic: one pipeline run for top_k documents, then the answer.
func (s *Service) Basic(ctx context.Context, c tenant.Caller, in BasicInput) (Response, error) {
	return s.serve(ctx, c, PipelineBasic, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		out, err := s.retrieve(ctx, cl, cl.p.Query, cl.p.conversation, cl.p.topK)
		if err != nil {
			return Response{}, err
		}
		return s.respond(ctx, cl, out, byScore(out.Documents, cl.p.topK))
	})
}

// nonNil returns s, or an empty slice for nil: lists in responses are never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
