package chat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// approvalTools offers one connector tool whose every plain call asks for
// approval id, as connector_call answers an ASK_USER tool; status is what
// approval_get would say of it (empty: it no longer exists). The gateway's
// chat tests run the same path against the real connectors and upstream.
type approvalTools struct {
	id, status string
	approved   []string // the calls made with the approval: name, arguments, id
}

const testApproval = "0123456789abcdef0123456789abcdef"

func (a *approvalTools) List(context.Context, tenant.Caller) ([]Tool, error) {
	return []Tool{{Group: ToolsConnectors, ToolSpec: provider.ToolSpec{Name: "pay__charge", Description: "Charge the card.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`)}}}, nil
}

func (a *approvalTools) Call(context.Context, tenant.Caller, string, json.RawMessage) (ToolResult, error) {
	return ToolResult{Text: "Approval required: open /approvals/" + a.id, IsError: true, ApprovalID: a.id, ApprovalURL: "/approvals/" + a.id}, nil
}

func (a *approvalTools) ApprovalStatus(_ context.Context, _ tenant.Caller, id string) (string, error) {
	if a.status == "" || id != a.id {
		return "", &fault.Error{Kind: fault.KindNotFound, Message: "approval " + id + " does not exist or has expired"}
	}
	return a.status, nil
}

func (a *approvalTools) CallApproved(_ context.Context, _ tenant.Caller, name string, args json.RawMessage, id string) (ToolResult, error) {
	a.approved = append(a.approved, name+" "+string(args)+" "+id)
	a.status = approvalConsumed
	return ToolResult{Text: "charged"}, nil
}

func TestAnOfflineThreadCarriesAnApprovalIntoItsNextTurn(t *testing.T) {
	const prefix = "No language model is configured, so this answer is assembled without one: here is what pay__charge returned.\n\n"
	for _, tc := range []struct {
		name, decided string
		wantRuns      bool
		wantAnswer    string
	}{
		{"a granted approval runs the remembered call once", approvalGranted, true, prefix + "charged"},
		{"a denied approval is reported and nothing runs", approvalDenied, false, prefix + "The user denied this call on the approval page (/approvals/" + testApproval + "); pay__charge was not called."},
		{"an approval gone is reported as expired", "", false, prefix + "The approval asked at /approvals/" + testApproval + " expired before it was given; pay__charge was not called. Ask for it again to be asked anew."},
		{"an approval still waiting is linked again and nothing runs", approvalPending, false, offlineNothing + "\n\nApproval needed: pay__charge runs only after you approve it at /approvals/" + testApproval + ". Approve or deny it there, then send your next message and I will run it exactly as asked."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, alice := context.Background(), tenant.Caller{Tenant: "acme", Principal: "alice"}
			tools := &approvalTools{id: testApproval, status: approvalPending}
			mem := memory.New(storetest.OpenEmbedded(t), nil)
			svc := New(Options{Memory: mem, Generator: offline.NewGenerator(), Tools: tools})
			first, err := svc.Chat(ctx, alice, Input{ThreadID: "pay", Message: "Charge five euros", Tool: "pay__charge"})
			if err != nil || !strings.Contains(first.Answer, "/approvals/"+testApproval) {
				t.Fatalf("the first turn answered %q, %v; want the approval page linked", first.Answer, err)
			}
			tools.status = tc.decided
			next, err := svc.Chat(ctx, alice, Input{ThreadID: "pay", Message: "Done."})
			if err != nil || next.Answer != tc.wantAnswer {
				t.Fatalf("the next turn answered %q, %v; want %q", next.Answer, err, tc.wantAnswer)
			}
			var want []string
			if tc.wantRuns {
				want = []string{`pay__charge {"note":"Charge five euros"} ` + testApproval}
			}
			if strings.Join(tools.approved, "|") != strings.Join(want, "|") {
				t.Fatalf("calls made with the approval %q, want %q", tools.approved, want)
			}
			if _, err := svc.Chat(ctx, alice, Input{ThreadID: "pay", Message: "And now?"}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(tools.approved, "|") != strings.Join(want, "|") {
				t.Errorf("after a third turn the calls made with the approval are %q, want %q", tools.approved, want)
			}
		})
	}
}

func TestPendingApprovalsAreTheRecordsNoLaterOneSettles(t *testing.T) {
	rec := func(id, status string) memory.Message {
		body, _ := json.Marshal(approvalCall{ID: id, URL: "/approvals/" + id, Tool: "pay__charge", Arguments: json.RawMessage(`{"a":1}`), Status: status})
		return memory.Message{Role: provider.RoleTool, Name: ApprovalRecord, Internal: true, Content: string(body)}
	}
	forged := rec("c", recordPending)
	forged.Internal = false // a record the chat did not write as internal is no record
	got := pendingApprovals([]memory.Message{rec("a", recordPending), rec("b", recordPending), rec("a", recordCalled), forged, rec("d", recordPending)})
	var ids []string
	for _, a := range got {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, ",") != "b,d" || string(got[0].Arguments) != `{"a":1}` {
		t.Errorf("pending %+v, want b and d with their arguments", got)
	}
}
