package catalog

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CareerFamily names the career-coordination tools (seed 003).
const CareerFamily = "career"

var (
	careerLimits      = Limits{Timeout: 15 * time.Second, MemoryMB: 256}
	careerHeavyLimits = Limits{Timeout: 60 * time.Second, MemoryMB: 1024}
	careerIndexLimits = Limits{Timeout: 5 * time.Minute, MemoryMB: 1024}
)

// careerTool completes t as a public career tool: with the family's limits
// unless t has its own, and, unless t says otherwise, reading the table or,
// if it mutates, writing it.
func careerTool(t *Tool) *Tool {
	t.Family, t.Visibility = CareerFamily, Public
	if t.Limits == (Limits{}) {
		t.Limits = careerLimits
	}
	if t.Table == NoAccess {
		t.Table = Read
		if t.Mutates {
			t.Table = ReadWrite
		}
	}
	return t
}

// sampleResume is the Markdown resume of ingest_resume's example, base64.
const sampleResume = "IyBEYW5hIExlZQoKIyMgRXhwZXJpZW5jZQoKIyMjIFN0YWZmIEVuZ2luZWVyLCBBY21lIFBheW1lbnRzCi0gQ3V0IHA5OSBsYXRlbmN5IG9mIHRoZSBwYXltZW50cyBBUEkgYnkgNDAlIGJ5IG1vdmluZyBpdCB0byBBV1MgTGFtYmRhIGFuZCBEeW5hbW9EQi4KLSBMZWQgYSB0ZWFtIG9mIGZpdmUgZW5naW5lZXJzIHRocm91Z2ggYSB6ZXJvLWRvd250aW1lIG1pZ3JhdGlvbi4KCiMjIFNraWxscwotIEdvLCBQeXRob24sIFRlcnJhZm9ybSwgQVdTCg=="

func careerTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	additive := &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	overwrite := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	return []*Tool{
		careerTool(&Tool{
			Name: "ingest_resume", Function: "career/ingest_resume", Title: "Ingest a resume",
			Description: "Reads a resume (.md, .txt, .docx or .pdf), either an object key under your tenant's storage prefix (s3_key) or the file inline (content_base64 with file_name), normalises it to canonical Markdown, and extracts experience atoms: one per accomplishment or skill statement, with the section it came from. Returns resume_id, resume_hash (SHA-256 of the canonical Markdown), source_hash (its stable 64-bit hash, for index drift) and the atoms. With persist (the default) the resume is stored and its atoms become matchable; the same content always gets the same resume_id, and ingesting it again keeps its atoms as they are (your edits and versions included). warnings says when no atoms were found.",
			Annotations: idempotent, Mutates: true, Deletes: true, Limits: careerHeavyLimits, Blobs: ReadWrite, TraceArgument: true,
			MaxRequestBytes: MaxRequestBytes, // content_base64 of a 3 MiB file, 4 MiB, fits
			Example:         json.RawMessage(`{"file_name":"dana-lee.md","content_base64":"` + sampleResume + `","persist":false}`),
		}),
		careerTool(&Tool{
			Name: "atom_create", Function: "career/atom_create", Title: "Create an experience atom",
			Description: "Stores one accomplishment or skill statement as an experience atom, under a generated id; it becomes matchable at once.",
			Annotations: additive, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"text":"Designed the single-table DynamoDB model behind a 2,000 requests per second booking API","section":"Experience"}`),
		}),
		careerTool(&Tool{
			Name: "atom_update", Function: "career/atom_update", Title: "Update an experience atom",
			Description: "Replaces an atom's text and section if it is still at expected_version (the version you read); otherwise fails with a conflict, so concurrent edits never overwrite each other. expected_version 0 creates the atom under atom_id if the id is free.",
			Annotations: overwrite, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"atom_id":"atom_demo","expected_version":0,"text":"Go, Python, Terraform, AWS Lambda, DynamoDB","section":"Skills"}`),
		}),
		careerTool(&Tool{
			Name: "atom_get", Function: "career/atom_get", Title: "Get experience atoms",
			Description: "Returns the atoms with the given ids (1 to 100); ids you have no atom with are listed in missing.",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"atom_ids":["atom_demo"]}`),
		}),
		careerTool(&Tool{
			Name: "atom_list", Function: "career/atom_list", Title: "List experience atoms",
			Description: "Returns your atoms by id, a page at a time (pass next_cursor back as cursor); resume_id keeps only one resume's.",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"limit":50}`),
		}),
		careerTool(&Tool{
			Name: "opportunity_create", Function: "career/opportunity_create", Title: "Create an opportunity",
			Description: "Stores an opportunity (title, company, description and 1 to 50 requirements, one statement each) under a generated id, for match_opportunity and interactions.",
			Annotations: additive, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"title":"Senior Go engineer","company":"Globex","description":"Serverless payments platform.","requirements":["Go services on AWS Lambda","DynamoDB data modelling","Mentoring engineers"]}`),
		}),
		careerTool(&Tool{
			Name: "opportunity_update", Function: "career/opportunity_update", Title: "Update an opportunity",
			Description: "Replaces an opportunity's fields if it is still at expected_version (the version you read); otherwise fails with a conflict. expected_version 0 creates the opportunity under opportunity_id if the id is free.",
			Annotations: overwrite, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"opportunity_id":"opp_demo","expected_version":0,"title":"Senior Go engineer","company":"Globex","requirements":["Go services on AWS Lambda","DynamoDB data modelling"]}`),
		}),
		careerTool(&Tool{
			Name: "opportunity_get", Function: "career/opportunity_get", Title: "Get opportunities",
			Description: "Returns the opportunities with the given ids (1 to 100); ids you have no opportunity with are listed in missing.",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"opportunity_ids":["opp_demo"]}`),
		}),
		careerTool(&Tool{
			Name: "opportunity_list", Function: "career/opportunity_list", Title: "List opportunities",
			Description: "Returns your opportunities by id, a page at a time (pass next_cursor back as cursor).",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"limit":50}`),
		}),
		careerTool(&Tool{
			Name: "match_opportunity", Function: "career/match_opportunity", Title: "Match an opportunity",
			Description: "Matches a stored opportunity (opportunity_id) or one given inline (opportunity) against your experience atoms, validates the result and stores the report. Strategy deterministic_lexical_v0.1 (default) ranks atoms per requirement with BM25 (k_lex candidates); hybrid_lexical_embedding_v0.2 fuses that with the k_emb nearest atoms by embedding. The report gives an overall score, the matched atoms, and per requirement the atom that satisfied it with its evidence, or that nothing did. The same inputs always give the same report. resume_id is carried into the audit trail only.",
			// Hybrid matching embeds the requirements.
			Annotations: additive, Mutates: true, Limits: careerHeavyLimits, Embeds: true, TraceArgument: true,
			Example: json.RawMessage(`{"opportunity":{"title":"Senior Go engineer","company":"Globex","requirements":["Go services on AWS Lambda","DynamoDB data modelling","Mentoring engineers"]},"strategy":"deterministic_lexical_v0.1"}`),
		}),
		careerTool(&Tool{
			Name: "validate_match_report", Function: "career/validate_match_report", Title: "Validate a match report",
			Description: "Checks a match report, stored (report_id) or inline (match_report), by recomputing it: its schema and score ranges; every matched term is a term of its requirement and of the cited atom, which exists in your tenant; each requirement's coverage, similarity (hybrid) and score follow from the strategy's rules, and satisfied agrees with the threshold; the overall score agrees with the requirements'; a stored opportunity it names has the requirements and source_hash it claims. Returns accepted, rejected (an error finding: the report does not hold up) or needs_review (warnings only, such as a report this server made whose atoms or opportunity changed since), with the findings.",
			// It appends ValidationCompleted to the audit log, so it writes the table.
			Annotations: readOnly, Table: ReadWrite, TraceArgument: true,
			Example: json.RawMessage(`{"match_report":{"report_id":"mr_demo","opportunity_id":"opp_demo","opportunity_source_hash":"0000000000000000","strategy":"deterministic_lexical_v0.1","k_lex":25,"atoms_considered":0,"overall_score":0,"matched_atoms":[],"requirements":[{"requirement_index":0,"requirement":"Go services on AWS Lambda","satisfied":false,"score":0,"coverage":0,"matched_terms":[]}],"unsatisfied_requirements":[0]}}`),
		}),
		careerTool(&Tool{
			Name: "index_build", Function: "career/index_build", Title: "Build the embedding index",
			Description: "Embeds your atoms, resumes and opportunities (scope atoms, resumes, opps or all) with the configured embedder, skipping each artifact whose source_hash is unchanged since the last completed run with the same provider, model and prompt scope. Returns the run id and counts: indexed (embedded: new and stale), skipped (unchanged), stale (changed since). Runs are listed by index_run_list.",
			Annotations: idempotent, Mutates: true, Limits: careerIndexLimits, Blobs: Read, Embeds: true, TraceArgument: true, Progress: true,
			Example: json.RawMessage(`{"scope":"all"}`),
		}),
		careerTool(&Tool{
			Name: "index_run_list", Function: "career/index_run_list", Title: "List index runs",
			Description: "Returns your index_build runs, newest first, with their scope, provider, model, prompt scope, status and counts.",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"limit":20}`),
		}),
		careerTool(&Tool{
			Name: "interaction_create", Function: "career/interaction_create", Title: "Create an interaction",
			Description: "Starts an interaction (a contact about an opportunity) in state draft (0); opportunity_id, if given, must name one of your opportunities (else not_found). Move it with interaction_apply_event: Prepare (draft to ready), Send (ready to sent), ReceiveReply (sent to replied), Close (any state but closed to closed).",
			Annotations: additive, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"contact":"Sam Rivera, hiring manager","channel":"email"}`),
		}),
		careerTool(&Tool{
			Name: "interaction_get", Function: "career/interaction_get", Title: "Get interactions",
			Description: "Returns the interactions with the given ids (1 to 100), each with its state and applied transitions; ids you have no interaction with are listed in missing.",
			Annotations: readOnly,
			Example:     json.RawMessage(`{"interaction_ids":["int_demo"]}`),
		}),
		careerTool(&Tool{
			Name: "interaction_apply_event", Function: "career/interaction_apply_event", Title: "Apply an interaction event",
			Description: "Applies Prepare, Send, ReceiveReply or Close to an interaction atomically. The result's outcome is applied, already_applied (this idempotency_key was applied before: the original result), invalid_transition (not allowed in the current state), not_found, conflict (another event moved it first, or the key was used for another event) or backend_error (retry with the same key), with the before and after states and the transition index.",
			Annotations: idempotent, Mutates: true, TraceArgument: true,
			Example: json.RawMessage(`{"interaction_id":"int_demo","event":"Prepare","idempotency_key":"int_demo-prepare-1"}`),
		}),
	}
}
