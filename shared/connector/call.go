package connector

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// transport returns a fresh transport to r with the credentials cr,
// recording in cut the responses its client cuts.
func (s *Service) transport(t string, r *record, cr creds, cut *cutResponses) mcp.Transport {
	hc := s.httpClient(cr, cr.tokenKey(t, r), cut)
	if r.Transport == TransportSSE {
		return &mcp.SSEClientTransport{Endpoint: r.BaseURL, HTTPClient: hc, MaxEventSize: s.opts.MaxEventBytes}
	}
	// No standalone stream: a proxied call needs only the answers (and
	// progress) to its own requests, and each session would hold a GET open.
	return &mcp.StreamableClientTransport{Endpoint: r.BaseURL, HTTPClient: hc, DisableStandaloneSSE: true,
		MaxEventSize: s.opts.MaxEventBytes, MaxRetries: 2}
}

// cutResponses records the first response body of a session that its HTTP
// client cut for being too large (shared/netguard's cap).
type cutResponses struct{ err atomic.Pointer[error] }

func (c *cutResponses) reason() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// watch returns body, recording in c why reading it was cut, if it was,
// and in each counter of open (nil ones count nothing) until it is closed.
func (c *cutResponses) watch(body io.ReadCloser, open ...*openBodies) io.ReadCloser {
	for _, o := range open {
		o.add()
	}
	return &watchedBody{ReadCloser: body, cut: c, open: open}
}

type watchedBody struct {
	io.ReadCloser
	cut    *cutResponses
	open   []*openBodies
	closed atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, netguard.ErrResponseTooLarge) {
		b.cut.err.CompareAndSwap(nil, &err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.closed.CompareAndSwap(false, true) {
		for _, o := range b.open {
			o.done()
		}
	}
	return err
}

// openBodies counts upstream responses whose bodies are still open: those
// of one call, or those of one session's requests ([authTransport]). The
// go-sdk hands a call its result as soon as the event carrying it is read,
// and drains the rest of the stream afterwards: a call that ended its
// context at once cut that drain short, and with it the connection, which
// the next call then dialed again (40 calls in 100, on loopback), and one
// that waited for the drain waited 0.2 ms or more for a quarter of its
// calls. A nil *openBodies counts nothing.
type openBodies struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0, if a waiter made it
}

type openBodiesKey struct{}

// bodiesOf returns the counter ctx carries, or nil.
func bodiesOf(ctx context.Context) *openBodies {
	o, _ := ctx.Value(openBodiesKey{}).(*openBodies)
	return o
}

func (o *openBodies) add() {
	if o != nil {
		o.mu.Lock()
		o.n++
		o.mu.Unlock()
	}
}

func (o *openBodies) done() {
	if o != nil {
		o.mu.Lock()
		if o.n--; o.n == 0 && o.idle != nil {
			close(o.idle)
			o.idle = nil
		}
		o.mu.Unlock()
	}
}

// drainGrace bounds how long the rest of a call's response streams may be
// drained after its answer, which an upstream ends right after the answer.
const drainGrace = time.Second

// open reports whether a counted body is still open.
func (o *openBodies) open() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n > 0
}

// wait waits until every counted body is closed, for grace at most.
// Waiters at once share one channel.
func (o *openBodies) wait(grace time.Duration) {
	o.mu.Lock()
	if o.n == 0 {
		o.mu.Unlock()
		return
	}
	if o.idle == nil {
		o.idle = make(chan struct{})
	}
	idle := o.idle
	o.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// withSession runs fn on a pooled session of r for c, within the call
// timeout and the caller's deadline. Its failures are unavailable errors
// naming the connector and what failed, with every credential redacted; the
// connector's status follows (CONNECTED after a success, ERROR after a
// failure of the connection).
func (s *Service) withSession(ctx context.Context, c tenant.Caller, r *record, fn func(context.Context, *session, creds) error) error {
	if r.Status == StatusDisabled {
		return fault.Invalid("name", "connector %q is disabled; enable it with connector_update", r.Name)
	}
	// A function that did not start loading the roots as it started
	// (connectorfn's connecting), such as tools_openai refreshing a stale
	// cache, starts now: the load overlaps the URL's check (a DNS lookup),
	// the KMS call that opens the credentials and the dial.
	netguard.PreloadRoots()
	cr, err := s.credsFor(ctx, c, r)
	if err != nil {
		return err
	}
	key := cr.sessionKey(c.Tenant, c.Principal, r)
	// The URL is checked again (its host resolved anew: DNS rebinding) when
	// a session is to be made, not on each call over a live one, whose
	// connection was checked when made; the HTTP client checks each address
	// it dials in any case.
	if !s.pool.active(key) {
		if _, err := s.opts.CheckURL(ctx, r.BaseURL); err != nil {
			return fault.Unavailable(nil, "connector %q: its URL is refused now: %v", r.Name, err)
		}
	}
	// The call's context ends with the caller's while the call runs, but
	// not after it: once the call has its answer, the rest of its response
	// streams is drained apart from the caller (for drainGrace at most),
	// so that the connection is kept for the next call.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.CallTimeout)
	stop := context.AfterFunc(ctx, cancel)
	bodies := &openBodies{}
	callCtx = context.WithValue(callCtx, openBodiesKey{}, bodies)
	defer func() {
		if stop() && callCtx.Err() == nil && bodies.open() {
			go func() {
				bodies.wait(drainGrace)
				cancel()
			}()
			return
		}
		cancel()
	}()
	// A new session asks first for the version the upstream negotiated
	// lately, if any: with a server of a 2025 version, that saves the
	// server/discover round trip that the newest version starts with.
	dial := dialer{transport: func(cut *cutResponses) mcp.Transport { return s.transport(c.Tenant, r, cr, cut) }, protocol: r.protocol(s.now())}
	var used *session
	err = s.pool.do(callCtx, key, c.Tenant, r.Name, dial, func(sess *session) error {
		used = sess
		return fn(callCtx, sess, cr)
	})
	if err != nil && used != nil {
		// The go-sdk ends a session whose response was cut with an error
		// that does not say why (EOF): the cut says it.
		if why := used.cut.reason(); why != nil && !strings.Contains(err.Error(), why.Error()) {
			err = fmt.Errorf("%w (%v)", err, why)
		}
	}
	if err == nil {
		protocol, at := used.protocol()
		s.setStatus(ctx, c, r, StatusConnected, "", protocol, at)
		return nil
	}
	secretValues := append(cr.sec.values(), s.tokens.current(cr.tokenKey(c.Tenant, r)))
	msg := redact(err.Error(), secretValues...)
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		msg = fmt.Sprintf("it did not answer within %v (%s)", s.opts.CallTimeout, msg)
	case ctx.Err() != nil:
		msg = "the call ran out of time: " + msg
	}
	if !upstreamAnswered(err) && ctx.Err() == nil {
		s.setStatus(ctx, c, r, StatusError, msg, "", time.Time{})
	}
	return &fault.Error{Kind: fault.KindUnavailable, Message: fmt.Sprintf("connector %q: %s", r.Name, msg), Err: errors.New(msg)}
}

// setStatus records a connector's status after a call, when it changed,
// and the protocol version its session negotiated at protocolAt, when the
// record does not remember that version and the negotiation is later than
// the one it remembers and within [protocolMemory]: a session made a day
// ago, or one older than another process's, does not make a version
// remembered again. It leaves the version alone (callers' edits own it) and
// loses quietly to a concurrent edit.
func (s *Service) setStatus(ctx context.Context, c tenant.Caller, r *record, status, lastError, protocol string, protocolAt time.Time) {
	now := s.now().UTC()
	learnt := protocol != "" && r.protocol(now) != protocol && protocolAt.After(r.ProtocolAt) && now.Sub(protocolAt) < protocolMemory
	if r.Status == status && r.LastError == lastError && !learnt || r.Status == StatusDisabled {
		return
	}
	r.Status, r.LastError = status, lastError
	if learnt {
		r.Protocol, r.ProtocolAt = protocol, protocolAt.UTC()
	}
	r.UpdatedAt = now
	if err := s.table.Put(ctx, r.item(c.Tenant), store.IfEquals("ver", r.Ver)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		s.log.WarnContext(ctx, "recording a connector's status failed", "connector", r.Name, "error", err)
	}
}

// VerifyOutput is the output of connector_verify.
type VerifyOutput struct {
	Connector       Connector `json:"connector"`
	ServerName      string    `json:"server_name,omitempty"`
	ServerVersion   string    `json:"server_version,omitempty"`
	ProtocolVersion string    `json:"protocol_version,omitempty"`
	LatencyMs       float64   `json:"latency_ms" jsonschema:"the ping's round trip"`
}

// Verify serves connector_verify: it initialises a fresh session and pings
// the upstream, and records the connector's status.
func (s *Service) Verify(ctx context.Context, c tenant.Caller, in NameInput) (VerifyOutput, error) {
	r, err := s.load(ctx, c, "name", in.Name)
	if err != nil {
		return VerifyOutput{}, err
	}
	s.pool.drop(c.Tenant, r.Name)
	var out VerifyOutput
	err = s.withSession(ctx, c, r, func(ctx context.Context, sess *session, _ creds) error {
		if init := sess.cs.InitializeResult(); init != nil {
			out.ProtocolVersion = init.ProtocolVersion
			if init.ServerInfo != nil {
				out.ServerName, out.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
			}
		}
		start := time.Now()
		if err := sess.cs.Ping(ctx, nil); err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		out.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
		return nil
	})
	outcome, detail := "ok", map[string]any{"connector": r.Name}
	if err != nil {
		_, _, msg := fault.Public(err)
		outcome, detail["error"] = "error: "+string(fault.KindOf(err)), msg
	}
	s.record(ctx, c, audit.ConnectorVerified, "connector_verify", outcome, detail)
	if err != nil {
		return VerifyOutput{}, err
	}
	out.Connector = r.view(false)
	return out, nil
}

// ProgressFunc receives an upstream's progress notifications of one call,
// with the upstream's token replaced by none: the caller sends them on with
// its own client's token.
type ProgressFunc func(*mcp.ProgressNotificationParams)

// CallInput is a call to a proxied tool.
type CallInput struct {
	// Name is the proxied name, <connector>__<tool>.
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// ApprovalID carries the approval of the page flow, from the retry's
	// _meta["switchboard.dev/approval_id"].
	ApprovalID string `json:"approval_id,omitempty"`
	// WantsProgress says the host asked for progress (it sent a progress
	// token): the function then sets Progress.
	WantsProgress bool `json:"progress,omitempty" jsonschema:"the host asked for progress notifications"`
	// ReadOnly limits the call to tools the upstream marks readOnlyHint:
	// the caller's access token allows the family's read-only tools only.
	ReadOnly bool `json:"read_only,omitempty" jsonschema:"the caller may call read-only tools only"`
	// Progress, if set, receives the upstream's progress notifications.
	Progress ProgressFunc `json:"-"`
}

// MaxArgumentsBytes bounds a proxied call's arguments.
const MaxArgumentsBytes = 1 << 20

// target resolves a proxied call: the connector's record and the tool as
// cached, refreshing a stale cache on demand (a failed refresh keeps the
// last good cache).
func (s *Service) target(ctx context.Context, c tenant.Caller, proxied string) (*record, *mcp.Tool, error) {
	name, tool, ok := SplitName(proxied)
	if !ok {
		return nil, nil, fault.Invalid("name", "%q is not a proxied tool name: <connector>__<tool>", proxied)
	}
	r, err := s.load(ctx, c, "name", name)
	if err != nil {
		return nil, nil, err
	}
	if r.Status == StatusDisabled {
		return nil, nil, fault.Invalid("name", "connector %q is disabled; enable it with connector_update", name)
	}
	ch, err := s.cached(ctx, c, r)
	if err != nil {
		return nil, nil, err
	}
	if ch != nil {
		for _, t := range ch.Tools {
			if t.Name == tool {
				return r, t, nil
			}
		}
	}
	return nil, nil, &fault.Error{Kind: fault.KindNotFound, Field: "name",
		Message: fmt.Sprintf("connector %q lists no tool %q; connector_sync reads its tools again", name, tool)}
}

// cached returns r's cache, refreshed first when stale; a failed refresh
// keeps the last good cache (nil if there never was one). The cache is
// decoded once per sync in a warm instance: a successful sync writes the
// cache and the record's SyncedAt in one transaction, so the cache decoded
// with the SyncedAt r holds is the one stored, and any later sync, or a
// connector deleted and made again, reads it anew. The returned cache is
// shared: callers must not change it.
func (s *Service) cached(ctx context.Context, c tenant.Caller, r *record) (*cache, error) {
	key := fmt.Sprintf("%s\x00%s\x00%d", c.Tenant, r.Name, r.SyncedAt.UnixNano())
	ch, hit := s.decoded.get(key)
	if !hit {
		var err error
		if ch, err = s.loadCache(ctx, c.Tenant, r.Name); err != nil {
			return nil, err
		}
		if ch != nil && !r.SyncedAt.IsZero() && ch.SyncedAt.Equal(r.SyncedAt) {
			s.decoded.put(key, ch)
		}
	}
	if ch.fresh(s.now(), s.opts.CacheTTL) {
		s.stats.cache(c.Tenant, r.Name, true)
		return ch, nil
	}
	s.stats.cache(c.Tenant, r.Name, false)
	if _, _, err := s.sync(ctx, c, r); err != nil {
		if ch == nil {
			return nil, err
		}
		s.log.WarnContext(ctx, "refreshing a stale capability cache failed; using the last good one", "connector", r.Name)
		return ch, nil
	}
	return s.loadCache(ctx, c.Tenant, r.Name)
}

// Call runs a proxied tool: its policy (and approval), then the upstream
// call on a pooled session. An upstream result with isError passes through
// as it is; a failure to reach the upstream or get its answer is an
// unavailable error naming the connector and what failed. A call that
// needs approval answers an *elicit.InputRequired (clients that can answer
// forms) or a tool error with the approval page's link.
//
// Every call, whatever its outcome, appends a ToolCalled audit event
// ([Service.auditCall]), after the answer when [Options].After is set.
func (s *Service) Call(ctx context.Context, c tenant.Caller, in CallInput) (res *mcp.CallToolResult, err error) {
	start, forwarded := time.Now(), false
	defer func() { s.auditCall(ctx, c, in, forwarded, res, err, time.Since(start)) }()
	if len(in.Arguments) > MaxArgumentsBytes {
		return nil, fault.Invalid("arguments", "are %d bytes; at most %d are allowed", len(in.Arguments), MaxArgumentsBytes)
	}
	if len(in.Arguments) > 0 && !json.Valid(in.Arguments) {
		return nil, fault.Invalid("arguments", "are not JSON")
	}
	r, tool, err := s.target(ctx, c, in.Name)
	if err != nil {
		return nil, err
	}
	if in.ReadOnly && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
		return nil, fault.Invalid("name", "%s may change state (its server does not mark it readOnlyHint), and this access token's scopes allow read-only tools only; nothing was called", in.Name)
	}
	if res, err = s.approve(ctx, c, r, tool.Name, in); res != nil || err != nil {
		return res, err
	}
	forwarded = true
	return s.forward(ctx, c, r, tool.Name, in)
}

// CallTool is the tool through which the gateway calls [Service.Call]
// (catalog.ConnectorCallTool): the function its lost audit events are
// counted under.
const CallTool = "connector_call"

// callAuditTimeout bounds appending a proxied call's audit event.
const callAuditTimeout = 5 * time.Second

// maxAuditError bounds the error message a proxied call's audit event keeps.
const maxAuditError = 500

// auditCall appends the ToolCalled event of a proxied call to the audit log
// Switchboard's own tools write to, under the call's trace: the caller, the
// proxied name, its outcome, and in its detail the connector, the upstream
// tool, the duration, whether the upstream answered isError, the approval
// it carried and the SHA-256 of its canonical arguments (never the
// arguments: they may hold what the audit log must not). With
// [Options].After the table write happens after the answer (a write per call
// cost more than the upstream's round trip on the call's path), yet within
// the invocation; otherwise before Call returns. A lost event is logged and
// counted (metrics.AuditFailures), never failing the call, as for the
// catalog's tools.
func (s *Service) auditCall(ctx context.Context, c tenant.Caller, in CallInput, forwarded bool, res *mcp.CallToolResult, err error, d time.Duration) {
	cc, _ := callcontext.FromContext(ctx)
	e := audit.Event{Tenant: c.Tenant, TraceID: traceOf(ctx), Type: audit.ToolCalled, Tool: in.Name,
		Principal: c.Principal, RequestID: cc.RequestID, Outcome: callOutcome(forwarded, res, err)}
	name, tool, _ := SplitName(in.Name)
	detail := map[string]any{"connector": name, "tool": tool, "duration_ms": float64(d.Microseconds()) / 1000,
		"is_error": forwarded && res != nil && res.IsError}
	if tenant.IsKeyID(in.ApprovalID) {
		detail["approval_id"] = in.ApprovalID
	}
	if err != nil {
		_, _, msg := fault.Public(err)
		detail["error"] = truncate(msg, maxAuditError)
	}
	args := in.Arguments
	write := func(ctx context.Context) {
		digest := elicit.ArgumentsDigest(args) // off the call's path: it decodes the arguments
		detail["arguments_sha256"] = hex.EncodeToString(digest[:])
		e.Detail = detail
		if aerr := s.appendCallEvent(ctx, e); aerr != nil {
			s.log.ErrorContext(ctx, "audit append failed", "type", e.Type, "tool", e.Tool, "trace_id", e.TraceID, "error", aerr)
			s.stats.m.AuditFailed(metrics.Call{Family: metrics.ConnectorsFamily, Function: CallTool,
				Tenant: c.Tenant, TraceID: e.TraceID, RequestID: e.RequestID})
		}
	}
	if s.opts.After != nil {
		s.opts.After.Go(ctx, callAuditTimeout, write)
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callAuditTimeout)
	defer cancel()
	write(wctx)
}

// callOutcome names a proxied call's outcome in its audit event: "ok",
// "tool error" (the upstream answered isError), "approval required" (a
// link to the approval page was answered), "input required" (the client
// was asked to approve), or "error: <kind>".
func callOutcome(forwarded bool, res *mcp.CallToolResult, err error) string {
	var ask *elicit.InputRequired
	switch {
	case errors.As(err, &ask):
		return "input required"
	case err != nil:
		return "error: " + string(fault.KindOf(err))
	case !forwarded:
		return "approval required"
	case res != nil && res.IsError:
		return "tool error"
	}
	return "ok"
}

// forward sends an approved call upstream.
func (s *Service) forward(ctx context.Context, c tenant.Caller, r *record, tool string, in CallInput) (*mcp.CallToolResult, error) {
	args := in.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var res *mcp.CallToolResult
	start := time.Now()
	err := s.withSession(ctx, c, r, func(ctx context.Context, sess *session, _ creds) error {
		params := &mcp.CallToolParams{Name: tool, Arguments: args}
		var delivered, done atomic.Int64
		if in.Progress != nil {
			token := s.pool.nextToken()
			params.SetProgressToken(token)
			sess.progress.Store(token, func(p *mcp.ProgressNotificationParams) {
				delivered.Add(1)
				if p.Total > 0 && p.Progress >= p.Total {
					done.Store(1)
				}
				in.Progress(&mcp.ProgressNotificationParams{Message: p.Message, Progress: p.Progress, Total: p.Total})
			})
			defer sess.progress.Delete(token)
		}
		var err error
		if res, err = sess.cs.CallTool(ctx, params); err != nil {
			return fmt.Errorf("calling %s: %w", tool, err)
		}
		if in.Progress != nil {
			settle(&delivered, &done)
		}
		return nil
	})
	s.stats.call(c.Tenant, r.Name, time.Since(start), err != nil || (res != nil && res.IsError))
	return res, err
}

// settle waits for the progress notifications that arrived ahead of a
// result to be delivered: the go-sdk hands a response to its caller at once
// but notifications to a handler queue, so the last ones may still be queued
// when the result is back. It returns once a notification said the work is
// complete (progress = total), or none has come for settleQuiet, and after
// settleMax at most. Best effort: a notification the go-sdk delivers later
// still is dropped.
func settle(delivered, done *atomic.Int64) {
	deadline := time.Now().Add(settleMax)
	for last := delivered.Load(); done.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(settleQuiet)
		n := delivered.Load()
		if n == last {
			return
		}
		last = n
	}
}

const (
	settleQuiet = 20 * time.Millisecond
	settleMax   = 250 * time.Millisecond
)

// ReadResourceInput reads a proxied resource.
type ReadResourceInput struct {
	// URI is the proxied URI, connector://<connector>/<upstream URI>.
	URI string `json:"uri"`
}

// ReadResource reads a proxied resource from its upstream. Reads are not
// subject to approval policies: policies name tools.
func (s *Service) ReadResource(ctx context.Context, c tenant.Caller, in ReadResourceInput) (*mcp.ReadResourceResult, error) {
	name, uri, ok := SplitURI(in.URI)
	if !ok {
		return nil, fault.Invalid("uri", "%q is not a proxied resource URI: %s<connector>/<uri>", in.URI, ResourceScheme)
	}
	r, err := s.load(ctx, c, "uri", name)
	if err != nil {
		return nil, err
	}
	var res *mcp.ReadResourceResult
	err = s.withSession(ctx, c, r, func(ctx context.Context, sess *session, _ creds) error {
		var err error
		if res, err = sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			return fmt.Errorf("reading %s: %w", uri, err)
		}
		for _, rc := range res.Contents {
			rc.URI = ProxiedURI(name, rc.URI)
		}
		return nil
	})
	return res, err
}

// GetPromptInput gets a proxied prompt.
type GetPromptInput struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// GetPrompt renders a proxied prompt upstream.
func (s *Service) GetPrompt(ctx context.Context, c tenant.Caller, in GetPromptInput) (*mcp.GetPromptResult, error) {
	name, prompt, ok := SplitName(in.Name)
	if !ok {
		return nil, fault.Invalid("name", "%q is not a proxied prompt name: <connector>__<prompt>", in.Name)
	}
	r, err := s.load(ctx, c, "name", name)
	if err != nil {
		return nil, err
	}
	var res *mcp.GetPromptResult
	err = s.withSession(ctx, c, r, func(ctx context.Context, sess *session, _ creds) error {
		var err error
		if res, err = sess.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: in.Arguments}); err != nil {
			return fmt.Errorf("getting prompt %s: %w", prompt, err)
		}
		return nil
	})
	return res, err
}

// Listing is what the gateway lists of a tenant's connectors beside its own
// tools, resources and prompts.
type Listing struct {
	Tools     []*mcp.Tool     `json:"tools"`
	Resources []*mcp.Resource `json:"resources"`
	Prompts   []*mcp.Prompt   `json:"prompts"`
}

// ListingInput is the input of connector_listing.
type ListingInput struct{}

// ListProxied serves connector_listing: [Service.Listing] for the gateway.
func (s *Service) ListProxied(ctx context.Context, c tenant.Caller, _ ListingInput) (Listing, error) {
	return s.Listing(ctx, c)
}

// Listing returns what c's tenant's connectors offer under their proxied names:
// connectors CONNECTED with a cache (refreshed on demand when stale), tools
// and prompts as the upstream gave them (schemas, annotations), minus the
// tools a policy denies.
func (s *Service) Listing(ctx context.Context, c tenant.Caller) (Listing, error) {
	out := Listing{Tools: []*mcp.Tool{}, Resources: []*mcp.Resource{}, Prompts: []*mcp.Prompt{}}
	err := s.eachUsable(ctx, c, func(r *record, ch *cache, denied map[string]bool) {
		for _, t := range ch.Tools {
			if !denied[t.Name] {
				cp := *t
				cp.Name = ProxiedName(r.Name, t.Name)
				out.Tools = append(out.Tools, &cp)
			}
		}
		for _, res := range ch.Resources {
			cp := *res
			cp.URI = ProxiedURI(r.Name, res.URI)
			cp.Name = ProxiedName(r.Name, res.Name)
			out.Resources = append(out.Resources, &cp)
		}
		for _, p := range ch.Prompts {
			cp := *p
			cp.Name = ProxiedName(r.Name, p.Name)
			out.Prompts = append(out.Prompts, &cp)
		}
	})
	return out, err
}

// eachUsable calls fn for each of c's tenant's connectors that is usable
// (CONNECTED, with a cache that is fresh or was refreshed on demand), with
// its tools' deny policies.
func (s *Service) eachUsable(ctx context.Context, c tenant.Caller, fn func(*record, *cache, map[string]bool)) error {
	if err := validateCaller(c); err != nil {
		return err
	}
	for cursor := ""; ; {
		page, err := s.table.Query(ctx, connPK(c.Tenant), store.Query{Cursor: cursor, Limit: store.MaxQueryLimit})
		if err != nil {
			return unavailable(err, "listing connectors failed; retry")
		}
		for _, it := range page.Items {
			r := recordFrom(it)
			if r.Status == StatusDisabled || r.Status == StatusNeverConnected && r.SyncStatus == SyncNever {
				continue
			}
			ch, err := s.cached(ctx, c, r)
			if err != nil || ch == nil {
				continue
			}
			if r, err = s.load(ctx, c, "name", r.Name); err != nil || r.Status != StatusConnected {
				continue
			}
			policies, err := s.policies(ctx, c.Tenant, r.Name)
			if err != nil {
				return err
			}
			denied := map[string]bool{}
			for tool, p := range policies {
				denied[tool] = p.Policy == PolicyDeny
			}
			fn(r, ch, denied)
		}
		if cursor = page.Next; cursor == "" {
			return nil
		}
	}
}
