// Package careerfn binds the career family's functions to package career:
// one [lambdafn.Function] per function, which its main starts
// (functions/career/<name>/main.go) and package handlers lists.
package careerfn

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/catalog"
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
	IngestResume = lambdafn.ToolFunction("ingest_resume", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).IngestResume)
	})
	AtomCreate = lambdafn.ToolFunction("atom_create", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).CreateAtom)
	})
	AtomUpdate = lambdafn.ToolFunction("atom_update", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).UpdateAtom)
	})
	AtomGet = lambdafn.ToolFunction("atom_get", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).GetAtoms)
	})
	AtomList = lambdafn.ToolFunction("atom_list", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).ListAtoms)
	})
	OpportunityCreate = lambdafn.ToolFunction("opportunity_create", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).CreateOpportunity)
	})
	OpportunityUpdate = lambdafn.ToolFunction("opportunity_update", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).UpdateOpportunity)
	})
	OpportunityGet = lambdafn.ToolFunction("opportunity_get", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).GetOpportunities)
	})
	OpportunityList = lambdafn.ToolFunction("opportunity_list", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).ListOpportunities)
	})
	MatchOpportunity = lambdafn.ToolFunction("match_opportunity", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).MatchOpportunity)
	})
	ValidateMatchReport = lambdafn.ToolFunction("validate_match_report", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).ValidateMatchReport)
	})
	IndexBuild = lambdafn.ToolFunction("index_build", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).IndexBuild)
	})
	IndexRunList = lambdafn.ToolFunction("index_run_list", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).ListIndexRuns)
	})
	InteractionCreate = lambdafn.ToolFunction("interaction_create", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).CreateInteraction)
	})
	InteractionGet = lambdafn.ToolFunction("interaction_get", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).GetInteractions)
	})
	InteractionApplyEvent = lambdafn.ToolFunction("interaction_apply_event", func(t *catalog.Tool, d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, service(d).ApplyEvent)
	})
)

// Functions returns every function of the career family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{IngestResume, AtomCreate, AtomUpdate, AtomGet, AtomList, OpportunityCreate, OpportunityUpdate, OpportunityGet, OpportunityList, MatchOpportunity, ValidateMatchReport, IndexBuild, IndexRunList, InteractionCreate, InteractionGet, InteractionApplyEvent}
}
