package toolschema

import (
	"encoding/base64"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/store"
)

func idField(s *jsonschema.Schema) {
	s.Pattern, s.MaxLength = career.IDPattern, ptr(128)
}

func traceField(p map[string]*jsonschema.Schema) {
	p["trace_id"].Pattern, p["trace_id"].MaxLength = audit.TracePattern, ptr(128)
}

func idList(s *jsonschema.Schema) {
	s.MinItems, s.MaxItems = ptr(1), ptr(career.MaxBatchIDs)
	idField(s.Items)
}

func textField(s *jsonschema.Schema, max int) {
	s.MinLength, s.MaxLength = ptr(1), ptr(max)
}

func listFields(p map[string]*jsonschema.Schema) {
	p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(store.MaxQueryLimit))
}

func opportunityFields(p map[string]*jsonschema.Schema) {
	textField(p["title"], career.MaxTitleChars)
	p["company"].MaxLength = ptr(career.MaxTitleChars)
	p["description"].MaxLength = ptr(career.MaxDescriptionChars)
	p["requirements"].MinItems, p["requirements"].MaxItems = ptr(1), ptr(career.MaxRequirements)
	textField(p["requirements"].Items, career.MaxTextChars)
}

func atomFields(p map[string]*jsonschema.Schema) {
	textField(p["text"], career.MaxTextChars)
	p["section"].MaxLength = ptr(career.MaxSectionChars)
	idField(p["resume_id"])
	traceField(p)
}

// careerSchemas returns the schemas of the career family's tools.
func careerSchemas() map[string]pair {
	return map[string]pair{
		"ingest_resume": {schemaFor[career.IngestResumeInput](func(p map[string]*jsonschema.Schema) {
			p["s3_key"].MaxLength = ptr(store.MaxBlobKeyBytes)
			p["file_name"].MaxLength = ptr(255)
			p["file_name"].Pattern = `(?i)\.(md|markdown|txt|docx|pdf)$`
			p["content_base64"].MaxLength = ptr(base64.StdEncoding.EncodedLen(career.MaxInlineResumeBytes))
			traceField(p)
		}), schemaFor[career.IngestResumeOutput](nil)},
		"match_opportunity": {schemaFor[career.MatchInput](func(p map[string]*jsonschema.Schema) {
			idField(p["opportunity_id"])
			idField(p["resume_id"])
			opportunityFields(p["opportunity"].Properties)
			p["strategy"].Enum = enum(career.Strategies...)
			for _, k := range []string{"k_lex", "k_emb"} {
				p[k].Minimum, p[k].Maximum = ptr(1.0), ptr(float64(career.MaxK))
			}
			traceField(p)
		}), schemaFor[career.MatchOutput](nil)},
		"validate_match_report": {schemaFor[career.ValidateInput](func(p map[string]*jsonschema.Schema) {
			idField(p["report_id"])
			traceField(p)
		}), schemaFor[career.ValidateOutput](nil)},
		"index_build": {schemaFor[career.IndexBuildInput](func(p map[string]*jsonschema.Schema) {
			p["scope"].Enum = enum(career.Scopes...)
			traceField(p)
		}), schemaFor[career.IndexBuildOutput](nil)},
		"atom_create": {schemaFor[career.AtomCreateInput](atomFields), schemaFor[career.AtomOutput](nil)},
		"atom_update": {schemaFor[career.AtomUpdateInput](func(p map[string]*jsonschema.Schema) {
			atomFields(p)
			idField(p["atom_id"])
			p["expected_version"].Minimum = ptr(0.0)
		}), schemaFor[career.AtomOutput](nil)},
		"atom_get": {schemaFor[career.AtomGetInput](func(p map[string]*jsonschema.Schema) { idList(p["atom_ids"]) }),
			schemaFor[career.AtomGetOutput](nil)},
		"atom_list": {schemaFor[career.AtomListInput](func(p map[string]*jsonschema.Schema) {
			listFields(p)
			idField(p["resume_id"])
		}), schemaFor[career.AtomListOutput](nil)},
		"opportunity_create": {schemaFor[career.OpportunityCreateInput](func(p map[string]*jsonschema.Schema) {
			opportunityFields(p)
			traceField(p)
		}), schemaFor[career.OpportunityOutput](nil)},
		"opportunity_update": {schemaFor[career.OpportunityUpdateInput](func(p map[string]*jsonschema.Schema) {
			opportunityFields(p)
			traceField(p)
			idField(p["opportunity_id"])
			p["expected_version"].Minimum = ptr(0.0)
		}), schemaFor[career.OpportunityOutput](nil)},
		"opportunity_get": {schemaFor[career.OpportunityGetInput](func(p map[string]*jsonschema.Schema) { idList(p["opportunity_ids"]) }),
			schemaFor[career.OpportunityGetOutput](nil)},
		"opportunity_list": {schemaFor[career.ListInput](listFields), schemaFor[career.OpportunityListOutput](nil)},
		"index_run_list":   {schemaFor[career.ListInput](listFields), schemaFor[career.IndexRunListOutput](nil)},
		"interaction_create": {schemaFor[career.InteractionCreateInput](func(p map[string]*jsonschema.Schema) {
			idField(p["interaction_id"])
			idField(p["opportunity_id"])
			p["contact"].MaxLength, p["channel"].MaxLength = ptr(career.MaxContactChars), ptr(career.MaxContactChars)
			traceField(p)
		}), schemaFor[career.InteractionOutput](nil)},
		"interaction_get": {schemaFor[career.InteractionGetInput](func(p map[string]*jsonschema.Schema) { idList(p["interaction_ids"]) }),
			schemaFor[career.InteractionGetOutput](nil)},
		"interaction_apply_event": {schemaFor[career.ApplyEventInput](func(p map[string]*jsonschema.Schema) {
			idField(p["interaction_id"])
			idField(p["idempotency_key"])
			p["event"].Enum = enum(career.Events...)
			p["expected_state"].Minimum, p["expected_state"].Maximum = ptr(0.0), ptr(float64(career.Closed))
			traceField(p)
		}), schemaFor[career.ApplyEventOutput](nil)},
	}
}
