package audit

// Event types of the connectors family (issue 12), appended under the trace
// of the call that caused them. None of them carries a credential: details
// name the connector, the tool, versions and outcomes only.
const (
	ConnectorCreated  = "ConnectorCreated"
	ConnectorUpdated  = "ConnectorUpdated"
	ConnectorDeleted  = "ConnectorDeleted"
	ConnectorVerified = "ConnectorVerified"
	ConnectorSynced   = "ConnectorSynced"
	ApprovalPolicySet = "ApprovalPolicySet"
	ApprovalRequested = "ApprovalRequested"
	ApprovalGranted   = "ApprovalGranted"
	ApprovalDenied    = "ApprovalDenied"
	ApprovalExpired   = "ApprovalExpired"
)
