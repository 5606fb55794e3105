package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Capability kinds, as cached.
const (
	KindTools     = "tools"
	KindResources = "resources"
	KindPrompts   = "prompts"
)

var kinds = []string{KindTools, KindResources, KindPrompts}

// Separator joins a connector's name and an upstream tool's or prompt's in
// the name Switchboard lists it under.
const Separator = "__"

// ResourceScheme begins the URI Switchboard lists an upstream resource under:
// connector://<connector>/<the upstream's URI>.
const ResourceScheme = "connector://"

// ProxiedName returns the name Switchboard lists tool or prompt of connector under.
func ProxiedName(connector, name string) string { return connector + Separator + name }

// SplitName splits a proxied name at its first double underscore, which ends
// the connector's name (connector names never hold one).
func SplitName(proxied string) (connector, name string, ok bool) {
	connector, name, ok = strings.Cut(proxied, Separator)
	return connector, name, ok && connector != "" && name != ""
}

// ProxiedURI returns the URI Switchboard lists resource uri of connector under.
func ProxiedURI(connector, uri string) string { return ResourceScheme + connector + "/" + uri }

// SplitURI splits a proxied resource URI into its connector and upstream URI.
func SplitURI(proxied string) (connector, uri string, ok bool) {
	rest, ok := strings.CutPrefix(proxied, ResourceScheme)
	if !ok {
		return "", "", false
	}
	connector, uri, ok = strings.Cut(rest, "/")
	return connector, uri, ok && connector != "" && uri != ""
}

// validProxiedName checks a proxied tool or prompt name against MCP's tool
// name rules as the go-sdk applies them: 1-128 characters of ASCII letters,
// digits, '_', '-' and '.'.
func validProxiedName(name string) error {
	if len(name) > 128 {
		return fmt.Errorf("the listed name would be %d characters; MCP allows 128", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("the listed name would contain %q; MCP tool names allow ASCII letters, digits, '_', '-' and '.'", string(r))
		}
	}
	return nil
}

// capabilities are what one sync read from an upstream, as the upstream
// gave them, with what was refused and why.
type capabilities struct {
	Tools     []*mcp.Tool
	Resources []*mcp.Resource
	Prompts   []*mcp.Prompt
	Refused   []Refusal
}

// cache is a connector's cached capabilities.
type cache struct {
	capabilities
	SyncedAt time.Time
}

// fresh reports whether c is no older than ttl at now.
func (c *cache) fresh(now time.Time, ttl time.Duration) bool {
	return c != nil && !c.SyncedAt.IsZero() && now.Sub(c.SyncedAt) <= ttl
}

// admit filters what an upstream listed: names that break MCP's rules or
// collide are refused with a reason, never dropped silently.
func admit(connector string, caps *capabilities) {
	seen := map[string]bool{}
	check := func(kind, name string) bool {
		listed := ProxiedName(connector, name)
		var reason string
		switch {
		case name == "":
			reason = "the upstream gave it no name"
		case validProxiedName(listed) != nil:
			reason = validProxiedName(listed).Error()
		case seen[kind+"\x00"+listed]:
			reason = fmt.Sprintf("another %s of this connector is already listed as %s", strings.TrimSuffix(kind, "s"), listed)
		}
		if reason != "" {
			caps.Refused = append(caps.Refused, Refusal{Kind: kind, Name: name, Reason: reason})
			return false
		}
		seen[kind+"\x00"+listed] = true
		return true
	}
	tools := caps.Tools[:0]
	for _, t := range caps.Tools {
		if check(KindTools, t.Name) {
			tools = append(tools, t)
		}
	}
	caps.Tools = tools
	prompts := caps.Prompts[:0]
	for _, p := range caps.Prompts {
		if check(KindPrompts, p.Name) {
			prompts = append(prompts, p)
		}
	}
	caps.Prompts = prompts
	resources := caps.Resources[:0]
	for _, r := range caps.Resources {
		if r.URI == "" {
			caps.Refused = append(caps.Refused, Refusal{Kind: KindResources, Name: r.Name, Reason: "the upstream gave it no URI"})
			continue
		}
		if seen["r\x00"+r.URI] {
			caps.Refused = append(caps.Refused, Refusal{Kind: KindResources, Name: r.URI, Reason: "listed twice by the upstream"})
			continue
		}
		seen["r\x00"+r.URI] = true
		resources = append(resources, r)
	}
	caps.Resources = resources
}

// fetchCapabilities lists an upstream's tools, resources and prompts, page
// by page, bounded by [MaxCapabilities] of each.
func fetchCapabilities(ctx context.Context, cs *mcp.ClientSession) (*capabilities, error) {
	caps := &capabilities{}
	init := cs.InitializeResult()
	var sc *mcp.ServerCapabilities
	if init != nil {
		sc = init.Capabilities
	}
	if sc == nil || sc.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("listing tools: %w", err)
			}
			if len(caps.Tools) == MaxCapabilities {
				return nil, fmt.Errorf("listing tools: the upstream lists more than %d", MaxCapabilities)
			}
			caps.Tools = append(caps.Tools, t)
		}
	}
	if sc != nil && sc.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("listing resources: %w", err)
			}
			if len(caps.Resources) == MaxCapabilities {
				return nil, fmt.Errorf("listing resources: the upstream lists more than %d", MaxCapabilities)
			}
			caps.Resources = append(caps.Resources, r)
		}
	}
	if sc != nil && sc.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("listing prompts: %w", err)
			}
			if len(caps.Prompts) == MaxCapabilities {
				return nil, fmt.Errorf("listing prompts: the upstream lists more than %d", MaxCapabilities)
			}
			caps.Prompts = append(caps.Prompts, p)
		}
	}
	return caps, nil
}

// cacheItems returns the items that store caps, synced at at.
func cacheItems(t, name string, caps *capabilities, at time.Time) ([]store.Item, error) {
	lists := map[string]any{KindTools: caps.Tools, KindResources: caps.Resources, KindPrompts: caps.Prompts}
	var items []store.Item
	for _, kind := range kinds {
		b, err := json.Marshal(lists[kind])
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", kind, err)
		}
		if len(b) > MaxCacheBytes {
			return nil, fmt.Errorf("the upstream's %s take %d bytes; at most %d can be cached", kind, len(b), MaxCacheBytes)
		}
		var refused []Refusal
		for _, r := range caps.Refused {
			if r.Kind == kind {
				refused = append(refused, r)
			}
		}
		rb, _ := json.Marshal(refused)
		items = append(items, store.Item{PK: subPK(t, name), SK: "cache#" + kind,
			Attrs: store.Attrs{"list": string(b), "refused": string(rb), "synced_at": at.UnixNano()}})
	}
	return items, nil
}

// loadCache reads a connector's cache, or nil if it was never synced.
func (s *Service) loadCache(ctx context.Context, t, name string) (*cache, error) {
	page, err := s.table.Query(ctx, subPK(t, name), store.Query{Prefix: "cache#"})
	if err != nil {
		return nil, unavailable(err, "reading the capabilities of connector %q failed; retry", name)
	}
	if len(page.Items) == 0 {
		return nil, nil
	}
	c := &cache{}
	for _, it := range page.Items {
		var err error
		switch strings.TrimPrefix(it.SK, "cache#") {
		case KindTools:
			err = json.Unmarshal([]byte(it.String("list")), &c.Tools)
		case KindResources:
			err = json.Unmarshal([]byte(it.String("list")), &c.Resources)
		case KindPrompts:
			err = json.Unmarshal([]byte(it.String("list")), &c.Prompts)
		}
		if err != nil {
			return nil, fmt.Errorf("connector: decoding the cached %s of %s: %w", it.SK, name, err)
		}
		var refused []Refusal
		if json.Unmarshal([]byte(it.String("refused")), &refused) == nil {
			c.Refused = append(c.Refused, refused...)
		}
		if at := time.Unix(0, it.Int("synced_at")); c.SyncedAt.IsZero() || at.Before(c.SyncedAt) {
			c.SyncedAt = at
		}
	}
	return c, nil
}

// SyncOutput is the output of connector_sync.
type SyncOutput struct {
	Connector Connector `json:"connector"`
	Tools     []string  `json:"tools" jsonschema:"the names the connector's tools are listed under"`
	Resources int       `json:"resources"`
	Prompts   []string  `json:"prompts"`
	Refused   []Refusal `json:"refused,omitempty" jsonschema:"what the upstream listed that cannot be listed here, and why"`
}

// Sync serves connector_sync: it reads the upstream's capabilities into the
// cache now. A failed sync keeps the last good cache and records why.
func (s *Service) Sync(ctx context.Context, c tenant.Caller, in NameInput) (SyncOutput, error) {
	r, err := s.load(ctx, c, "name", in.Name)
	if err != nil {
		return SyncOutput{}, err
	}
	r, caps, err := s.sync(ctx, c, r)
	if err != nil {
		return SyncOutput{}, err
	}
	out := SyncOutput{Connector: r.view(false), Resources: len(caps.Resources), Refused: caps.Refused,
		Tools: make([]string, 0, len(caps.Tools)), Prompts: make([]string, 0, len(caps.Prompts))}
	for _, t := range caps.Tools {
		out.Tools = append(out.Tools, ProxiedName(r.Name, t.Name))
	}
	for _, p := range caps.Prompts {
		out.Prompts = append(out.Prompts, ProxiedName(r.Name, p.Name))
	}
	return out, nil
}

// sync reads r's capabilities as c and records the outcome on r: a sync
// that fails returns an unavailable error naming the connector and what
// failed, and the record says why.
func (s *Service) sync(ctx context.Context, c tenant.Caller, r *record) (*record, *capabilities, error) {
	if r.Status == StatusDisabled {
		return r, nil, fault.Invalid("name", "connector %q is disabled; enable it with connector_update", r.Name)
	}
	var caps *capabilities
	err := s.withSession(ctx, c, r, func(ctx context.Context, sess *session, _ creds) error {
		var err error
		caps, err = fetchCapabilities(ctx, sess.cs)
		return err
	})
	now := s.now().UTC()
	var items []store.Item
	if err == nil {
		admit(r.Name, caps)
		items, err = cacheItems(c.Tenant, r.Name, caps, now)
	}
	outcome := "ok"
	detail := map[string]any{"connector": r.Name}
	if err != nil {
		outcome = "error: " + string(fault.KindUnavailable)
		detail["error"] = err.Error()
	} else {
		detail["tools"], detail["resources"], detail["prompts"], detail["refused"] = len(caps.Tools), len(caps.Resources), len(caps.Prompts), len(caps.Refused)
	}
	event := &audit.Event{Tenant: c.Tenant, TraceID: traceOf(ctx), Type: audit.ConnectorSynced, Tool: "connector_sync",
		Principal: c.Principal, Outcome: outcome, Detail: detail}
	updated, werr := s.recordSync(ctx, c, r.Name, items, now, event, func(r *record) {
		if err != nil {
			r.SyncStatus, r.LastError = SyncFailed, err.Error()
			if !upstreamAnswered(err) {
				r.Status = StatusError
			}
		} else {
			r.SyncStatus, r.LastError, r.SyncedAt, r.Status = SyncOK, "", now, StatusConnected
		}
	})
	if werr != nil {
		return r, nil, werr
	}
	if err != nil {
		return updated, nil, err
	}
	return updated, caps, nil
}

// recordSync writes the outcome of a sync that ended at now: the cache
// items (if it succeeded), the record as apply changes it, its place in the
// scheduled sync's index and event's audit record (if not nil), in one
// transaction on the record's version as read again.
func (s *Service) recordSync(ctx context.Context, c tenant.Caller, name string, items []store.Item, now time.Time, event *audit.Event, apply func(*record)) (*record, error) {
	var out *record
	err := store.Retry(ctx, func() error {
		it, err := s.table.Get(ctx, connPK(c.Tenant), name)
		if errors.Is(err, store.ErrNotFound) {
			return fault.NotFound("connector %q was deleted during the sync", name)
		}
		if err != nil {
			return err
		}
		r := recordFrom(it)
		// A concurrent sync that moved the pointer first fails this
		// transaction, and Retry reads both again.
		at, unmoved, err := s.indexAt(ctx, c.Tenant, name, r)
		if err != nil {
			return err
		}
		r.SyncAt = now
		apply(r)
		writes := []store.Write{store.Put(r.item(c.Tenant), store.IfEquals("ver", r.Ver)),
			store.Put(syncPointer(c.Tenant, name, now.UnixNano()), unmoved),
			store.Delete(SyncIndexPartition, indexSK(at, c.Tenant, name), store.Condition{}),
			store.Put(store.Item{PK: SyncIndexPartition, SK: syncSK(now, c.Tenant, name)}, store.Condition{})}
		for _, ci := range items {
			writes = append(writes, store.Put(ci, store.Condition{}))
		}
		if event != nil {
			it, err := s.audit.Item(*event)
			if err != nil {
				return err
			}
			writes = append(writes, store.Put(it, store.IfAbsent()))
		}
		if err := s.table.Transact(ctx, writes...); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, unavailable(err, "recording the sync of connector %q failed; retry", name)
	}
	return out, nil
}

// SchedulerPrincipal is the principal the scheduled sync acts as in each
// tenant (its audit events name it); it uses the tenant's credentials.
const SchedulerPrincipal = "switchboard-scheduler"

// The scheduled sync's pace: connectors synced at once, index items read per
// query, and the time kept after a sync's upstream exchange to record it.
const (
	syncConcurrency = 8
	syncPage        = 100
	syncRecordTime  = 5 * time.Second
)

// SyncDueOutput reports a scheduled sync.
type SyncDueOutput struct {
	Synced  int `json:"synced"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped" jsonschema:"connectors disabled, deleted, or whose credentials are per principal with none for the tenant"`
	// More is true when connectors were still due as the deadline neared:
	// the next run syncs them first, being the oldest.
	More bool `json:"more"`
	// Expired counts the approvals this run found lapsed and recorded
	// ([Service.ExpireDue]).
	Expired int `json:"expired"`
}

// SyncDue syncs the connectors of every tenant whose last sync attempt
// will be older than the cache TTL once next has passed, oldest first: a
// query of the sync index up to that cutoff (now at the latest), never a
// scan. next is the time to the caller's next run: a run that synced only
// the caches already stale would leave those that go stale just after it
// to be read stale until the run after (half of the time, when the period
// is the TTL). It syncs [syncConcurrency] at a time, each as
// [SchedulerPrincipal] of its tenant, and starts a sync only while ctx's
// deadline leaves it a call's time and the time to record it. A failed sync
// keeps the last good cache, records why on the connector and counts in
// Failed; it never stops the others. The error is the index's, if it
// cannot be read. First it records the approvals that lapsed
// ([Service.ExpireDue]). The scheduler calls it every 5 minutes
// (functions/connectors/scheduled_sync), the local server on a ticker.
func (s *Service) SyncDue(ctx context.Context, next time.Duration) (SyncDueOutput, error) {
	expired, sweepErr := s.ExpireDue(ctx)
	if sweepErr != nil {
		s.log.WarnContext(ctx, "the approvals' expiry sweep stopped", "error", sweepErr)
	}
	out := SyncDueOutput{Expired: expired}
	// At most now: a connector synced by this run is indexed at a later
	// time, past the cutoff, so that no page reads it again; should the
	// clock step back, attempted still keeps it from a second sync.
	ahead := min(max(next, 0), s.opts.CacheTTL)
	to := fmt.Sprintf("%019d#~", s.now().Add(ahead-s.opts.CacheTTL).UnixNano())
	var synced, failed, skipped atomic.Int64
	var g errgroup.Group
	g.SetLimit(syncConcurrency)
	attempted := map[string]bool{} // by tenant#name
	var err error
	for cursor := ""; ; {
		var page store.Page
		if page, err = s.index.Query(ctx, SyncIndexPartition, store.Query{To: to, Cursor: cursor, Limit: syncPage}); err != nil {
			err = unavailable(err, "reading the sync schedule failed; retry")
			break
		}
		for _, it := range page.Items {
			if !s.timeToSync(ctx) {
				out.More = true
				break
			}
			_, key, _ := strings.Cut(it.SK, "#")
			if attempted[key] {
				continue
			}
			attempted[key] = true
			g.Go(func() error {
				switch s.syncScheduled(ctx, it.SK) {
				case SyncOK:
					synced.Add(1)
				case SyncFailed:
					failed.Add(1)
				default:
					skipped.Add(1)
				}
				return nil
			})
		}
		if out.More || page.Next == "" {
			break
		}
		cursor = page.Next
	}
	g.Wait()
	out.Synced, out.Failed, out.Skipped = int(synced.Load()), int(failed.Load()), int(skipped.Load())
	return out, err
}

// timeToSync reports whether ctx leaves a sync its call timeout and the
// time to record the outcome.
func (s *Service) timeToSync(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) >= s.opts.CallTimeout+syncRecordTime
}

// syncScheduled syncs the connector of the sync index's item sk and returns
// SyncOK, SyncFailed, or "" for a connector it skipped.
func (s *Service) syncScheduled(ctx context.Context, sk string) string {
	parts := strings.SplitN(sk, "#", 3)
	if len(parts) != 3 {
		s.log.ErrorContext(ctx, "the sync index holds a malformed key", "key", sk)
		return ""
	}
	c := tenant.Caller{Tenant: parts[1], Principal: SchedulerPrincipal}
	// The sync acts for the connector's tenant: under tenant isolation the
	// table's credentials are that tenant's (package tenantcreds reads the
	// call's caller).
	call, _ := callcontext.FromContext(ctx)
	call.Caller = c
	ctx = callcontext.NewContext(ctx, call)
	r, err := s.load(ctx, c, "name", parts[2])
	switch {
	case fault.KindOf(err) == fault.KindNotFound:
		// Deleted between its index item's write and removal.
		if err := s.index.Delete(ctx, SyncIndexPartition, sk, store.Condition{}); err != nil {
			s.log.WarnContext(ctx, "removing a deleted connector from the sync index failed", "tenant", c.Tenant, "connector", parts[2], "error", err)
		}
		return ""
	case err != nil:
		s.log.ErrorContext(ctx, "reading a connector to sync failed", "tenant", c.Tenant, "connector", parts[2], "error", err)
		return SyncFailed
	case s.stray(ctx, c, r, sk):
		return ""
	case r.Status == StatusDisabled || (r.PrincipalScoped && len(r.Sealed) == 0):
		s.recordSkip(ctx, c, r)
		return ""
	}
	if _, _, err := s.sync(ctx, c, r); err != nil {
		s.log.WarnContext(ctx, "a scheduled sync failed", "tenant", c.Tenant, "connector", r.Name, "error", err)
		return SyncFailed
	}
	return SyncOK
}

// stray reports whether sk is not r's item in the sync index (left by a
// delete that failed half-way, or by concurrent syncs before there were sync
// pointers), and removes it if so: r has its own.
func (s *Service) stray(ctx context.Context, c tenant.Caller, r *record, sk string) bool {
	at, _, err := s.indexAt(ctx, c.Tenant, r.Name, r)
	if err != nil || indexSK(at, c.Tenant, r.Name) == sk {
		return false
	}
	if err := s.index.Delete(ctx, SyncIndexPartition, sk, store.Condition{}); err != nil {
		s.log.WarnContext(ctx, "removing a stray item of the sync index failed", "tenant", c.Tenant, "connector", r.Name, "error", err)
	}
	return true
}

// recordSkip moves a connector the scheduler cannot sync to the end of the
// index, so that it is read again only when due, as a synced one is.
func (s *Service) recordSkip(ctx context.Context, c tenant.Caller, r *record) {
	if _, err := s.recordSync(ctx, c, r.Name, nil, s.now().UTC(), nil, func(*record) {}); err != nil {
		s.log.WarnContext(ctx, "moving a skipped connector in the sync index failed", "connector", r.Name, "error", err)
	}
}
