package audit

// Event types of the career family (seed 003), appended under the trace of
// the call that caused them.
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
)
