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

// PolicySet serves approval_policy_set. Each change bumps the policy's
// version, which every approval is bound to: an approval given under one
// version is refused under the next.
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
		return s.table.Transact(ctx, store.Put(store.Item{PK: subPK(c.Tenant, in.Connector), SK: policySK(in.Tool),
			Attrs: store.Attrs{"policy": in.Policy, "ver": out.Version, "updated_at": out.UpdatedAt.UnixNano()}}, cond), aw)
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
	p, err := s.policy(ctx, c.Tenant, r.Name, tool)
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

// approveByElicitation asks a client that can show forms, and on the
// retry checks its answer: nil lets the call run, exactly once.
func (s *Service) approveByElicitation(ctx context.Context, c tenant.Caller, want binding, round *elicit.Round, args json.RawMessage) error {
	detail := map[string]any{"connector": want.Connector, "tool": want.Tool, "policy_version": want.PolicyVer, "flow": "elicitation"}
	yes, answered := round.Confirmed(approveField)
	if !answered {
		data, _ := json.Marshal(want)
		ask := elicit.Ask(approveField, elicit.Confirm(fmt.Sprintf("Allow %s (connector %s) to run with these arguments?\n%s",
			want.Tool, want.Connector, summary(args))))
		ask.State, ask.Once, ask.TTL = data, true, s.opts.ApprovalTTL
		s.record(ctx, c, audit.ApprovalRequested, ProxiedName(want.Connector, want.Tool), "ok", detail)
		s.stats.approval(c.Tenant, want.Connector, ApprovalPending)
		return ask
	}
	var got binding
	if err := json.Unmarshal(round.State.Data, &got); err != nil {
		return refuse("the request state does not carry an approval of this server; call again without it to be asked")
	}
	if !s.now().Before(round.State.Expires) {
		s.decided(ctx, c, want, audit.ApprovalExpired, ApprovalExpired, detail)
		return refuse("the approval expired; call again to be asked again")
	}
	if why := want.mismatch(got); why != "" {
		return refuse("the approval does not cover this call: %s; call again without it to be asked", why)
	}
	if !yes {
		s.decided(ctx, c, want, audit.ApprovalDenied, ApprovalDenied, detail)
		return refuse("you declined %s; nothing was called", ProxiedName(want.Connector, want.Tool))
	}
	// The gateway spends a single-use state when a function serves the call
	// through lambdafn; this record makes the approval single use whatever
	// the path, so that of any number of retries exactly one runs.
	err := s.table.Put(ctx, store.Item{PK: approvalPK(c.Tenant), SK: "e#" + round.State.ID,
		Attrs: store.Attrs{"spent_at": s.now().UnixNano()}, ExpiresAt: round.State.Expires.Add(time.Hour)}, store.IfAbsent())
	if errors.Is(err, store.ErrConditionFailed) {
		return refuse("this approval was already used; call again without it to be asked again")
	}
	if err != nil {
		return unavailable(err, "recording the approval failed; retry")
	}
	s.decided(ctx, c, want, audit.ApprovalGranted, ApprovalGranted, detail)
	return nil
}

// decided audits and counts a decision on an approval.
func (s *Service) decided(ctx context.Context, c tenant.Caller, b binding, event, status string, detail map[string]any) {
	s.record(ctx, c, event, ProxiedName(b.Connector, b.Tool), "ok", detail)
	s.stats.approval(c.Tenant, b.Connector, status)
}

// Approval is a pending approval of the page flow, as the page shows it.
type Approval struct {
	ID        string    `json:"id"`
	Connector string    `json:"connector"`
	Tool      string    `json:"tool"`
	Arguments string    `json:"arguments" jsonschema:"a summary of the call's arguments"`
	Principal string    `json:"principal"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	URL       string    `json:"url"`
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

func approvalItem(t, id string, b binding, status, args string, ver int64, expires time.Time) store.Item {
	bj, _ := json.Marshal(b)
	return store.Item{PK: approvalPK(t), SK: id, ExpiresAt: expires.Add(time.Hour),
		Attrs: store.Attrs{"binding": string(bj), "status": status, "arguments": args, "ver": ver, "expires": expires.UnixNano()}}
}

func approvalFrom(it store.Item) (Approval, binding) {
	var b binding
	json.Unmarshal([]byte(it.String("binding")), &b)
	return Approval{ID: it.SK, Connector: b.Connector, Tool: b.Tool, Arguments: it.String("arguments"), Principal: b.Principal,
		Status: it.String("status"), ExpiresAt: time.Unix(0, it.Int("expires")).UTC(), URL: ApprovalURL(it.SK)}, b
}

// requestApproval records a pending approval and answers the tool error
// that links to its page.
func (s *Service) requestApproval(ctx context.Context, c tenant.Caller, b binding, args json.RawMessage) (*mcp.CallToolResult, error) {
	id := newApprovalID()
	expires := s.now().Add(s.opts.PageApprovalTTL)
	aw, err := s.auditWrite(ctx, c, audit.ApprovalRequested, ProxiedName(b.Connector, b.Tool), map[string]any{
		"connector": b.Connector, "tool": b.Tool, "policy_version": b.PolicyVer, "flow": "page", "approval_id": id})
	if err != nil {
		return nil, err
	}
	if err := s.table.Transact(ctx, store.Put(approvalItem(c.Tenant, id, b, ApprovalPending, summary(args), 1, expires), store.IfAbsent()), aw); err != nil {
		return nil, unavailable(err, "recording the approval request failed; retry")
	}
	s.stats.approval(c.Tenant, b.Connector, ApprovalPending)
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
	detail := map[string]any{"connector": want.Connector, "tool": want.Tool, "approval_id": id, "flow": "page"}
	if why := want.mismatch(got); why != "" {
		return refuse("approval %q does not cover this call: %s; call again without it to be asked", id, why)
	}
	switch {
	case a.Status == ApprovalConsumed:
		return refuse("approval %q was already used; call again without it to be asked again", id)
	case a.Status == ApprovalDenied:
		return refuse("approval %q was denied; nothing was called", id)
	case !s.now().Before(a.ExpiresAt):
		s.expire(ctx, c, it, want, detail)
		return refuse("approval %q expired at %s; call again without it to be asked again", id, a.ExpiresAt.Format(time.RFC3339))
	case a.Status == ApprovalPending:
		return refuse("approval %q is still waiting for a decision: open %s", id, ApprovalURL(id))
	}
	spent := approvalItem(c.Tenant, id, got, ApprovalConsumed, a.Arguments, it.Int("ver")+1, a.ExpiresAt)
	err = s.table.Put(ctx, spent, store.IfEquals("ver", it.Int("ver")))
	if errors.Is(err, store.ErrConditionFailed) {
		return refuse("approval %q was already used; call again without it to be asked again", id)
	}
	if err != nil {
		return unavailable(err, "recording the use of approval %q failed; retry", id)
	}
	return nil
}

// expire marks a pending or granted approval found past its expiry, once.
func (s *Service) expire(ctx context.Context, c tenant.Caller, it store.Item, b binding, detail map[string]any) {
	a, _ := approvalFrom(it)
	if a.Status != ApprovalPending && a.Status != ApprovalGranted {
		return
	}
	err := s.table.Put(ctx, approvalItem(c.Tenant, a.ID, b, ApprovalExpired, a.Arguments, it.Int("ver")+1, a.ExpiresAt), store.IfEquals("ver", it.Int("ver")))
	if err == nil {
		s.decided(ctx, c, b, audit.ApprovalExpired, ApprovalExpired, detail)
	}
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
	it, a, b, err := s.loadApproval(ctx, c, in.ID)
	if err != nil {
		return ApprovalOutput{}, err
	}
	if (a.Status == ApprovalPending || a.Status == ApprovalGranted) && !s.now().Before(a.ExpiresAt) {
		s.expire(ctx, c, it, b, map[string]any{"connector": b.Connector, "tool": b.Tool, "approval_id": a.ID, "flow": "page"})
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
	it, a, b, err := s.loadApproval(ctx, c, id)
	if err != nil {
		return ApprovalOutput{}, err
	}
	detail := map[string]any{"connector": b.Connector, "tool": b.Tool, "approval_id": id, "flow": "page"}
	if a.Status != ApprovalPending {
		return ApprovalOutput{}, fault.Conflict(nil, "approval %q was already decided (%s)", id, a.Status)
	}
	if !s.now().Before(a.ExpiresAt) {
		s.expire(ctx, c, it, b, detail)
		return ApprovalOutput{}, refuse("approval %q expired at %s; call the tool again to be asked again", id, a.ExpiresAt.Format(time.RFC3339))
	}
	event := audit.ApprovalGranted
	if status == ApprovalDenied {
		event = audit.ApprovalDenied
	}
	aw, err := s.auditWrite(ctx, c, event, ProxiedName(b.Connector, b.Tool), detail)
	if err != nil {
		return ApprovalOutput{}, err
	}
	err = s.table.Transact(ctx, store.Put(approvalItem(c.Tenant, id, b, status, a.Arguments, it.Int("ver")+1, a.ExpiresAt), store.IfEquals("ver", it.Int("ver"))), aw)
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return ApprovalOutput{}, fault.Conflict(err, "approval %q was decided meanwhile; reload the page", id)
	}
	if err != nil {
		return ApprovalOutput{}, unavailable(err, "recording the decision on approval %q failed; retry", id)
	}
	s.stats.approval(c.Tenant, b.Connector, status)
	a.Status = status
	return ApprovalOutput{Approval: a}, nil
}
