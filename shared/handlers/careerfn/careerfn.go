// Package careerfn binds the career family's functions to package career:
// one [lambdafn.Function] per function, which its main starts
// (functions/career/<name>/main.go) and package handlers lists.
package careerfn

import (
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// service builds the family's service. Deps without an embedder (a function
// whose entry does not embed; a test) get the offline hashing embedder,
// config's default, so index_build and the hybrid strategy work everywhere.
func service(d lambdafn.Deps) *career.Service {
	emb := d.Embedder
	if emb == nil {
		emb = offline.NewEmbedder(offline.DefaultDims)
	}
	return career.New(d.Table, d.Blobs, &career.Options{Embedder: emb, Logger: d.Logger,
		Progress: lambdafn.ReportProgress})
}

// The career family's tool functions.
var (
	IngestResume          = lambdafn.Method("ingest_resume", service, (*career.Service).IngestResume)
	AtomCreate            = lambdafn.Method("atom_create", service, (*career.Service).CreateAtom)
	AtomUpdate            = lambdafn.Method("atom_update", service, (*career.Service).UpdateAtom)
	AtomGet               = lambdafn.Method("atom_get", service, (*career.Service).GetAtoms)
	AtomList              = lambdafn.Method("atom_list", service, (*career.Service).ListAtoms)
	OpportunityCreate     = lambdafn.Method("opportunity_create", service, (*career.Service).CreateOpportunity)
	OpportunityUpdate     = lambdafn.Method("opportunity_update", service, (*career.Service).UpdateOpportunity)
	OpportunityGet        = lambdafn.Method("opportunity_get", service, (*career.Service).GetOpportunities)
	OpportunityList       = lambdafn.Method("opportunity_list", service, (*career.Service).ListOpportunities)
	MatchOpportunity      = lambdafn.Method("match_opportunity", service, (*career.Service).MatchOpportunity)
	ValidateMatchReport   = lambdafn.Method("validate_match_report", service, (*career.Service).ValidateMatchReport)
	IndexBuild            = lambdafn.Method("index_build", service, (*career.Service).IndexBuild)
	IndexRunList          = lambdafn.Method("index_run_list", service, (*career.Service).ListIndexRuns)
	InteractionCreate     = lambdafn.Method("interaction_create", service, (*career.Service).CreateInteraction)
	InteractionGet        = lambdafn.Method("interaction_get", service, (*career.Service).GetInteractions)
	InteractionApplyEvent = lambdafn.Method("interaction_apply_event", service, (*career.Service).ApplyEvent)
)

// Functions returns every function of the career family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{IngestResume, AtomCreate, AtomUpdate, AtomGet, AtomList, OpportunityCreate, OpportunityUpdate, OpportunityGet, OpportunityList, MatchOpportunity, ValidateMatchReport, IndexBuild, IndexRunList, InteractionCreate, InteractionGet, InteractionApplyEvent}
}
