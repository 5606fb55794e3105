// Package local is the approval page's [approvalpage.Approver] over a
// connector service in the same process (the local server, tests), kept out
// of package approvalpage so that the deployed gateway, which reaches the
// service through the connectors function, does not link package connector.
package local

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Approver is svc's approvals, for the page.
type Approver struct{ Service *connector.Service }

var _ approvalpage.Approver = Approver{}

func (a Approver) Get(ctx context.Context, c tenant.Caller, id string) (approvalpage.Approval, error) {
	return page(a.Service.ApprovalGet(ctx, c, connector.ApprovalInput{ID: id}))
}

func (a Approver) Approve(ctx context.Context, c tenant.Caller, id string) (approvalpage.Approval, error) {
	return page(a.Service.Approve(ctx, c, connector.ApprovalInput{ID: id}))
}

func (a Approver) Deny(ctx context.Context, c tenant.Caller, id string) (approvalpage.Approval, error) {
	return page(a.Service.Deny(ctx, c, connector.ApprovalInput{ID: id}))
}

func page(out connector.ApprovalOutput, err error) (approvalpage.Approval, error) {
	a := out.Approval
	return approvalpage.Approval{ID: a.ID, Connector: a.Connector, Tool: a.Tool, Arguments: a.Arguments,
		Principal: a.Principal, Status: a.Status, ExpiresAt: a.ExpiresAt}, err
}
