// Package connector puts other MCP servers behind Switchboard (issue 12, seed
// 001's MCP client): a registry of each tenant's upstream servers with sealed
// credentials, a capability cache with a TTL, proxied calls over pooled go-sdk
// client sessions (Streamable HTTP or legacy SSE), approval policies with
// approvals bound to the exact call, and health figures.
//
//	t#<tenant>#conn               <name>            base_url, transport, status, sync_status, last_error, synced_at,
//	                                                ver, creds (kind, header names), sealed (tenant credentials), times
//	t#<tenant>#conn#<name>        cred#<principal>  sealed (one principal's own credentials), ver
//	                              cache#<kind>      tools | resources | prompts: JSON, refused, synced_at
//	                              sync              at: the time its item in the sync index is keyed by
//	                              policy#<tool>     policy, ver
//	                              stats             approvals requested, granted, denied, expired, ver
//	t#<tenant>#connapprovals      <id>              an approval, of the page flow or by elicitation (TTL)
//	_conn#sync                    <synced at>#<tenant>#<name>   the scheduled sync's index, one item per connector
//	                              approval#<expires>#<tenant>#<id>   the approvals' expiry index, one item per approval
//
//	svc := connector.New(table, sealer, &connector.Options{CheckURL: guard.CheckURL, HTTPClient: guard.Client()})
//	defer svc.Close()
//	_, _ = svc.Create(ctx, caller, connector.CreateInput{Name: "github", BaseURL: "https://mcp.example.com/mcp",
//		Transport: "streamable_http", Headers: map[string]string{"Authorization": "Bearer ..."}})
//	_, _ = svc.Sync(ctx, caller, connector.NameInput{Name: "github"})
//	res, _ := svc.Call(ctx, caller, connector.CallInput{Name: "github__search", Arguments: args})
//
// Credentials are sealed by a [Sealer] (KMS envelope encryption on AWS, a
// local key file on a laptop) with an encryption context naming the tenant,
// the connector and, for a principal's own credentials, the principal; they
// are opened only to make an upstream request, and never returned, logged,
// audited or put in an error.
package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Sealer seals and opens secrets with envelope encryption (shared/seal's kms
// and localkey backends). ec is the encryption context: Open with another
// context than Seal's fails. Its methods must be safe for concurrent use.
type Sealer interface {
	Seal(ctx context.Context, plaintext []byte, ec map[string]string) ([]byte, error)
	Open(ctx context.Context, sealed []byte, ec map[string]string) ([]byte, error)
}

// Transports a connector can speak.
const (
	TransportStreamable = "streamable_http"
	TransportSSE        = "sse"
)

// Connector statuses.
const (
	StatusNeverConnected = "NEVER_CONNECTED"
	StatusConnected      = "CONNECTED"
	StatusError          = "ERROR"
	StatusDisabled       = "DISABLED"
)

// Sync statuses.
const (
	SyncNever  = "NEVER_SYNCED"
	SyncOK     = "SYNCED"
	SyncFailed = "FAILED"
)

// Defaults and limits.
const (
	// DefaultCacheTTL is how long cached capabilities stay fresh (seed 001).
	DefaultCacheTTL = 5 * time.Minute
	// DefaultIdleTimeout closes a session unused for this long (seed 001).
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultInitTimeout bounds an upstream's initialisation (seed 001).
	DefaultInitTimeout = 10 * time.Second
	// DefaultCallTimeout bounds one upstream request (seed 001).
	DefaultCallTimeout = 30 * time.Second
	// DefaultRetryDelay is how long a session that failed to initialise
	// stays in ERROR before the next call tries again.
	DefaultRetryDelay = 5 * time.Second
	// DefaultApprovalTTL is how long an approval asked by elicitation stays
	// valid (seed 001's mcp.approval.timeout).
	DefaultApprovalTTL = 60 * time.Second
	// DefaultPageApprovalTTL is how long an approval of the page flow stays
	// valid: a person has to open the link, read and decide, and the host has
	// to retry, which takes longer than answering a form in the client.
	DefaultPageApprovalTTL = 10 * time.Minute
	// MaxNameLen bounds a connector name, so that `<name>__<tool>` leaves
	// room for the tool within MCP's 128 characters.
	MaxNameLen = 32
	// MaxURLLen bounds base_url and token_url.
	MaxURLLen = 2048
	// MaxHeaders, MaxHeaderValueLen and MaxScopes bound credentials.
	MaxHeaders        = 16
	MaxHeaderValueLen = 8192
	MaxScopes         = 32
	// MaxCapabilities bounds the tools, resources or prompts one connector
	// may list; MaxCacheBytes the JSON of each kind, within an item.
	MaxCapabilities = 1000
	MaxCacheBytes   = 350 * 1024
	// DefaultListLimit and MaxListLimit bound connector_list's pages.
	DefaultListLimit = 50
	MaxListLimit     = 100
	// SyncIndexPartition is the partition of the scheduled sync's index:
	// the one key of this package that does not begin with a tenant, since
	// the scheduled sync serves every tenant. Under tenant isolation a
	// tenant's session may put and delete its items, never read them
	// (package tenantcreds, Grant.Shared), and the scheduled sync reads
	// them through [Options.Index].
	SyncIndexPartition = "_conn#sync"
)

// Options configures [New]. A nil *Options uses the defaults, which allow
// no upstream at all: CheckURL and HTTPClient must be set to reach one.
type Options struct {
	// CheckURL checks an upstream or token URL (scheme, host, resolved
	// addresses) at create and update and again before connecting; its
	// error is shown to the caller. If nil, every URL is refused.
	CheckURL func(ctx context.Context, raw string) (*url.URL, error)
	// HTTPClient makes every upstream and token request; it is expected to
	// check the dialed address, refuse cross-host redirects and cap bodies,
	// an event stream's per event (shared/netguard with EventsCapped). A
	// session's error says when a response was cut. If nil, every URL is
	// refused.
	HTTPClient *http.Client
	// CacheTTL is how long cached capabilities stay fresh. If zero, defaults
	// to [DefaultCacheTTL].
	CacheTTL time.Duration
	// IdleTimeout, InitTimeout, CallTimeout and RetryDelay time the session
	// pool; zero values default to [DefaultIdleTimeout], [DefaultInitTimeout],
	// [DefaultCallTimeout] and [DefaultRetryDelay].
	IdleTimeout, InitTimeout, CallTimeout, RetryDelay time.Duration
	// ApprovalTTL and PageApprovalTTL time approvals; zero values default to
	// [DefaultApprovalTTL] and [DefaultPageApprovalTTL].
	ApprovalTTL, PageApprovalTTL time.Duration
	// MaxEventBytes bounds one server-sent event the go-sdk buffers. If zero,
	// defaults to 8 MiB.
	MaxEventBytes int
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings (failed audits, sessions that failed). If nil,
	// logs are discarded.
	Logger *slog.Logger
	// Metrics receives a record of each connector call, cache lookup and
	// approval, the figures connector_health shows (package metrics), and
	// of each proxied call whose audit event was lost. If nil, none is
	// written.
	Metrics *metrics.Emitter
	// OwnTools returns Switchboard's own public tools in OpenAI's function
	// format, which connector_tools_openai returns first when asked
	// (include_switchboard): the catalog is the binding's to read. If nil,
	// none are returned.
	OwnTools func() []OpenAITool
	// After appends each proxied call's audit event after the call's answer
	// (package later), so that the table write is not on the caller's path.
	// If nil, the event is appended before the call returns.
	After *later.Queue
	// Index is the table the scheduled sync reads and cleans its index
	// through ([Service.SyncDue]): under tenant isolation the function's
	// own credentials, as the table's are each call's tenant's, and no
	// tenant may read the index. If nil, the table.
	Index store.Table
}

// Service implements the connector tools on a [store.Table]. It is safe for
// concurrent use. Close it to close its upstream sessions.
type Service struct {
	table  store.Table
	index  store.Table // the sync index's reads and cleaning (Options.Index)
	sealer Sealer
	audit  *audit.Log
	opts   Options
	now    func() time.Time
	log    *slog.Logger
	pool   *pool
	// decoded keeps each connector's capability cache as last decoded,
	// by the time of the sync that wrote it ([Service.cached]); opened,
	// credentials as last opened, by their sealed bytes ([Service.openOnce]).
	decoded memo[*cache]
	opened  memo[*secrets]
	// policiesRead and credsRead keep the policies and principals' own
	// credential items as read, by the connector's version
	// ([Service.policyOf], [Service.ownCredOf]).
	policiesRead memo[Policy]
	credsRead    memo[ownCreds]
	tokens       *tokenCache
	stats        *stats
	batches      auditBatches // proxied calls' audit events, written together
}

// New returns a Service keeping connectors in table and sealing their
// credentials with sealer.
func New(table store.Table, sealer Sealer, opts *Options) *Service {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.CacheTTL = orDefault(o.CacheTTL, DefaultCacheTTL)
	o.IdleTimeout = orDefault(o.IdleTimeout, DefaultIdleTimeout)
	o.InitTimeout = orDefault(o.InitTimeout, DefaultInitTimeout)
	o.CallTimeout = orDefault(o.CallTimeout, DefaultCallTimeout)
	o.RetryDelay = orDefault(o.RetryDelay, DefaultRetryDelay)
	o.ApprovalTTL = orDefault(o.ApprovalTTL, DefaultApprovalTTL)
	o.PageApprovalTTL = orDefault(o.PageApprovalTTL, DefaultPageApprovalTTL)
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = 8 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	index := o.Index
	if index == nil {
		index = table
	}
	s := &Service{table: table, index: index, sealer: sealer, opts: o, now: o.Now, log: o.Logger.With("component", "connector"),
		audit: audit.New(table, &audit.Options{Now: o.Now}), tokens: newTokenCache(), stats: newStats(o.Metrics)}
	s.pool = newPool(o.IdleTimeout, o.InitTimeout, o.RetryDelay, o.Now, s.log)
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Close closes every upstream session gracefully. The Service must not be
// used afterwards.
func (s *Service) Close() error { return s.pool.closeAll() }

// OAuth are OAuth 2.0 client credentials (RFC 6749 4.4).
type OAuth struct {
	TokenURL     string   `json:"token_url" jsonschema:"the token endpoint"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Scopes       []string `json:"scopes,omitempty"`
}

// secrets are the credentials of a connector, sealed as JSON.
type secrets struct {
	Headers map[string]string `json:"headers,omitempty"`
	OAuth   *OAuth            `json:"oauth,omitempty"`
}

func (c *secrets) empty() bool { return c == nil || (len(c.Headers) == 0 && c.OAuth == nil) }

// values returns the secret strings of c, for redaction.
func (c *secrets) values() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, v := range c.Headers {
		out = append(out, v)
	}
	if c.OAuth != nil {
		out = append(out, c.OAuth.ClientSecret)
	}
	return out
}

// CreateInput is the input of connector_create.
type CreateInput struct {
	Name      string            `json:"name" jsonschema:"a short lowercase identifier: letters, digits and single underscores, starting with a letter; proxied tools are listed as <name>__<tool>"`
	BaseURL   string            `json:"base_url" jsonschema:"the upstream's MCP endpoint"`
	Transport string            `json:"transport" jsonschema:"streamable_http or sse (the legacy HTTP+SSE transport)"`
	Headers   map[string]string `json:"headers,omitempty" jsonschema:"header name to secret value sent with every upstream request, e.g. {\"Authorization\": \"Bearer ...\"}; sealed, never shown again"`
	OAuth     *OAuth            `json:"oauth,omitempty" jsonschema:"OAuth client credentials; the token is fetched, cached and sent as a bearer token"`
	// PrincipalScoped stores the credentials for the calling principal only.
	PrincipalScoped bool `json:"principal_scoped,omitempty" jsonschema:"store the credentials for you only; other principals use their own or the tenant's"`
}

// NameInput names one connector.
type NameInput struct {
	Name string `json:"name"`
}

// UpdateInput is the input of connector_update. Fields left empty keep their
// value.
type UpdateInput struct {
	Name      string            `json:"name"`
	Version   int64             `json:"version" jsonschema:"the version you read; a stale version is refused"`
	BaseURL   string            `json:"base_url,omitempty"`
	Transport string            `json:"transport,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	OAuth     *OAuth            `json:"oauth,omitempty"`
	// PrincipalScoped stores the given credentials for the caller only,
	// leaving the tenant's as they are.
	PrincipalScoped bool `json:"principal_scoped,omitempty"`
	// ClearCredentials removes the credentials (the caller's own when
	// principal_scoped, else the tenant's).
	ClearCredentials bool  `json:"clear_credentials,omitempty"`
	Disabled         *bool `json:"disabled,omitempty" jsonschema:"true to stop every call to the connector, false to allow them again"`
}

// DeleteInput is the input of connector_delete.
type DeleteInput struct {
	Name    string `json:"name"`
	Version int64  `json:"version,omitempty" jsonschema:"if set, delete only if the connector is still at this version"`
}

// ListInput is the input of connector_list.
type ListInput struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Credentials describes a connector's credentials without revealing them.
type Credentials struct {
	// Kind is "none", "headers" or "oauth" (the tenant's).
	Kind        string   `json:"kind"`
	HeaderNames []string `json:"header_names,omitempty"`
	TokenURL    string   `json:"token_url,omitempty"`
	ClientID    string   `json:"client_id,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	// PrincipalScoped: credentials are kept per principal.
	PrincipalScoped bool `json:"principal_scoped"`
	// Yours: the caller has credentials of their own, which override the tenant's.
	Yours bool `json:"yours"`
}

// Refusal is a capability a sync did not list, and why.
type Refusal struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Connector is a registered upstream, as the tools show it.
type Connector struct {
	Name         string      `json:"name"`
	BaseURL      string      `json:"base_url"`
	Transport    string      `json:"transport"`
	Status       string      `json:"status"`
	SyncStatus   string      `json:"sync_status"`
	LastError    string      `json:"last_error,omitempty"`
	LastSyncedAt *time.Time  `json:"last_synced_at,omitempty"`
	Version      int64       `json:"version"`
	Credentials  Credentials `json:"credentials"`
	CreatedAt    time.Time   `json:"created_at"`
	UpdatedAt    time.Time   `json:"updated_at"`
}

// ConnectorOutput is the output of connector_create, _get and _update.
type ConnectorOutput struct {
	Connector Connector `json:"connector"`
}

// ListOutput is the output of connector_list.
type ListOutput struct {
	Connectors []Connector `json:"connectors"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// DeleteOutput is the output of connector_delete.
type DeleteOutput struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

// record is a connector as stored.
type record struct {
	Name, BaseURL, Transport, Status, SyncStatus, LastError string
	SyncedAt, CreatedAt, UpdatedAt                          time.Time
	// SyncAt is when a sync was last attempted. The key of the
	// connector's item in the scheduled sync's index is its sync pointer's
	// (syncPointerSK), this only for connectors created before there was one.
	SyncAt time.Time
	// Ver is bumped by every edit (optimistic updates), PolicyEdits by the
	// policy changes alone, which bump Ver too ([Service.policyOf]).
	Ver, PolicyEdits             int64
	CredKind, TokenURL, ClientID string
	HeaderNames, Scopes          []string
	PrincipalScoped              bool
	Sealed                       []byte
	// Protocol is the protocol version a session of the connector
	// negotiated at ProtocolAt, which the next sessions ask for first for a
	// day ([protocolMemory]); a change of URL or transport forgets it.
	Protocol   string
	ProtocolAt time.Time
}

// protocolMemory is how long a connector's sessions ask first for the
// protocol version its upstream negotiated: after that, one negotiates from
// the newest again, so that an upstream's upgrade is taken up.
const protocolMemory = 24 * time.Hour

// protocol returns the protocol version r's next session asks for first at
// now ("" for the newest).
func (r *record) protocol(now time.Time) string {
	if now.Sub(r.ProtocolAt) >= protocolMemory {
		return ""
	}
	return r.Protocol
}

func connPK(t string) string         { return tenant.Key(t) + "conn" }
func subPK(t, name string) string    { return tenant.Key(t) + "conn#" + name }
func approvalPK(t string) string     { return tenant.Key(t) + "connapprovals" }
func credSK(principal string) string { return "cred#" + principal }

// syncSK is the key of a connector's item in the scheduled sync's index.
func syncSK(at time.Time, t, name string) string { return indexSK(at.UnixNano(), t, name) }

// indexSK is the key of a connector's item in the scheduled sync's index,
// from the time of its last sync attempt in Unix nanoseconds.
func indexSK(at int64, t, name string) string { return fmt.Sprintf("%019d#%s#%s", at, t, name) }

// syncPointerSK is the item, in a connector's own partition, that holds
// the time its index item is keyed by ("at", Unix nanoseconds). Only a
// recorded sync moves it, on the condition that it did not move since it was
// read, so that concurrent syncs, edits and status writes never leave a
// connector two index items, or none.
const syncPointerSK = "sync"

func syncPointer(t, name string, at int64) store.Item {
	return store.Item{PK: subPK(t, name), SK: syncPointerSK, Attrs: store.Attrs{"at": at}}
}

// indexAt returns the time connector name's index item is keyed by, and the
// condition that holds while its sync pointer has not moved: r's SyncAt for
// a connector created before it had a pointer.
func (s *Service) indexAt(ctx context.Context, t, name string, r *record) (int64, store.Condition, error) {
	it, err := s.table.Get(ctx, subPK(t, name), syncPointerSK)
	if errors.Is(err, store.ErrNotFound) {
		return r.SyncAt.UnixNano(), store.IfAbsent(), nil
	}
	if err != nil {
		return 0, store.Condition{}, err
	}
	at := it.Int("at")
	return at, store.IfEquals("at", at), nil
}

func (r *record) item(t string) store.Item {
	attrs := store.Attrs{
		"base_url": r.BaseURL, "transport": r.Transport, "status": r.Status, "sync_status": r.SyncStatus,
		"last_error": r.LastError, "ver": r.Ver, "cred_kind": r.CredKind, "token_url": r.TokenURL,
		"client_id": r.ClientID, "header_names": strings.Join(r.HeaderNames, "\n"), "scopes": strings.Join(r.Scopes, " "),
		"principal_scoped": r.PrincipalScoped, "created_at": r.CreatedAt.UnixNano(), "updated_at": r.UpdatedAt.UnixNano(),
		"synced_at": r.SyncedAt.UnixNano(), "sync_at": r.SyncAt.UnixNano(), "policy_edits": r.PolicyEdits,
		"protocol": r.Protocol, "protocol_at": r.ProtocolAt.UnixNano(),
	}
	if len(r.Sealed) > 0 {
		attrs["sealed"] = r.Sealed
	}
	return store.Item{PK: connPK(t), SK: r.Name, Attrs: attrs}
}

// connVer is the version of what r's sessions and tokens are made with
// (URL, transport, tenant credentials, ...): every edit but a policy's.
func (r *record) connVer() int64 { return r.Ver - r.PolicyEdits }

// versionKey names r's tenant, r (by its creation time too: one deleted and
// made again under its name starts again at version 1) and its version.
func (r *record) versionKey(t string) string {
	return t + "\x00" + r.Name + "\x00" + strconv.FormatInt(r.CreatedAt.UnixNano(), 10) + "\x00" + strconv.FormatInt(r.Ver, 10)
}

func recordFrom(it store.Item) *record {
	r := &record{Name: it.SK, BaseURL: it.String("base_url"), Transport: it.String("transport"), Status: it.String("status"),
		SyncStatus: it.String("sync_status"), LastError: it.String("last_error"), Ver: it.Int("ver"), PolicyEdits: it.Int("policy_edits"),
		CredKind: it.String("cred_kind"), TokenURL: it.String("token_url"), ClientID: it.String("client_id"),
		PrincipalScoped: it.Bool("principal_scoped"), Sealed: it.Bytes("sealed"), Protocol: it.String("protocol"),
		CreatedAt: time.Unix(0, it.Int("created_at")).UTC(), UpdatedAt: time.Unix(0, it.Int("updated_at")).UTC()}
	if n := it.Int("synced_at"); n > 0 {
		r.SyncedAt = time.Unix(0, n).UTC()
	}
	if n := it.Int("sync_at"); n > 0 {
		r.SyncAt = time.Unix(0, n).UTC()
	}
	if n := it.Int("protocol_at"); n > 0 {
		r.ProtocolAt = time.Unix(0, n).UTC()
	}
	if h := it.String("header_names"); h != "" {
		r.HeaderNames = strings.Split(h, "\n")
	}
	if sc := it.String("scopes"); sc != "" {
		r.Scopes = strings.Fields(sc)
	}
	return r
}

func (r *record) view(yours bool) Connector {
	c := Connector{Name: r.Name, BaseURL: r.BaseURL, Transport: r.Transport, Status: r.Status, SyncStatus: r.SyncStatus,
		LastError: r.LastError, Version: r.Ver, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Credentials: Credentials{Kind: r.CredKind, HeaderNames: r.HeaderNames, TokenURL: r.TokenURL, ClientID: r.ClientID,
			Scopes: r.Scopes, PrincipalScoped: r.PrincipalScoped, Yours: yours}}
	if !r.SyncedAt.IsZero() {
		t := r.SyncedAt
		c.LastSyncedAt = &t
	}
	return c
}

// ValidateName checks a connector name: 1 to [MaxNameLen] characters, a
// lowercase letter, then lowercase letters, digits and single underscores,
// not ending with one. Double underscores are kept for `<name>__<tool>`, so
// the first one in a proxied name always ends the connector's.
func ValidateName(field, name string) error {
	ok := name != "" && len(name) <= MaxNameLen && 'a' <= name[0] && name[0] <= 'z' && name[len(name)-1] != '_' &&
		!strings.Contains(name, "__")
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_'
	}
	if !ok {
		return fault.Invalid(field, "%q is not a connector name: use 1-%d lowercase letters, digits and single underscores, starting with a letter", name, MaxNameLen)
	}
	return nil
}

func validateTransport(field, t string) error {
	if t != TransportStreamable && t != TransportSSE {
		return fault.Invalid(field, "%q is not a transport: use %s or %s", t, TransportStreamable, TransportSSE)
	}
	return nil
}

// checkURL checks raw with the configured guard; the guard's error is the
// caller's to read.
func (s *Service) checkURL(ctx context.Context, field, raw string) error {
	if raw == "" || len(raw) > MaxURLLen {
		return fault.Invalid(field, "must be a URL of 1-%d characters", MaxURLLen)
	}
	if s.opts.CheckURL == nil || s.opts.HTTPClient == nil {
		return fault.Invalid(field, "connectors are not enabled on this server: no URL guard is configured")
	}
	if _, err := s.opts.CheckURL(ctx, raw); err != nil {
		return fault.Invalid(field, "%s is refused: %v", raw, err)
	}
	return nil
}

// validateSecrets checks credentials given to create or update.
func (s *Service) validateSecrets(ctx context.Context, headers map[string]string, oauth *OAuth) (*secrets, error) {
	if len(headers) > 0 && oauth != nil {
		return nil, fault.Invalid("oauth", "give either headers or oauth, not both")
	}
	if len(headers) > MaxHeaders {
		return nil, fault.Invalid("headers", "has %d entries; at most %d are allowed", len(headers), MaxHeaders)
	}
	clean := map[string]string{}
	for name, v := range headers {
		canon := http.CanonicalHeaderKey(name)
		if !validHeaderName(name) || reservedHeader(canon) {
			return nil, fault.Invalid("headers", "%q is not a header name you may set (token characters only; not Host, Content-*, Mcp-*, Accept or hop-by-hop headers)", name)
		}
		if v == "" || len(v) > MaxHeaderValueLen || strings.ContainsAny(v, "\r\n\x00") {
			return nil, fault.Invalid("headers", "the value of %s must be 1-%d characters without line breaks", canon, MaxHeaderValueLen)
		}
		clean[canon] = v
	}
	if oauth != nil {
		if err := s.checkURL(ctx, "oauth.token_url", oauth.TokenURL); err != nil {
			return nil, err
		}
		if oauth.ClientID == "" || len(oauth.ClientID) > 512 || oauth.ClientSecret == "" || len(oauth.ClientSecret) > 4096 {
			return nil, fault.Invalid("oauth", "client_id (1-512 characters) and client_secret (1-4096 characters) are required")
		}
		if len(oauth.Scopes) > MaxScopes {
			return nil, fault.Invalid("oauth.scopes", "has %d scopes; at most %d are allowed", len(oauth.Scopes), MaxScopes)
		}
		for _, sc := range oauth.Scopes {
			if sc == "" || len(sc) > 256 || strings.ContainsAny(sc, " \t\r\n\"\\") {
				return nil, fault.Invalid("oauth.scopes", "%q is not a scope", sc)
			}
		}
	}
	if len(clean) == 0 {
		clean = nil
	}
	return &secrets{Headers: clean, OAuth: oauth}, nil
}

func validHeaderName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '-' || c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// reservedHeader reports headers the transports set themselves.
func reservedHeader(canon string) bool {
	switch canon {
	case "Host", "Accept", "Connection", "Keep-Alive", "Transfer-Encoding", "Te", "Trailer", "Upgrade",
		"Proxy-Authorization", "Proxy-Connection", "Last-Event-Id":
		return true
	}
	return strings.HasPrefix(canon, "Content-") || strings.HasPrefix(canon, "Mcp-")
}

// describe sets the non-secret description of sec on r.
func (r *record) describe(sec *secrets) {
	r.CredKind, r.HeaderNames, r.TokenURL, r.ClientID, r.Scopes = "none", nil, "", "", nil
	switch {
	case sec == nil:
	case len(sec.Headers) > 0:
		r.CredKind = "headers"
		for name := range sec.Headers {
			r.HeaderNames = append(r.HeaderNames, name)
		}
		slices.Sort(r.HeaderNames)
	case sec.OAuth != nil:
		r.CredKind, r.TokenURL, r.ClientID, r.Scopes = "oauth", sec.OAuth.TokenURL, sec.OAuth.ClientID, sec.OAuth.Scopes
	}
}

// CredentialsPurpose is the "purpose" of every connector credential's
// encryption context: the deployed KMS key's policy allows its use under
// this purpose only.
const CredentialsPurpose = "connector-credentials"

// The keys of a credential's encryption context. The deployed key's policy
// requires purpose, tenant and connector, and allows no other key.
const (
	ContextPurpose   = "purpose"
	ContextTenant    = "tenant"
	ContextConnector = "connector"
	ContextPrincipal = "principal"
)

// encryptionContext names what a sealed credential belongs to.
func encryptionContext(t, name, principal string) map[string]string {
	ec := map[string]string{ContextTenant: t, ContextConnector: name, ContextPurpose: CredentialsPurpose}
	if principal != "" {
		ec[ContextPrincipal] = principal
	}
	return ec
}

func (s *Service) seal(ctx context.Context, sec *secrets, t, name, principal string) ([]byte, error) {
	if sec.empty() {
		return nil, nil
	}
	plain, err := json.Marshal(sec)
	if err != nil {
		return nil, fmt.Errorf("connector: encoding credentials: %w", err)
	}
	sealed, err := s.sealer.Seal(ctx, plain, encryptionContext(t, name, principal))
	clear(plain)
	if err != nil {
		return nil, fault.Unavailable(err, "sealing the credentials of connector %q failed; retry", name)
	}
	return sealed, nil
}

func (s *Service) open(ctx context.Context, sealed []byte, t, name, principal string) (*secrets, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	plain, err := s.sealer.Open(ctx, sealed, encryptionContext(t, name, principal))
	if err != nil {
		return nil, fault.Unavailable(err, "opening the credentials of connector %q failed", name)
	}
	defer clear(plain)
	var sec secrets
	if err := json.Unmarshal(plain, &sec); err != nil {
		return nil, fmt.Errorf("connector: decoding the credentials of %s: %w", name, errors.New("malformed"))
	}
	return &sec, nil
}

// openOnce is [Service.open] for calls: a warm instance opens each sealed
// credential once (on AWS a KMS Decrypt per call otherwise), keeping it by
// its sealed bytes and encryption context, which name exactly one
// plaintext: a changed credential is sealed anew, under a fresh data key,
// and misses. The returned secrets are shared: callers must not change them.
func (s *Service) openOnce(ctx context.Context, sealed []byte, t, name, principal string) (*secrets, error) {
	key := t + "\x00" + name + "\x00" + principal + "\x00" + string(sealed)
	if sec, ok := s.opened.get(key); ok {
		return sec, nil
	}
	sec, err := s.open(ctx, sealed, t, name, principal)
	if err == nil && sec != nil {
		s.opened.put(key, sec)
	}
	return sec, err
}

// traceOf returns the trace of the call ctx serves (package callcontext), or
// a fresh one if it names none that is valid.
func traceOf(ctx context.Context) string {
	if c, ok := callcontext.FromContext(ctx); ok && tenant.IsKeyID(c.TraceID) {
		return c.TraceID
	}
	return audit.NewTraceID()
}

// auditWrite returns the transaction write recording an event for c.
func (s *Service) auditWrite(ctx context.Context, c tenant.Caller, typ, tool string, detail map[string]any) (store.Write, error) {
	it, err := s.audit.Item(audit.Event{Tenant: c.Tenant, TraceID: traceOf(ctx), Type: typ, Tool: tool,
		Principal: c.Principal, Outcome: "ok", Detail: detail})
	if err != nil {
		return store.Write{}, err
	}
	return store.Put(it, store.IfAbsent()), nil
}

// record appends an event; a failed append is logged, since what it records stands.
func (s *Service) record(ctx context.Context, c tenant.Caller, typ, tool, outcome string, detail map[string]any) {
	if err := s.audit.Append(ctx, audit.Event{Tenant: c.Tenant, TraceID: traceOf(ctx), Type: typ, Tool: tool,
		Principal: c.Principal, Outcome: outcome, Detail: detail}); err != nil {
		s.log.ErrorContext(ctx, "audit append failed", "type", typ, "error", err)
	}
}

// unavailable classifies a store failure as retryable, leaving classified errors alone.
func unavailable(err error, format string, args ...any) error {
	if err == nil || fault.KindOf(err) != fault.KindInternal {
		return err
	}
	return fault.Unavailable(err, format, args...)
}

func validateCaller(c tenant.Caller) error {
	if err := tenant.Validate(c.Tenant); err != nil {
		return fault.Invalid("tenant", "%v", err)
	}
	if err := tenant.ValidatePrincipal(c.Principal); err != nil {
		return fault.Invalid("principal", "%v", err)
	}
	return nil
}

// Create serves connector_create: it registers an upstream (not yet
// connected: connector_verify and connector_sync reach it).
func (s *Service) Create(ctx context.Context, c tenant.Caller, in CreateInput) (ConnectorOutput, error) {
	if err := validateCaller(c); err != nil {
		return ConnectorOutput{}, err
	}
	if err := ValidateName("name", in.Name); err != nil {
		return ConnectorOutput{}, err
	}
	if err := validateTransport("transport", in.Transport); err != nil {
		return ConnectorOutput{}, err
	}
	if err := s.checkURL(ctx, "base_url", in.BaseURL); err != nil {
		return ConnectorOutput{}, err
	}
	sec, err := s.validateSecrets(ctx, in.Headers, in.OAuth)
	if err != nil {
		return ConnectorOutput{}, err
	}
	now := s.now().UTC()
	r := &record{Name: in.Name, BaseURL: in.BaseURL, Transport: in.Transport, Status: StatusNeverConnected,
		SyncStatus: SyncNever, Ver: 1, CreatedAt: now, UpdatedAt: now, PrincipalScoped: in.PrincipalScoped}
	writes := []store.Write{}
	yours := false
	if in.PrincipalScoped {
		r.describe(nil)
		if !sec.empty() {
			sealed, err := s.seal(ctx, sec, c.Tenant, in.Name, c.Principal)
			if err != nil {
				return ConnectorOutput{}, err
			}
			writes = append(writes, store.Put(credItem(c.Tenant, in.Name, c.Principal, sealed, 1), store.Condition{}))
			yours = true
		}
	} else {
		r.describe(sec)
		if r.Sealed, err = s.seal(ctx, sec, c.Tenant, in.Name, ""); err != nil {
			return ConnectorOutput{}, err
		}
	}
	aw, err := s.auditWrite(ctx, c, audit.ConnectorCreated, "connector_create", map[string]any{
		"connector": in.Name, "base_url": in.BaseURL, "transport": in.Transport, "credentials": r.CredKind,
		"principal_scoped": in.PrincipalScoped, "version": r.Ver})
	if err != nil {
		return ConnectorOutput{}, err
	}
	writes = append(writes, store.Put(r.item(c.Tenant), store.IfAbsent()), aw,
		store.Put(store.Item{PK: SyncIndexPartition, SK: syncSK(r.SyncAt, c.Tenant, in.Name)}, store.Condition{}),
		store.Put(syncPointer(c.Tenant, in.Name, r.SyncAt.UnixNano()), store.Condition{}))
	err = s.table.Transact(ctx, writes...)
	if errors.Is(err, store.ErrConditionFailed) {
		return ConnectorOutput{}, fault.Conflict(err, "connector %q already exists; update it with connector_update or pick another name", in.Name)
	}
	if err != nil {
		return ConnectorOutput{}, unavailable(err, "creating connector %q failed; retry", in.Name)
	}
	return ConnectorOutput{Connector: r.view(yours)}, nil
}

func credItem(t, name, principal string, sealed []byte, ver int64) store.Item {
	return store.Item{PK: subPK(t, name), SK: credSK(principal), Attrs: store.Attrs{"sealed": sealed, "ver": ver}}
}

// load returns the record of connector name of c's tenant.
func (s *Service) load(ctx context.Context, c tenant.Caller, field, name string) (*record, error) {
	if err := validateCaller(c); err != nil {
		return nil, err
	}
	if err := ValidateName(field, name); err != nil {
		return nil, err
	}
	it, err := s.table.Get(ctx, connPK(c.Tenant), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &fault.Error{Kind: fault.KindNotFound, Field: field,
			Message: fmt.Sprintf("connector %q does not exist; connector_list shows yours", name)}
	}
	if err != nil {
		return nil, unavailable(err, "reading connector %q failed; retry", name)
	}
	return recordFrom(it), nil
}

// ownCred returns the caller's own credential item, if any.
func (s *Service) ownCred(ctx context.Context, c tenant.Caller, name string) (store.Item, bool, error) {
	it, err := s.table.Get(ctx, subPK(c.Tenant, name), credSK(c.Principal))
	if errors.Is(err, store.ErrNotFound) {
		return store.Item{}, false, nil
	}
	if err != nil {
		return store.Item{}, false, unavailable(err, "reading your credentials of connector %q failed; retry", name)
	}
	return it, true, nil
}

// Get serves connector_get.
func (s *Service) Get(ctx context.Context, c tenant.Caller, in NameInput) (ConnectorOutput, error) {
	r, err := s.load(ctx, c, "name", in.Name)
	if err != nil {
		return ConnectorOutput{}, err
	}
	_, yours, err := s.ownCred(ctx, c, in.Name)
	if err != nil {
		return ConnectorOutput{}, err
	}
	return ConnectorOutput{Connector: r.view(yours)}, nil
}

// List serves connector_list: the tenant's connectors by name.
func (s *Service) List(ctx context.Context, c tenant.Caller, in ListInput) (ListOutput, error) {
	if err := validateCaller(c); err != nil {
		return ListOutput{}, err
	}
	if in.Limit < 0 || in.Limit > MaxListLimit {
		return ListOutput{}, fault.Invalid("limit", "%d is outside 1..%d", in.Limit, MaxListLimit)
	}
	if in.Limit == 0 {
		in.Limit = DefaultListLimit
	}
	page, err := s.table.Query(ctx, connPK(c.Tenant), store.Query{Cursor: in.Cursor, Limit: in.Limit})
	if errors.Is(err, store.ErrInvalid) {
		return ListOutput{}, fault.Invalid("cursor", "is not a cursor from a previous connector_list")
	}
	if err != nil {
		return ListOutput{}, unavailable(err, "listing connectors failed; retry")
	}
	out := ListOutput{Connectors: make([]Connector, 0, len(page.Items)), NextCursor: page.Next}
	for _, it := range page.Items {
		out.Connectors = append(out.Connectors, recordFrom(it).view(false))
	}
	return out, nil
}

// Update serves connector_update: a change on the version the caller read.
func (s *Service) Update(ctx context.Context, c tenant.Caller, in UpdateInput) (ConnectorOutput, error) {
	r, err := s.load(ctx, c, "name", in.Name)
	if err != nil {
		return ConnectorOutput{}, err
	}
	if in.Version < 1 {
		return ConnectorOutput{}, fault.Invalid("version", "is required: pass the version connector_get shows")
	}
	if in.Version != r.Ver {
		return ConnectorOutput{}, fault.Conflict(nil, "connector %q is at version %d, not %d: read it again and retry", in.Name, r.Ver, in.Version)
	}
	changed := []string{}
	if in.BaseURL != "" && in.BaseURL != r.BaseURL {
		if err := s.checkURL(ctx, "base_url", in.BaseURL); err != nil {
			return ConnectorOutput{}, err
		}
		r.BaseURL, r.Protocol = in.BaseURL, ""
		changed = append(changed, "base_url")
	}
	if in.Transport != "" && in.Transport != r.Transport {
		if err := validateTransport("transport", in.Transport); err != nil {
			return ConnectorOutput{}, err
		}
		r.Transport, r.Protocol = in.Transport, ""
		changed = append(changed, "transport")
	}
	newCreds := len(in.Headers) > 0 || in.OAuth != nil
	if newCreds && in.ClearCredentials {
		return ConnectorOutput{}, fault.Invalid("clear_credentials", "cannot clear credentials and set new ones in one update")
	}
	var sec *secrets
	if newCreds {
		if sec, err = s.validateSecrets(ctx, in.Headers, in.OAuth); err != nil {
			return ConnectorOutput{}, err
		}
	}
	if in.Disabled != nil {
		switch {
		case *in.Disabled && r.Status != StatusDisabled:
			r.Status = StatusDisabled
			changed = append(changed, "disabled")
		case !*in.Disabled && r.Status == StatusDisabled:
			r.Status = StatusNeverConnected
			changed = append(changed, "enabled")
		}
	}
	prev := r.Ver
	r.Ver++
	r.UpdatedAt = s.now().UTC()
	var writes []store.Write
	yours := false
	own, hasOwn, err := s.ownCred(ctx, c, in.Name)
	if err != nil {
		return ConnectorOutput{}, err
	}
	switch {
	case (newCreds || in.ClearCredentials) && in.PrincipalScoped:
		cond := store.IfAbsent()
		ver := int64(1)
		if hasOwn {
			cond, ver = store.IfEquals("ver", own.Int("ver")), own.Int("ver")+1
		}
		if in.ClearCredentials {
			writes = append(writes, store.Delete(subPK(c.Tenant, in.Name), credSK(c.Principal), store.Condition{}))
			changed = append(changed, "your credentials cleared")
		} else {
			sealed, err := s.seal(ctx, sec, c.Tenant, in.Name, c.Principal)
			if err != nil {
				return ConnectorOutput{}, err
			}
			writes = append(writes, store.Put(credItem(c.Tenant, in.Name, c.Principal, sealed, ver), cond))
			changed = append(changed, "your credentials")
			yours = true
		}
		r.PrincipalScoped = true
	case newCreds || in.ClearCredentials:
		r.describe(sec)
		if r.Sealed, err = s.seal(ctx, sec, c.Tenant, in.Name, ""); err != nil {
			return ConnectorOutput{}, err
		}
		changed = append(changed, "credentials")
		yours = hasOwn
	default:
		yours = hasOwn
	}
	aw, err := s.auditWrite(ctx, c, audit.ConnectorUpdated, "connector_update", map[string]any{
		"connector": in.Name, "changed": changed, "version": r.Ver})
	if err != nil {
		return ConnectorOutput{}, err
	}
	writes = append(writes, store.Put(r.item(c.Tenant), store.IfEquals("ver", prev)), aw)
	err = s.table.Transact(ctx, writes...)
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return ConnectorOutput{}, fault.Conflict(err, "connector %q changed while you updated it: read it again and retry", in.Name)
	}
	if err != nil {
		return ConnectorOutput{}, unavailable(err, "updating connector %q failed; retry", in.Name)
	}
	s.pool.drop(c.Tenant, in.Name)
	return ConnectorOutput{Connector: r.view(yours)}, nil
}

// Delete serves connector_delete: the connector, its cache, policies and
// every principal's credentials.
func (s *Service) Delete(ctx context.Context, c tenant.Caller, in DeleteInput) (DeleteOutput, error) {
	r, err := s.load(ctx, c, "name", in.Name)
	if err != nil {
		return DeleteOutput{}, err
	}
	if in.Version != 0 && in.Version != r.Ver {
		return DeleteOutput{}, fault.Conflict(nil, "connector %q is at version %d, not %d: read it again and retry", in.Name, r.Ver, in.Version)
	}
	at, _, err := s.indexAt(ctx, c.Tenant, in.Name, r)
	if err != nil {
		return DeleteOutput{}, unavailable(err, "deleting connector %q failed; retry", in.Name)
	}
	// The version is bumped first, so that no instance uses the policies
	// and credentials deleted next from what it read of them
	// ([Service.policyOf], [Service.ownCredOf]); and the connector is
	// disabled, so that if the delete stops half-way no call runs with what
	// an instance read of them in between, until it is deleted again.
	prev := r.Ver
	r.Ver++
	r.Status, r.LastError = StatusDisabled, "connector_delete did not finish: delete it again"
	err = s.table.Put(ctx, r.item(c.Tenant), store.IfEquals("ver", prev))
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return DeleteOutput{}, fault.Conflict(err, "connector %q changed while you deleted it: read it again and retry", in.Name)
	}
	if err != nil {
		return DeleteOutput{}, unavailable(err, "deleting connector %q failed; retry", in.Name)
	}
	// The cache, policies and credentials go next, so that a delete that
	// fails half-way leaves the connector listed, to be deleted again; its
	// sync pointer goes last, with it.
	for {
		page, err := s.table.Query(ctx, subPK(c.Tenant, in.Name), store.Query{Limit: store.MaxQueryLimit})
		if err != nil {
			return DeleteOutput{}, unavailable(err, "removing the cache and policies of connector %q failed; read it again and delete it again to finish", in.Name)
		}
		for _, it := range page.Items {
			if it.SK == syncPointerSK {
				continue
			}
			if err := s.table.Delete(ctx, it.PK, it.SK, store.Condition{}); err != nil {
				return DeleteOutput{}, unavailable(err, "removing the cache and policies of connector %q failed; read it again and delete it again to finish", in.Name)
			}
		}
		if page.Next == "" {
			break
		}
	}
	aw, err := s.auditWrite(ctx, c, audit.ConnectorDeleted, "connector_delete", map[string]any{"connector": in.Name, "version": r.Ver})
	if err != nil {
		return DeleteOutput{}, err
	}
	err = s.table.Transact(ctx, store.Delete(connPK(c.Tenant), in.Name, store.IfEquals("ver", r.Ver)), aw,
		store.Delete(SyncIndexPartition, indexSK(at, c.Tenant, in.Name), store.Condition{}),
		store.Delete(subPK(c.Tenant, in.Name), syncPointerSK, store.Condition{}))
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return DeleteOutput{}, fault.Conflict(err, "connector %q changed while you deleted it: read it again and retry", in.Name)
	}
	if err != nil {
		return DeleteOutput{}, unavailable(err, "deleting connector %q failed; retry", in.Name)
	}
	s.pool.drop(c.Tenant, in.Name)
	s.tokens.drop(c.Tenant, in.Name)
	return DeleteOutput{Name: in.Name, Deleted: true}, nil
}
