package local_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/connector"
)

func TestThePagesStatusesAreTheConnectorServices(t *testing.T) {
	for page, svc := range map[string]string{
		approvalpage.StatusPending: connector.ApprovalPending, approvalpage.StatusGranted: connector.ApprovalGranted,
		approvalpage.StatusDenied: connector.ApprovalDenied, approvalpage.StatusConsumed: connector.ApprovalConsumed,
		approvalpage.StatusExpired: connector.ApprovalExpired,
	} {
		if page != svc {
			t.Errorf("the page's status %q is the service's %q", page, svc)
		}
	}
}
