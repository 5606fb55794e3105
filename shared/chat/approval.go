package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A connector tool whose policy is ASK_USER answers the chat's call with a
// tool error linking the approval page (the chat's caller is a client
// without elicitation). The chat remembers that call in the thread, as an
// internal tool message naming the approval, the tool and its exact
// arguments; the next turn reads the approval's status and, once granted,
// makes that call once with the approval's id, so the connectors' binding
// (tenant, principal, tool, arguments digest, policy version) and
// single-use checks decide whether it runs. A denied, expired or used
// approval is reported and the call is not made; one still waiting stays
// remembered.

// The statuses of a connector approval (connector.Approval*), as
// approval_get reports them.
const (
	approvalPending  = "PENDING"
	approvalGranted  = "GRANTED"
	approvalDenied   = "DENIED"
	approvalConsumed = "CONSUMED"
	approvalExpired  = "EXPIRED"
)

// ApprovalRecord names the internal tool messages in which a thread keeps
// its connector calls waiting for approval, and how each ended.
const ApprovalRecord = "connector_approval"

// The statuses of an [ApprovalRecord] message: pending, then how the
// remembered call ended.
const (
	recordPending     = "pending"
	recordCalled      = "called"
	recordDenied      = "denied"
	recordExpired     = "expired"
	recordUsed        = "already_used"
	recordUnavailable = "unavailable"
)

// Approvals is a [Tools] that can carry a page approval into a later turn.
type Approvals interface {
	// ApprovalStatus returns the status of approval id of c (PENDING,
	// GRANTED, DENIED, CONSUMED or EXPIRED); an error of kind not found
	// when it no longer exists.
	ApprovalStatus(ctx context.Context, c tenant.Caller, id string) (string, error)
	// CallApproved calls the connector tool name with args and approval id,
	// which the connectors spend on this call if it covers it.
	CallApproved(ctx context.Context, c tenant.Caller, name string, args json.RawMessage, id string) (ToolResult, error)
}

// approvalCall is a connector call waiting for approval, as an
// [ApprovalRecord] message keeps it.
type approvalCall struct {
	ID        string          `json:"approval_id"`
	URL       string          `json:"approval_url"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Status    string          `json:"status"`
}

// pendingApprovals returns the calls msgs remember as waiting for approval
// and no later record settles, oldest first.
func pendingApprovals(msgs []memory.Message) []approvalCall {
	var out []approvalCall
	for _, m := range msgs {
		var a approvalCall
		if !m.Internal || m.Name != ApprovalRecord || json.Unmarshal([]byte(m.Content), &a) != nil || a.ID == "" {
			continue
		}
		i := 0
		for _, p := range out {
			if p.ID != a.ID {
				out[i] = p
				i++
			}
		}
		out = out[:i]
		if a.Status == recordPending && a.Tool != "" {
			out = append(out, a)
		}
	}
	return out
}

// rememberApproval records in the thread a call that answered asking for
// approval, with its exact arguments, and notes it for the answer.
func (t *turn) rememberApproval(call provider.ToolCall, res ToolResult) {
	if res.ApprovalID == "" {
		return
	}
	a := approvalCall{ID: res.ApprovalID, URL: res.ApprovalURL, Tool: call.Name, Arguments: call.Arguments, Status: recordPending}
	if a.URL == "" {
		a.URL = "/approvals/" + a.ID
	}
	t.waiting = append(t.waiting, a)
	t.recordApproval(a)
}

// recordApproval appends a's record to the turn's, if it fits a message
// whole (a cut record could not be read back, so the call is then not
// remembered).
func (t *turn) recordApproval(a approvalCall) {
	body, err := json.Marshal(a)
	if err != nil || len([]rune(string(body))) > memory.MaxContentChars {
		return
	}
	t.record = append(t.record, memory.Turn{Role: provider.RoleTool, ToolCallID: "approval_" + a.ID, Name: ApprovalRecord, Content: string(body), Internal: true})
}

// resumeApprovals settles the calls earlier turns left waiting for
// approval: a granted one is made, once, with its approval and its exact
// arguments, and the model reads its result; a denied, expired or used one
// is reported without calling; one still waiting stays remembered, and the
// model is told not to ask again.
func (s *Service) resumeApprovals(ctx context.Context, t *turn) {
	ap, ok := s.opts.Tools.(Approvals)
	if !ok {
		return
	}
	for _, a := range t.pending {
		status, err := ap.ApprovalStatus(ctx, t.caller, a.ID)
		var res ToolResult
		switch {
		case err != nil && fault.KindOf(err) != fault.KindNotFound:
			s.log.WarnContext(ctx, "reading a pending approval failed; the next turn reads it again", "approval_id", a.ID, "error", err, "trace_id", traceOf(ctx))
			continue
		case status == approvalPending:
			t.waiting = append(t.waiting, a)
			continue
		case err != nil || status == approvalExpired:
			a.Status = recordExpired
			res = ToolResult{Text: fmt.Sprintf("The approval asked at %s expired before it was given; %s was not called. Ask for it again to be asked anew.", a.URL, a.Tool), IsError: true}
		case status == approvalDenied:
			a.Status = recordDenied
			res = ToolResult{Text: fmt.Sprintf("The user denied this call on the approval page (%s); %s was not called.", a.URL, a.Tool), IsError: true}
		case status == approvalConsumed:
			a.Status = recordUsed
			res = ToolResult{Text: fmt.Sprintf("The approval asked at %s was already used; %s was not called again.", a.URL, a.Tool), IsError: true}
		case status != approvalGranted:
			s.log.WarnContext(ctx, "a pending approval has an unknown status; leaving it", "approval_id", a.ID, "status", status, "trace_id", traceOf(ctx))
			continue
		case !t.offers(a.Tool):
			a.Status = recordUnavailable
			res = ToolResult{Text: fmt.Sprintf("%s is no longer a tool available in this conversation; it was not called.", a.Tool), IsError: true}
		default:
			a.Status = recordCalled
			res = s.callToolWith(t, a.Tool, a.Arguments, func() (ToolResult, error) {
				return ap.CallApproved(ctx, t.caller, a.Tool, a.Arguments, a.ID)
			})
		}
		t.resumed(a, res)
	}
	if len(t.waiting) > 0 {
		t.system += "\n\n" + waitingNote(t.waiting)
	}
}

// offlineResumed answers an offline turn with the results of the calls
// earlier turns left waiting for approval that this turn settles, if any;
// false leaves the turn to the offline route.
func (s *Service) offlineResumed(ctx context.Context, t *turn) bool {
	if len(t.pending) == 0 {
		return false
	}
	s.listTools(ctx, t)
	from := len(t.messages)
	s.resumeApprovals(ctx, t)
	var parts []string
	for _, m := range t.messages[from:] {
		if m.Role == provider.RoleTool {
			parts = append(parts, fmt.Sprintf(offlineTool, m.Name)+m.Content)
		}
	}
	if len(parts) == 0 {
		t.tools = nil // the offline route lists them again if it calls one
		return false
	}
	t.out.Route = append(t.out.Route, RouteAnswer)
	t.out.Answer = strings.Join(parts, "\n\n")
	return true
}

// resumed adds a settled approval's call and its result to the turn, as the
// model's call would be, and records how it ended.
func (t *turn) resumed(a approvalCall, res ToolResult) {
	call := provider.ToolCall{ID: "approval_" + a.ID, Name: a.Tool, Arguments: a.Arguments}
	t.messages = append(t.messages, provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call}},
		provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: res.Text, IsError: res.IsError})
	calls, _ := json.Marshal([]provider.ToolCall{call})
	t.record = append(t.record, memory.Turn{Role: provider.RoleAssistant, ToolCalls: calls},
		memory.Turn{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: res.Text})
	t.out.Route = append(t.out.Route, RouteTools)
	t.recordApproval(approvalCall{ID: a.ID, URL: a.URL, Tool: a.Tool, Status: a.Status})
	t.rememberApproval(call, res)
}

// waitingNote tells the model which calls wait for the user's approval.
func waitingNote(waiting []approvalCall) string {
	var b strings.Builder
	b.WriteString("These tool calls wait for the user's approval; do not call them again, tell the user to approve or deny them at their page:")
	for _, a := range waiting {
		b.WriteString("\n- " + a.Tool + " at " + a.URL)
	}
	return b.String()
}

// withApprovalNotes is answer with a plain sentence for each call waiting
// for approval whose page the answer does not already link.
func withApprovalNotes(answer string, waiting []approvalCall) string {
	for _, a := range waiting {
		if strings.Contains(answer, a.URL) {
			continue
		}
		if answer != "" {
			answer += "\n\n"
		}
		answer += fmt.Sprintf("Approval needed: %s runs only after you approve it at %s. Approve or deny it there, then send your next message and I will run it exactly as asked.", a.Tool, a.URL)
	}
	return answer
}
