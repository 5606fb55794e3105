package audit

// Event types of the career family (seed 003), appended under the trace of
// the call that caused them. The ...Created, ...Updated and
// InteractionTransitionCompleted events are written in the transaction of the
// change they record, so a change is never without its event.
const (
	RunStarted                     = "RunStarted"
	MatchCompleted                 = "MatchCompleted"
	ValidationCompleted            = "ValidationCompleted"
	RunCompleted                   = "RunCompleted"
	IngestStarted                  = "IngestStarted"
	IngestCompleted                = "IngestCompleted"
	IndexBuildStarted              = "IndexBuildStarted"
	IndexBuildCompleted            = "IndexBuildCompleted"
	IndexRunStarted                = "IndexRunStarted"
	IndexedArtifact                = "IndexedArtifact"
	IndexRunCompleted              = "IndexRunCompleted"
	InteractionTransitionAttempted = "InteractionTransitionAttempted"
	InteractionTransitionCompleted = "InteractionTransitionCompleted"
	InteractionTransitionRejected  = "InteractionTransitionRejected"
	InteractionCreated             = "InteractionCreated"
	AtomCreated                    = "AtomCreated"
	AtomUpdated                    = "AtomUpdated"
	OpportunityCreated             = "OpportunityCreated"
	OpportunityUpdated             = "OpportunityUpdated"
)
