package connector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Approval policies (seed 001); ASK_USER is the default.
const (
	PolicyAllow = "ALWAYS_ALLOW"
	PolicyDeny  = "ALWAYS_DENY"
	PolicyAsk   = "ASK_USER"
)

// Approval statuses of the page flow.
const (
	ApprovalPending  = "PENDING"
	ApprovalGranted  = "GRANTED"
	ApprovalDenied   = "DENIED"
	ApprovalConsumed = "CONSUMED"
	ApprovalExpired  = "EXPIRED"
)

// ApprovalMetaKey is the _meta key a host's retry carries the approval id
// in, and a result asking for approval names it in.
const ApprovalMetaKey = "switchboard.dev/approval_id"

// ApprovalURLMetaKey is the _meta key a result asking for approval links
// the approval page in: [ApprovalURL], which the gateway makes absolute.
const ApprovalURLMetaKey = "switchboard.dev/approval_url"

// approveField is the id of the elicitation asking for approval.
const approveField = "approve"

// PolicySetInput is the input of approval_policy_set.
type PolicySetInput struct {
	Connector string `json:"connector"`
	Tool      string `json:"tool" jsonschema:"the upstream tool's name, as the connector lists it (without the connector's prefix)"`
	Policy    string `json:"policy" jsonschema:"ALWAYS_ALLOW, ALWAYS_DENY or ASK_USER"`
}

// Policy is one tool's approval policy.
type Policy struct {
	Connector string    `json:"connector"`
	Tool      string    `json:"tool"`
	Policy    string    `json:"policy"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PolicyOutput is the output of approval_policy_set.
type PolicyOutput struct {
	Policy Policy `json:"policy"`
}

// PolicyListInput is the input of approval_policy_list.
type PolicyListInput struct {
	Connector string `json:"connector"`
}

// PolicyListOutput is the output of approval_policy_list: the policies set,
// every other tool of the connector being ASK_USER.
type PolicyListOutput struct {
	Policies []Policy `json:"policies"`
	Default  string   `json:"default"`
}

func policySK(tool string) string { return "policy#" + tool }

// policies returns the policies set on connector name, by tool.
func (s *Service) policies(ctx context.Context, t, name string) (map[string]Policy, error) {
	out := map[string]Policy{}
	for cursor := ""; ; {
		page, err := s.table.Query(ctx, subPK(t, name), store.Query{Prefix: "policy#", Cursor: cursor, Limit: store.MaxQueryLimit})
		if err != nil {
			return nil, unavailable(err, "reading the approval policies of connector %q failed; retry", name)
		}
		for _, it := range page.Items {
			p := policyFrom(name, it)
			out[p.Tool] = p
		}
		if cursor = page.Next; cursor == "" {
			return out, nil
		}
	}
}

func policyFrom(name string, it store.Item) Policy {
	return Policy{Connector: name, Tool: strings.TrimPrefix(it.SK, "policy#"), Policy: it.String("policy"),
		Version: it.Int("ver"), UpdatedAt: time.Unix(0, it.Int("updated_at")).UTC()}
}

// policy returns the policy of one tool: ASK_USER at version 0 if none was set.
func (s *Service) policy(ctx context.Context, t, name, tool string) (Policy, error) {
	it, err := s.table.Get(ctx, subPK(t, name), policySK(tool))
	if errors.Is(err, store.ErrNotFound) {
		return Policy{Connector: name, Tool: tool, Policy: PolicyAsk}, nil
	}
	if err != nil {
		return Policy{}, unavailable(err, "reading the approval policy of %s failed; retry", ProxiedName(name, tool))
	}
	return policyFrom(name, it), nil
}

// policyOf returns the policy of tool on r as [Service.policy] does, read
// once per version of r in a warm instance: every change of a policy bumps
// the connector's version in the same transaction (PolicySet), and so does
// connector_delete before it deletes them, so the version the call read
// names the policies it may use.
func (s *Service) policyOf(ctx context.Context, t string, r *record, tool string) (Policy, error) {
	key := r.versionKey(t) + "\x00" + tool
	if p, ok := s.policiesRead.get(key); ok {
		return p, nil
	}
	p, err := s.policy(ctx, t, r.Name, tool)
	if err == nil {
		s.policiesRead.put(key, p)
	}
	return p, err
}

// PolicySet serves approval_policy_set. Each change bumps the policy's
// version, which every approval is bound to: an approval given under one
// version is refused under the next. It bumps the connector's version too,
// in the same transaction, by which each warm instance keeps the policies
// it read ([Service.policyOf]).
func (s *Service) PolicySet(ctx context.Context, c tenant.Caller, in PolicySetInput) (PolicyOutput, error) {
	if _, err := s.load(ctx, c, "connector", in.Connector); err != nil {
		return PolicyOutput{}, err
	}
	if in.Tool == "" || validProxiedName(ProxiedName(in.Connector, in.Tool)) != nil {
		return PolicyOutput{}, fault.Invalid("tool", "%q is not a tool name this connector could list", in.Tool)
	}
	if !slices.Contains([]string{PolicyAllow, PolicyDeny, PolicyAsk}, in.Policy) {
		return PolicyOutput{}, fault.Invalid("policy", "%q is not a policy: use %s, %s or %s", in.Policy, PolicyAllow, PolicyDeny, PolicyAsk)
	}
	var out Policy
	err := store.Retry(ctx, func() error {
		r, err := s.load(ctx, c, "connector", in.Connector)
		if err != nil {
			return err
		}
		cur, err := s.policy(ctx, c.Tenant, in.Connector, in.Tool)
		if err != nil {
			return err
		}
		cond := store.IfAbsent()
		if cur.Version > 0 {
			cond = store.IfEquals("ver", cur.Version)
		}
		out = Policy{Connector: in.Connector, Tool: in.Tool, Policy: in.Policy, Version: cur.Version + 1, UpdatedAt: s.now().UTC()}
		aw, err := s.auditWrite(ctx, c, audit.ApprovalPolicySet, "approval_policy_set", map[string]any{
			"connector": in.Connector, "tool": in.Tool, "policy": in.Policy, "previous": cur.Policy, "version": out.Version})
		if err != nil {
			return err
		}
		prev := r.Ver
		r.Ver++
		r.PolicyEdits++ // its sessions and tokens stay
		r.UpdatedAt = out.UpdatedAt
		return s.table.Transact(ctx, store.Put(store.Item{PK: subPK(c.Tenant, in.Connector), SK: policySK(in.Tool),
			Attrs: store.Attrs{"policy": in.Policy, "ver": out.Version, "updated_at": out.UpdatedAt.UnixNano()}}, cond),
			store.Put(r.item(c.Tenant), store.IfEquals("ver", prev)), aw)
	})
	if err != nil {
		return PolicyOutput{}, unavailable(err, "setting the policy of %s failed; retry", ProxiedName(in.Connector, in.Tool))
	}
	return PolicyOutput{Policy: out}, nil
}

// PolicyList serves approval_policy_list.
func (s *Service) PolicyList(ctx context.Context, c tenant.Caller, in PolicyListInput) (PolicyListOutput, error) {
	if _, err := s.load(ctx, c, "connector", in.Connector); err != nil {
		return PolicyListOutput{}, err
	}
	m, err := s.policies(ctx, c.Tenant, in.Connector)
	if err != nil {
		return PolicyListOutput{}, err
	}
	out := PolicyListOutput{Policies: make([]Policy, 0, len(m)), Default: PolicyAsk}
	for _, p := range m {
		out.Policies = append(out.Policies, p)
	}
	slices.SortFunc(out.Policies, func(a, b Policy) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// binding is what an approval is bound to, beside the tenant its key
// carries: the principal, the connector, the tool, the arguments' digest
// and the policy's version.
type binding struct {
	Principal string `json:"p"`
	Connector string `json:"c"`
	Tool      string `json:"t"`
	Digest    string `json:"d"`
	PolicyVer int64  `json:"v"`
}

func newBinding(c tenant.Caller, r *record, tool string, args json.RawMessage, p Policy) binding {
	d := elicit.ArgumentsDigest(args)
	return binding{Principal: c.Principal, Connector: r.Name, Tool: tool, Digest: hex.EncodeToString(d[:]), PolicyVer: p.Version}
}

// mismatch says how got differs from want, or "" if it does not.
func (want binding) mismatch(got binding) string {
	switch {
	case got.Principal != want.Principal:
		return "it was given to another principal"
	case got.Connector != want.Connector || got.Tool != want.Tool:
		return fmt.Sprintf("it was given for %s, not %s", ProxiedName(got.Connector, got.Tool), ProxiedName(want.Connector, want.Tool))
	case got.Digest != want.Digest:
		return "it was given for other arguments"
	case got.PolicyVer != want.PolicyVer:
		return "the tool's approval policy changed since"
	}
	return ""
}

// summary returns the arguments in a short, readable form for the person
// asked: canonical JSON cut at 500 characters.
func summary(args json.RawMessage) string {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return truncate(string(b), 500)
}

// truncate cuts s to n characters, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		return string([]rune(s)[:n]) + "…"
	}
	return s
}

// refuse returns the error of a call its approval does not cover.
func refuse(format string, args ...any) error {
	return &fault.Error{Kind: fault.KindInvalid, Field: "approval", Message: fmt.Sprintf(format, args...)}
}

// approve applies tool's policy to a call: nil, nil lets it run; a result
// or an error ends it here.
func (s *Service) approve(ctx context.Context, c tenant.Caller, r *record, tool string, in CallInput) (*mcp.CallToolResult, error) {
	p, err := s.policyOf(ctx, c.Tenant, r, tool)
	if err != nil {
		return nil, err
	}
	switch p.Policy {
	case PolicyAllow:
		return nil, nil
	case PolicyDeny:
		return nil, &fault.Error{Kind: fault.KindInvalid, Field: "name",
			Message: fmt.Sprintf("%s is denied by your tenant's approval policy (ALWAYS_DENY); nothing was called", ProxiedName(r.Name, tool))}
	}
	b := newBinding(c, r, tool, in.Arguments, p)
	if round := elicit.FromContext(ctx); round.Supports(elicit.MethodElicit) && in.ApprovalID == "" {
		return nil, s.approveByElicitation(ctx, c, b, round, in.Arguments)
	}
	if in.ApprovalID != "" {
		return nil, s.consumeApproval(ctx, c, b, in.ApprovalID)
	}
	return s.requestApproval(ctx, c, b, in.Arguments)
}

// elicitState is what the request state of an approval asked by
// elicitation carries: the binding and the id of the approval's item.
type elicitState struct {
	binding
	ID string `json:"id"`
}

// approveByElicitation asks a client that can show forms, and on the
// retry checks its answer: nil lets the call run, exactly once. The
// approval is stored as the page's are, so that one left unanswered is
// found expired by the sweep ([Service.SyncDue]), and its item's status,
// changed by a conditional write, makes it single use whatever path the
// call took.
func (s *Service) approveByElicitation(ctx context.Context, c tenant.Caller, want binding, round *elicit.Round, args json.RawMessage) error {
	yes, answered := round.Confirmed(approveField)
	if !answered {
		// The stored expiry trails the state's (sealed after this returns) by
		// a grace, so that the sweep never expires an approval whose state a
		// client may still answer; a retry with an expired state expires it
		// at once.
		id, err := s.storeApproval(ctx, c, want, flowElicitation, args, s.opts.ApprovalTTL+elicitGrace)
		if err != nil {
			return err
		}
		data, _ := json.Marshal(elicitState{binding: want, ID: id})
		ask := elicit.Ask(approveField, elicit.Confirm(fmt.Sprintf("Allow %s (connector %s) to run with these arguments?\n%s",
			want.Tool, want.Connector, summary(args))))
		ask.State, ask.Once, ask.TTL = data, true, s.opts.ApprovalTTL
		return ask
	}
	var got elicitState
	if err := json.Unmarshal(round.State.Data, &got); err != nil || !tenant.IsKeyID(got.ID) {
		return refuse("the request state does not carry an approval of this server; call again without it to be asked")
	}
	if !s.now().Before(round.State.Expires) {
		if _, err := s.settle(ctx, c, got.ID, ApprovalExpired, audit.ApprovalExpired, ApprovalPending, ApprovalGranted); err != nil {
			return err
		}
		return refuse("the approval expired; call again to be asked again")
	}
	if why := want.mismatch(got.binding); why != "" {
		return refuse("the approval does not cover this call: %s; call again without it to be asked", why)
	}
	status, event := ApprovalConsumed, audit.ApprovalGranted
	if !yes {
		status, event = ApprovalDenied, audit.ApprovalDenied
	}
	settled, err := s.settle(ctx, c, got.ID, status, event, ApprovalPending)
	switch {
	case err != nil:
		return err
	case !settled:
		return refuse("this approval was already used or has expired; call again without it to be asked again")
	case !yes:
		return refuse("you declined %s; nothing was called", ProxiedName(want.Connector, want.Tool))
	}
	return nil
}

// Approval is an approval, as the page shows it.
type Approval struct {
	ID        string    `json:"id"`
	Connector string    `json:"connector"`
	Tool      string    `json:"tool"`
	Arguments string    `json:"arguments" jsonschema:"a summary of the call's arguments"`
	Principal string    `json:"principal"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	URL       string    `json:"url"`
	flow      string
}

// ApprovalURL returns the path of the page that shows approval id. The
// gateway puts the URL its client reached it at in front of it (scheme,
// host, a REST API's stage) in the results that link it: this package
// knows nothing of HTTP.
func ApprovalURL(id string) string { return "/approvals/" + id }

func newApprovalID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func approvalItem(t, id string, b binding, status, flow, args string, ver int64, expires time.Time) store.Item {
	bj, _ := json.Marshal(b)
	return store.Item{PK: approvalPK(t), SK: id, ExpiresAt: expires.Add(time.Hour),
		Attrs: store.Attrs{"binding": string(bj), "status": status, "flow": flow, "arguments": args, "ver": ver, "expires": expires.UnixNano()}}
}

func approvalFrom(it store.Item) (Approval, binding) {
	var b binding
	json.Unmarshal([]byte(it.String("binding")), &b)
	return Approval{ID: it.SK, Connector: b.Connector, Tool: b.Tool, Arguments: it.String("arguments"), Principal: b.Principal,
		Status: it.String("status"), ExpiresAt: time.Unix(0, it.Int("expires")).UTC(), URL: ApprovalURL(it.SK), flow: it.String("flow")}, b
}

// How an approval is asked, as its item and audit events say.
const (
	flowPage        = "page"
	flowElicitation = "elicitation"
)

// elicitGrace is how long the item of an approval asked by elicitation
// outlives its request state.
const elicitGrace = 5 * time.Second

// expiryPrefix begins the keys of the approvals' expiry index, which shares
// the scheduled sync's partition (its keys begin with a digit, these never):
// `approval#<expires, 19 digits>#<tenant>#<id>`, one item per approval,
// written with it, read and removed by the sweep ([Service.SyncDue]) once
// the approval has lapsed.
const expiryPrefix = "approval#"

func expirySK(at int64, t, id string) string {
	return fmt.Sprintf("%s%019d#%s#%s", expiryPrefix, at, t, id)
}

// storeApproval records a pending approval of b, its ApprovalRequested
// event, its count and its entry in the expiry index, in one transaction,
// and returns its id.
func (s *Service) storeApproval(ctx context.Context, c tenant.Caller, b binding, flow string, args json.RawMessage, ttl time.Duration) (string, error) {
	id := newApprovalID()
	expires := s.now().Add(ttl)
	err := store.Retry(ctx, func() error {
		aw, err := s.auditWrite(ctx, c, audit.ApprovalRequested, ProxiedName(b.Connector, b.Tool), approvalDetail(id, b, flow))
		if err != nil {
			return err
		}
		count, err := s.countWrite(ctx, c.Tenant, b.Connector, ApprovalPending)
		if err != nil {
			return err
		}
		return s.table.Transact(ctx, store.Put(approvalItem(c.Tenant, id, b, ApprovalPending, flow, summary(args), 1, expires), store.IfAbsent()), aw, count,
			store.Put(store.Item{PK: SyncIndexPartition, SK: expirySK(expires.UnixNano(), c.Tenant, id), ExpiresAt: expires.Add(time.Hour)}, store.Condition{}))
	})
	if err != nil {
		return "", unavailable(err, "recording the approval request failed; retry")
	}
	s.stats.approval(c.Tenant, b.Connector, ApprovalPending)
	return id, nil
}

// approvalDetail is the detail of an approval's audit events.
func approvalDetail(id string, b binding, flow string) map[string]any {
	return map[string]any{"connector": b.Connector, "tool": b.Tool, "approval_id": id, "policy_version": b.PolicyVer, "flow": flow}
}

// requestApproval records a pending approval and answers the tool error
// that links to its page.
func (s *Service) requestApproval(ctx context.Context, c tenant.Caller, b binding, args json.RawMessage) (*mcp.CallToolResult, error) {
	id, err := s.storeApproval(ctx, c, b, flowPage, args, s.opts.PageApprovalTTL)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Approval required: %s (connector %s) needs your approval before it runs. Open %s to approve or deny "+
		"(within %v), then call again with the same arguments and _meta {%q: %q}.",
		b.Tool, b.Connector, ApprovalURL(id), s.opts.PageApprovalTTL, ApprovalMetaKey, id)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta: mcp.Meta{ApprovalMetaKey: id, ApprovalURLMetaKey: ApprovalURL(id)}}, nil
}

// loadApproval reads approval id of c's tenant, refusing another principal's.
func (s *Service) loadApproval(ctx context.Context, c tenant.Caller, id string) (store.Item, Approval, binding, error) {
	if !tenant.IsKeyID(id) {
		return store.Item{}, Approval{}, binding{}, fault.Invalid("approval_id", "%q is not an approval id", id)
	}
	it, err := s.table.Get(ctx, approvalPK(c.Tenant), id)
	if errors.Is(err, store.ErrNotFound) {
		return it, Approval{}, binding{}, &fault.Error{Kind: fault.KindNotFound, Field: "approval_id", Message: fmt.Sprintf("approval %q does not exist or has expired", id)}
	}
	if err != nil {
		return it, Approval{}, binding{}, unavailable(err, "reading approval %q failed; retry", id)
	}
	a, b := approvalFrom(it)
	if b.Principal != c.Principal {
		return it, Approval{}, binding{}, refuse("approval %q was asked by another principal; only they may use or decide it", id)
	}
	return it, a, b, nil
}

// consumeApproval checks the approval a retry carries and spends it: nil
// lets the call run, exactly once.
func (s *Service) consumeApproval(ctx context.Context, c tenant.Caller, want binding, id string) error {
	it, a, got, err := s.loadApproval(ctx, c, id)
	if err != nil {
		return err
	}
	if why := want.mismatch(got); why != "" {
		return refuse("approval %q does not cover this call: %s; call again without it to be asked", id, why)
	}
	switch {
	case a.Status == ApprovalConsumed:
		return refuse("approval %q was already used; call again without it to be asked again", id)
	case a.Status == ApprovalDenied:
		return refuse("approval %q was denied; nothing was called", id)
	case !s.now().Before(a.ExpiresAt):
		if _, err := s.settle(ctx, c, id, ApprovalExpired, audit.ApprovalExpired, ApprovalPending, ApprovalGranted); err != nil {
			return err
		}
		return refuse("approval %q expired at %s; call again without it to be asked again", id, a.ExpiresAt.Format(time.RFC3339))
	case a.Status == ApprovalPending:
		return refuse("approval %q is still waiting for a decision: open %s", id, ApprovalURL(id))
	}
	spent := approvalItem(c.Tenant, id, got, ApprovalConsumed, a.flow, a.Arguments, it.Int("ver")+1, a.ExpiresAt)
	err = s.table.Put(ctx, spent, store.IfEquals("ver", it.Int("ver")))
	if errors.Is(err, store.ErrConditionFailed) {
		return refuse("approval %q was already used; call again without it to be asked again", id)
	}
	if err != nil {
		return unavailable(err, "recording the use of approval %q failed; retry", id)
	}
	return nil
}

// settle moves approval id of c's tenant from one of the statuses from to
// status to, with its audit event and its count, in one transaction
// conditional on the version read: of any number of concurrent settlers
// (sweeps, retries, the page) exactly one records it. It reports whether
// this call did; false, nil when the approval is gone or in another status.
func (s *Service) settle(ctx context.Context, c tenant.Caller, id, to, event string, from ...string) (bool, error) {
	var settled *binding
	err := store.Retry(ctx, func() error {
		it, err := s.table.Get(ctx, approvalPK(c.Tenant), id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		a, b := approvalFrom(it)
		if !slices.Contains(from, a.Status) {
			return nil
		}
		aw, err := s.auditWrite(ctx, c, event, ProxiedName(b.Connector, b.Tool), approvalDetail(id, b, a.flow))
		if err != nil {
			return err
		}
		count, err := s.countWrite(ctx, c.Tenant, b.Connector, to)
		if err != nil {
			return err
		}
		next := approvalItem(c.Tenant, id, b, to, a.flow, a.Arguments, it.Int("ver")+1, a.ExpiresAt)
		if err := s.table.Transact(ctx, store.Put(next, store.IfEquals("ver", it.Int("ver"))), aw, count); err != nil {
			return err
		}
		settled = &b
		return nil
	})
	if err != nil {
		return false, unavailable(err, "recording approval %q failed; retry", id)
	}
	if settled == nil {
		return false, nil
	}
	s.stats.approval(c.Tenant, settled.Connector, to)
	return true, nil
}

// ApprovalInput names an approval of the page flow.
type ApprovalInput struct {
	ID string `json:"id"`
}

// ApprovalOutput is an approval, for the page.
type ApprovalOutput struct {
	Approval Approval `json:"approval"`
}

// ApprovalGet returns approval id, for the page that shows it.
func (s *Service) ApprovalGet(ctx context.Context, c tenant.Caller, in ApprovalInput) (ApprovalOutput, error) {
	_, a, _, err := s.loadApproval(ctx, c, in.ID)
	if err != nil {
		return ApprovalOutput{}, err
	}
	if (a.Status == ApprovalPending || a.Status == ApprovalGranted) && !s.now().Before(a.ExpiresAt) {
		if _, err := s.settle(ctx, c, a.ID, ApprovalExpired, audit.ApprovalExpired, ApprovalPending, ApprovalGranted); err != nil {
			return ApprovalOutput{}, err
		}
		a.Status = ApprovalExpired
	}
	return ApprovalOutput{Approval: a}, nil
}

// Approve grants approval id (the page's Approve button).
func (s *Service) Approve(ctx context.Context, c tenant.Caller, in ApprovalInput) (ApprovalOutput, error) {
	return s.decide(ctx, c, in.ID, ApprovalGranted)
}

// Deny denies approval id (the page's Deny button).
func (s *Service) Deny(ctx context.Context, c tenant.Caller, in ApprovalInput) (ApprovalOutput, error) {
	return s.decide(ctx, c, in.ID, ApprovalDenied)
}

func (s *Service) decide(ctx context.Context, c tenant.Caller, id, status string) (ApprovalOutput, error) {
	_, a, _, err := s.loadApproval(ctx, c, id)
	if err != nil {
		return ApprovalOutput{}, err
	}
	if a.Status != ApprovalPending {
		return ApprovalOutput{}, fault.Conflict(nil, "approval %q was already decided (%s)", id, a.Status)
	}
	if !s.now().Before(a.ExpiresAt) {
		if _, err := s.settle(ctx, c, id, ApprovalExpired, audit.ApprovalExpired, ApprovalPending); err != nil {
			return ApprovalOutput{}, err
		}
		return ApprovalOutput{}, refuse("approval %q expired at %s; call the tool again to be asked again", id, a.ExpiresAt.Format(time.RFC3339))
	}
	event := audit.ApprovalGranted
	if status == ApprovalDenied {
		event = audit.ApprovalDenied
	}
	settled, err := s.settle(ctx, c, id, status, event, ApprovalPending)
	if err != nil {
		return ApprovalOutput{}, err
	}
	if !settled {
		return ApprovalOutput{}, fault.Conflict(nil, "approval %q was decided meanwhile; reload the page", id)
	}
	a.Status = status
	return ApprovalOutput{Approval: a}, nil
}

// statsSK is the key, under a connector's, of its approval counts: every
// instance's, durable, changed in the transaction that changes an approval.
const statsSK = "stats"

// approvalCount names the count of an approval's status.
func approvalCount(status string) string {
	switch status {
	case ApprovalPending:
		return "requested"
	case ApprovalGranted, ApprovalConsumed:
		return "granted"
	case ApprovalDenied:
		return "denied"
	}
	return "expired"
}

// countWrite returns the write adding one to connector name's count of
// approvals in status, conditional on the counts' version.
func (s *Service) countWrite(ctx context.Context, t, name, status string) (store.Write, error) {
	it, err := s.table.Get(ctx, subPK(t, name), statsSK)
	cond := store.IfEquals("ver", it.Int("ver"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		it, cond = store.Item{}, store.IfAbsent()
	case err != nil:
		return store.Write{}, err
	}
	attrs := store.Attrs{"ver": it.Int("ver") + 1}
	for _, k := range []string{"requested", "granted", "denied", "expired"} {
		attrs[k] = it.Int(k)
	}
	attrs[approvalCount(status)] = it.Int(approvalCount(status)) + 1
	return store.Put(store.Item{PK: subPK(t, name), SK: statsSK, Attrs: attrs}, cond), nil
}

// approvalCounts reads connector name's approval counts.
func (s *Service) approvalCounts(ctx context.Context, t, name string) (ApprovalCounts, error) {
	it, err := s.table.Get(ctx, subPK(t, name), statsSK)
	if errors.Is(err, store.ErrNotFound) {
		return ApprovalCounts{}, nil
	}
	if err != nil {
		return ApprovalCounts{}, unavailable(err, "reading the approval counts of connector %q failed; retry", name)
	}
	return ApprovalCounts{Requested: it.Int("requested"), Granted: it.Int("granted"), Denied: it.Int("denied"), Expired: it.Int("expired")}, nil
}

// ExpireDue records every approval whose expiry has passed and that is
// still pending or granted as expired, with its ApprovalExpired event and
// count, whether or not anyone looks at it again: it reads the expiry index
// up to now, settles each entry's approval as [SchedulerPrincipal] of its
// tenant (a conditional write, so that of a concurrent sweep, retry or page
// view exactly one records it) and removes the entry. It returns how many
// it recorded; an entry it could not settle stays for the next run.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	to := fmt.Sprintf("%s%019d#~", expiryPrefix, s.now().UnixNano())
	expired := 0
	for cursor := ""; ; {
		page, err := s.index.Query(ctx, SyncIndexPartition, store.Query{From: expiryPrefix, To: to, Cursor: cursor, Limit: syncPage})
		if err != nil {
			return expired, unavailable(err, "reading the approvals' expiry index failed; retry")
		}
		for _, it := range page.Items {
			if ctx.Err() != nil {
				return expired, ctx.Err()
			}
			parts := strings.SplitN(strings.TrimPrefix(it.SK, expiryPrefix), "#", 3)
			if len(parts) != 3 {
				s.log.ErrorContext(ctx, "the approvals' expiry index holds a malformed key", "key", it.SK)
				continue
			}
			c := tenant.Caller{Tenant: parts[1], Principal: SchedulerPrincipal}
			// The sweep acts for the approval's tenant, as the scheduled
			// sync does (package tenantcreds reads the call's caller).
			call, _ := callcontext.FromContext(ctx)
			call.Caller = c
			settled, err := s.settle(callcontext.NewContext(ctx, call), c, parts[2], ApprovalExpired, audit.ApprovalExpired, ApprovalPending, ApprovalGranted)
			if err != nil {
				s.log.WarnContext(ctx, "expiring an approval failed; the next sweep retries", "tenant", c.Tenant, "approval_id", parts[2], "error", err)
				continue
			}
			if settled {
				expired++
			}
			if err := s.index.Delete(ctx, SyncIndexPartition, it.SK, store.Condition{}); err != nil {
				s.log.WarnContext(ctx, "removing an approval's expiry entry failed", "key", it.SK, "error", err)
			}
		}
		if cursor = page.Next; cursor == "" {
			return expired, nil
		}
	}
}
