package handlers

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
)

// careerFunctions are the career family's functions, for [All].
func careerFunctions() map[string]Constructor {
	return map[string]Constructor{
		"career/ingest_resume":           CareerIngestResume,
		"career/atom_create":             CareerAtomCreate,
		"career/atom_update":             CareerAtomUpdate,
		"career/atom_get":                CareerAtomGet,
		"career/atom_list":               CareerAtomList,
		"career/opportunity_create":      CareerOpportunityCreate,
		"career/opportunity_update":      CareerOpportunityUpdate,
		"career/opportunity_get":         CareerOpportunityGet,
		"career/opportunity_list":        CareerOpportunityList,
		"career/match_opportunity":       CareerMatchOpportunity,
		"career/validate_match_report":   CareerValidateMatchReport,
		"career/index_build":             CareerIndexBuild,
		"career/index_run_list":          CareerIndexRunList,
		"career/interaction_create":      CareerInteractionCreate,
		"career/interaction_get":         CareerInteractionGet,
		"career/interaction_apply_event": CareerInteractionApplyEvent,
	}
}

// careerService builds the family's service. Deps without an embedder (test
// harnesses; config always opens one) get the offline hashing embedder,
// config's default, so index_build and the hybrid strategy work everywhere.
func careerService(d lambdafn.Deps) *career.Service {
	emb := d.Embedder
	if emb == nil {
		emb = offline.NewEmbedder(offline.DefaultDims)
	}
	return career.New(d.Table, d.Blobs, &career.Options{Embedder: emb, Logger: d.Logger,
		Progress: lambdafn.ReportProgress})
}

// careerTool is [lambdafn.Tool] for a career tool.
func careerTool[In, Out any](name string, d lambdafn.Deps, fn lambdafn.Func[In, Out]) lambda.Handler {
	return lambdafn.Tool(tool(name), d, fn)
}

// CareerIngestResume builds the ingest_resume function.
func CareerIngestResume(d lambdafn.Deps) lambda.Handler {
	return careerTool("ingest_resume", d, careerService(d).IngestResume)
}

// CareerAtomCreate builds the atom_create function.
func CareerAtomCreate(d lambdafn.Deps) lambda.Handler {
	return careerTool("atom_create", d, careerService(d).CreateAtom)
}

// CareerAtomUpdate builds the atom_update function.
func CareerAtomUpdate(d lambdafn.Deps) lambda.Handler {
	return careerTool("atom_update", d, careerService(d).UpdateAtom)
}

// CareerAtomGet builds the atom_get function.
func CareerAtomGet(d lambdafn.Deps) lambda.Handler {
	return careerTool("atom_get", d, careerService(d).GetAtoms)
}

// CareerAtomList builds the atom_list function.
func CareerAtomList(d lambdafn.Deps) lambda.Handler {
	return careerTool("atom_list", d, careerService(d).ListAtoms)
}

// CareerOpportunityCreate builds the opportunity_create function.
func CareerOpportunityCreate(d lambdafn.Deps) lambda.Handler {
	return careerTool("opportunity_create", d, careerService(d).CreateOpportunity)
}

// CareerOpportunityUpdate builds the opportunity_update function.
func CareerOpportunityUpdate(d lambdafn.Deps) lambda.Handler {
	return careerTool("opportunity_update", d, careerService(d).UpdateOpportunity)
}

// CareerOpportunityGet builds the opportunity_get function.
func CareerOpportunityGet(d lambdafn.Deps) lambda.Handler {
	return careerTool("opportunity_get", d, careerService(d).GetOpportunities)
}

// CareerOpportunityList builds the opportunity_list function.
func CareerOpportunityList(d lambdafn.Deps) lambda.Handler {
	return careerTool("opportunity_list", d, careerService(d).ListOpportunities)
}

// CareerMatchOpportunity builds the match_opportunity function.
func CareerMatchOpportunity(d lambdafn.Deps) lambda.Handler {
	return careerTool("match_opportunity", d, careerService(d).MatchOpportunity)
}

// CareerValidateMatchReport builds the validate_match_report function.
func CareerValidateMatchReport(d lambdafn.Deps) lambda.Handler {
	return careerTool("validate_match_report", d, careerService(d).ValidateMatchReport)
}

// CareerIndexBuild builds the index_build function.
func CareerIndexBuild(d lambdafn.Deps) lambda.Handler {
	return careerTool("index_build", d, careerService(d).IndexBuild)
}

// CareerIndexRunList builds the index_run_list function.
func CareerIndexRunList(d lambdafn.Deps) lambda.Handler {
	return careerTool("index_run_list", d, careerService(d).ListIndexRuns)
}

// CareerInteractionCreate builds the interaction_create function.
func CareerInteractionCreate(d lambdafn.Deps) lambda.Handler {
	return careerTool("interaction_create", d, careerService(d).CreateInteraction)
}

// CareerInteractionGet builds the interaction_get function.
func CareerInteractionGet(d lambdafn.Deps) lambda.Handler {
	return careerTool("interaction_get", d, careerService(d).GetInteractions)
}

// CareerInteractionApplyEvent builds the interaction_apply_event function.
func CareerInteractionApplyEvent(d lambdafn.Deps) lambda.Handler {
	return careerTool("interaction_apply_event", d, careerService(d).ApplyEvent)
}
