package catalog

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// CareerFamily names the career-coordination tools (seed 003).
const CareerFamily = "career"

var (
	careerLimits      = Limits{Timeout: 15 * time.Second, MemoryMB: 256}
	careerHeavyLimits = Limits{Timeout: 60 * time.Second, MemoryMB: 1024}
	careerIndexLimits = Limits{Timeout: 5 * time.Minute, MemoryMB: 1024}
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

func enum(vals ...string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

func careerTool(name, function, title, description string, in, out func() *jsonschema.Schema, mutates bool, ann *mcp.ToolAnnotations, example string) *Tool {
	table := Read
	if mutates {
		table = ReadWrite
	}
	return &Tool{
		Name: name, Title: title, Description: description,
		Family: CareerFamily, Function: "career/" + function,
		Input: in, Output: out, Annotations: ann,
		Visibility: Public, Mutates: mutates, Limits: careerLimits, Table: table,
		Example: json.RawMessage(example),
	}
}

// sampleResume is the Markdown resume of ingest_resume's example, base64.
const sampleResume = "IyBEYW5hIExlZQoKIyMgRXhwZXJpZW5jZQoKIyMjIFN0YWZmIEVuZ2luZWVyLCBBY21lIFBheW1lbnRzCi0gQ3V0IHA5OSBsYXRlbmN5IG9mIHRoZSBwYXltZW50cyBBUEkgYnkgNDAlIGJ5IG1vdmluZyBpdCB0byBBV1MgTGFtYmRhIGFuZCBEeW5hbW9EQi4KLSBMZWQgYSB0ZWFtIG9mIGZpdmUgZW5naW5lZXJzIHRocm91Z2ggYSB6ZXJvLWRvd250aW1lIG1pZ3JhdGlvbi4KCiMjIFNraWxscwotIEdvLCBQeXRob24sIFRlcnJhZm9ybSwgQVdTCg=="

func careerTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	overwrite := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}

	ingest := careerTool("ingest_resume", "ingest_resume", "Ingest a resume",
		"Reads a resume (.md, .txt, .docx or .pdf), either an object key under your tenant's storage prefix (s3_key) or the file inline (content_base64 with file_name), normalises it to canonical Markdown, and extracts experience atoms: one per accomplishment or skill statement, with the section it came from. Returns resume_id, resume_hash (SHA-256 of the canonical Markdown), source_hash (its stable 64-bit hash, for index drift) and the atoms. With persist (the default) the resume is stored and its atoms become matchable; the same content always gets the same resume_id, and ingesting it again keeps its atoms as they are (your edits and versions included). warnings says when no atoms were found.",
		SchemaFor[career.IngestResumeInput](func(s *jsonschema.Schema) {
			p := s.Properties
			p["s3_key"].MaxLength = ptr(store.MaxBlobKeyBytes)
			p["file_name"].MaxLength = ptr(255)
			p["file_name"].Pattern = `(?i)\.(md|markdown|txt|docx|pdf)$`
			p["content_base64"].MaxLength = ptr(base64.StdEncoding.EncodedLen(career.MaxInlineResumeBytes))
			traceField(p)
		}), schemaFor[career.IngestResumeOutput](nil), true, idempotent,
		`{"file_name":"dana-lee.md","content_base64":"`+sampleResume+`","persist":false}`)
	ingest.Limits, ingest.Blobs = careerHeavyLimits, ReadWrite
	ingest.MaxRequestBytes = MaxRequestBytes // content_base64 of a 3 MiB file, 4 MiB, fits

	match := careerTool("match_opportunity", "match_opportunity", "Match an opportunity",
		"Matches a stored opportunity (opportunity_id) or one given inline (opportunity) against your experience atoms, validates the result and stores the report. Strategy deterministic_lexical_v0.1 (default) ranks atoms per requirement with BM25 (k_lex candidates); hybrid_lexical_embedding_v0.2 fuses that with the k_emb nearest atoms by embedding. The report gives an overall score, the matched atoms, and per requirement the atom that satisfied it with its evidence, or that nothing did. The same inputs always give the same report. resume_id is carried into the audit trail only.",
		SchemaFor[career.MatchInput](func(s *jsonschema.Schema) {
			p := s.Properties
			idField(p["opportunity_id"])
			idField(p["resume_id"])
			opportunityFields(p["opportunity"].Properties)
			p["strategy"].Enum = enum(career.Strategies...)
			for _, k := range []string{"k_lex", "k_emb"} {
				p[k].Minimum, p[k].Maximum = ptr(1.0), ptr(float64(career.MaxK))
			}
			traceField(p)
		}), schemaFor[career.MatchOutput](nil), true, additive,
		`{"opportunity":{"title":"Senior Go engineer","company":"Globex","requirements":["Go services on AWS Lambda","DynamoDB data modelling","Mentoring engineers"]},"strategy":"deterministic_lexical_v0.1"}`)
	match.Limits, match.Embeds = careerHeavyLimits, true // hybrid matching embeds requirements

	validate := careerTool("validate_match_report", "validate_match_report", "Validate a match report",
		"Checks a match report, stored (report_id) or inline (match_report), by recomputing it: its schema and score ranges; every matched term is a term of its requirement and of the cited atom, which exists in your tenant; each requirement's coverage, similarity (hybrid) and score follow from the strategy's rules, and satisfied agrees with the threshold; the overall score agrees with the requirements'; a stored opportunity it names has the requirements and source_hash it claims. Returns accepted, rejected (an error finding: the report does not hold up) or needs_review (warnings only, such as a report this server made whose atoms or opportunity changed since), with the findings.",
		SchemaFor[career.ValidateInput](func(s *jsonschema.Schema) {
			idField(s.Properties["report_id"])
			traceField(s.Properties)
		}), schemaFor[career.ValidateOutput](nil), false, readOnly,
		`{"match_report":{"report_id":"mr_demo","opportunity_id":"opp_demo","opportunity_source_hash":"0000000000000000","strategy":"deterministic_lexical_v0.1","k_lex":25,"atoms_considered":0,"overall_score":0,"matched_atoms":[],"requirements":[{"requirement_index":0,"requirement":"Go services on AWS Lambda","satisfied":false,"score":0,"coverage":0,"matched_terms":[]}],"unsatisfied_requirements":[0]}}`)
	validate.Table = ReadWrite // it appends ValidationCompleted to the audit log

	index := careerTool("index_build", "index_build", "Build the embedding index",
		"Embeds your atoms, resumes and opportunities (scope atoms, resumes, opps or all) with the configured embedder, skipping each artifact whose source_hash is unchanged since the last completed run with the same provider, model and prompt scope. Returns the run id and counts: indexed (embedded: new and stale), skipped (unchanged), stale (changed since). Runs are listed by index_run_list.",
		schemaFor[career.IndexBuildInput](func(p map[string]*jsonschema.Schema) {
			p["scope"].Enum = enum(career.Scopes...)
			traceField(p)
		}), schemaFor[career.IndexBuildOutput](nil), true, idempotent, `{"scope":"all"}`)
	index.Limits, index.Blobs, index.Embeds = careerIndexLimits, Read, true

	return []*Tool{
		ingest,
		careerTool("atom_create", "atom_create", "Create an experience atom",
			"Stores one accomplishment or skill statement as an experience atom, under a generated id; it becomes matchable at once.",
			schemaFor[career.AtomCreateInput](atomFields), schemaFor[career.AtomOutput](nil), true, additive,
			`{"text":"Designed the single-table DynamoDB model behind a 2,000 requests per second booking API","section":"Experience"}`),
		careerTool("atom_update", "atom_update", "Update an experience atom",
			"Replaces an atom's text and section if it is still at expected_version (the version you read); otherwise fails with a conflict, so concurrent edits never overwrite each other. expected_version 0 creates the atom under atom_id if the id is free.",
			schemaFor[career.AtomUpdateInput](func(p map[string]*jsonschema.Schema) {
				atomFields(p)
				idField(p["atom_id"])
				p["expected_version"].Minimum = ptr(0.0)
			}), schemaFor[career.AtomOutput](nil), true, overwrite,
			`{"atom_id":"atom_demo","expected_version":0,"text":"Go, Python, Terraform, AWS Lambda, DynamoDB","section":"Skills"}`),
		careerTool("atom_get", "atom_get", "Get experience atoms",
			"Returns the atoms with the given ids (1 to 100); ids you have no atom with are listed in missing.",
			schemaFor[career.AtomGetInput](func(p map[string]*jsonschema.Schema) { idList(p["atom_ids"]) }),
			schemaFor[career.AtomGetOutput](nil), false, readOnly, `{"atom_ids":["atom_demo"]}`),
		careerTool("atom_list", "atom_list", "List experience atoms",
			"Returns your atoms by id, a page at a time (pass next_cursor back as cursor); resume_id keeps only one resume's.",
			schemaFor[career.AtomListInput](func(p map[string]*jsonschema.Schema) {
				listFields(p)
				idField(p["resume_id"])
			}), schemaFor[career.AtomListOutput](nil), false, readOnly, `{"limit":50}`),
		careerTool("opportunity_create", "opportunity_create", "Create an opportunity",
			"Stores an opportunity (title, company, description and 1 to 50 requirements, one statement each) under a generated id, for match_opportunity and interactions.",
			schemaFor[career.OpportunityCreateInput](func(p map[string]*jsonschema.Schema) {
				opportunityFields(p)
				traceField(p)
			}), schemaFor[career.OpportunityOutput](nil), true, additive,
			`{"title":"Senior Go engineer","company":"Globex","description":"Serverless payments platform.","requirements":["Go services on AWS Lambda","DynamoDB data modelling","Mentoring engineers"]}`),
		careerTool("opportunity_update", "opportunity_update", "Update an opportunity",
			"Replaces an opportunity's fields if it is still at expected_version (the version you read); otherwise fails with a conflict. expected_version 0 creates the opportunity under opportunity_id if the id is free.",
			schemaFor[career.OpportunityUpdateInput](func(p map[string]*jsonschema.Schema) {
				opportunityFields(p)
				traceField(p)
				idField(p["opportunity_id"])
				p["expected_version"].Minimum = ptr(0.0)
			}), schemaFor[career.OpportunityOutput](nil), true, overwrite,
			`{"opportunity_id":"opp_demo","expected_version":0,"title":"Senior Go engineer","company":"Globex","requirements":["Go services on AWS Lambda","DynamoDB data modelling"]}`),
		careerTool("opportunity_get", "opportunity_get", "Get opportunities",
			"Returns the opportunities with the given ids (1 to 100); ids you have no opportunity with are listed in missing.",
			schemaFor[career.OpportunityGetInput](func(p map[string]*jsonschema.Schema) { idList(p["opportunity_ids"]) }),
			schemaFor[career.OpportunityGetOutput](nil), false, readOnly, `{"opportunity_ids":["opp_demo"]}`),
		careerTool("opportunity_list", "opportunity_list", "List opportunities",
			"Returns your opportunities by id, a page at a time (pass next_cursor back as cursor).",
			schemaFor[career.ListInput](listFields), schemaFor[career.OpportunityListOutput](nil), false, readOnly, `{"limit":50}`),
		match,
		validate,
		index,
		careerTool("index_run_list", "index_run_list", "List index runs",
			"Returns your index_build runs, newest first, with their scope, provider, model, prompt scope, status and counts.",
			schemaFor[career.ListInput](listFields), schemaFor[career.IndexRunListOutput](nil), false, readOnly, `{"limit":20}`),
		careerTool("interaction_create", "interaction_create", "Create an interaction",
			"Starts an interaction (a contact about an opportunity) in state draft (0); opportunity_id, if given, must name one of your opportunities (else not_found). Move it with interaction_apply_event: Prepare (draft to ready), Send (ready to sent), ReceiveReply (sent to replied), Close (any state but closed to closed).",
			schemaFor[career.InteractionCreateInput](func(p map[string]*jsonschema.Schema) {
				idField(p["interaction_id"])
				idField(p["opportunity_id"])
				p["contact"].MaxLength, p["channel"].MaxLength = ptr(career.MaxContactChars), ptr(career.MaxContactChars)
				traceField(p)
			}), schemaFor[career.InteractionOutput](nil), true, additive,
			`{"contact":"Sam Rivera, hiring manager","channel":"email"}`),
		careerTool("interaction_get", "interaction_get", "Get interactions",
			"Returns the interactions with the given ids (1 to 100), each with its state and applied transitions; ids you have no interaction with are listed in missing.",
			schemaFor[career.InteractionGetInput](func(p map[string]*jsonschema.Schema) { idList(p["interaction_ids"]) }),
			schemaFor[career.InteractionGetOutput](nil), false, readOnly, `{"interaction_ids":["int_demo"]}`),
		careerTool("interaction_apply_event", "interaction_apply_event", "Apply an interaction event",
			"Applies Prepare, Send, ReceiveReply or Close to an interaction atomically. The result's outcome is applied, already_applied (this idempotency_key was applied before: the original result), invalid_transition (not allowed in the current state), not_found, conflict (another event moved it first, or the key was used for another event) or backend_error (retry with the same key), with the before and after states and the transition index.",
			schemaFor[career.ApplyEventInput](func(p map[string]*jsonschema.Schema) {
				idField(p["interaction_id"])
				idField(p["idempotency_key"])
				p["event"].Enum = enum(career.Events...)
				p["expected_state"].Minimum, p["expected_state"].Maximum = ptr(0.0), ptr(float64(career.Closed))
				traceField(p)
			}), schemaFor[career.ApplyEventOutput](nil), true, idempotent,
			`{"interaction_id":"int_demo","event":"Prepare","idempotency_key":"int_demo-prepare-1"}`),
	}
}
