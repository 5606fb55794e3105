package career

import "time"

// Atom is one experience atom: an accomplishment or skill statement, with the
// section of the resume it came from.
type Atom struct {
	AtomID     string    `json:"atom_id"`
	Text       string    `json:"text"`
	Section    string    `json:"section,omitempty" jsonschema:"the resume section (heading path) the statement came from"`
	ResumeID   string    `json:"resume_id,omitempty" jsonschema:"the resume it was extracted from; empty for atoms created directly"`
	SourceHash string    `json:"source_hash" jsonschema:"64-bit hash of the text, in hex; index_build compares it"`
	Version    int64     `json:"version" jsonschema:"bumped by every update; pass it as expected_version"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// AtomCreateInput is the input of atom_create.
type AtomCreateInput struct {
	Text     string `json:"text" jsonschema:"the accomplishment or skill statement"`
	Section  string `json:"section,omitempty" jsonschema:"the section it belongs to, such as Experience or Skills"`
	ResumeID string `json:"resume_id,omitempty" jsonschema:"the resume it belongs to, if any"`
	TraceID  string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// AtomUpdateInput is the input of atom_update.
type AtomUpdateInput struct {
	AtomID          string `json:"atom_id"`
	ExpectedVersion int64  `json:"expected_version" jsonschema:"the version you read; the update fails with a conflict if the atom changed since. 0 creates the atom under atom_id if no atom has it"`
	Text            string `json:"text"`
	Section         string `json:"section,omitempty"`
	ResumeID        string `json:"resume_id,omitempty"`
	TraceID         string `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// AtomOutput is the output of atom_create and atom_update.
type AtomOutput struct {
	Atom    Atom   `json:"atom"`
	TraceID string `json:"trace_id"`
}

// AtomGetInput is the input of atom_get.
type AtomGetInput struct {
	AtomIDs []string `json:"atom_ids" jsonschema:"the atoms to read, 1 to 100"`
}

// AtomGetOutput is the output of atom_get.
type AtomGetOutput struct {
	Atoms   []Atom   `json:"atoms" jsonschema:"the atoms found, in the order asked"`
	Missing []string `json:"missing" jsonschema:"ids you have no atom with"`
}

// AtomListInput is the input of atom_list.
type AtomListInput struct {
	ResumeID string `json:"resume_id,omitempty" jsonschema:"only atoms of this resume"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size (default 100, at most 1000)"`
}

// AtomListOutput is the output of atom_list.
type AtomListOutput struct {
	Atoms      []Atom `json:"atoms"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"set when more atoms remain; pass it back as cursor"`
}

// Opportunity is a job or engagement to match experience against.
type Opportunity struct {
	OpportunityID string    `json:"opportunity_id"`
	Title         string    `json:"title"`
	Company       string    `json:"company,omitempty"`
	Description   string    `json:"description,omitempty"`
	Requirements  []string  `json:"requirements" jsonschema:"what the opportunity asks for, one statement each"`
	SourceHash    string    `json:"source_hash" jsonschema:"64-bit hash of the canonical text, in hex; index_build compares it"`
	Version       int64     `json:"version" jsonschema:"bumped by every update; pass it as expected_version"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// OpportunityCreateInput is the input of opportunity_create.
type OpportunityCreateInput struct {
	Title        string   `json:"title" jsonschema:"the role or engagement"`
	Company      string   `json:"company,omitempty"`
	Description  string   `json:"description,omitempty"`
	Requirements []string `json:"requirements" jsonschema:"what it asks for, one statement each (1 to 50)"`
	TraceID      string   `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// OpportunityUpdateInput is the input of opportunity_update.
type OpportunityUpdateInput struct {
	OpportunityID   string   `json:"opportunity_id"`
	ExpectedVersion int64    `json:"expected_version" jsonschema:"the version you read; the update fails with a conflict if the opportunity changed since. 0 creates it under opportunity_id if no opportunity has it"`
	Title           string   `json:"title" jsonschema:"the role or engagement"`
	Company         string   `json:"company,omitempty"`
	Description     string   `json:"description,omitempty"`
	Requirements    []string `json:"requirements" jsonschema:"what it asks for, one statement each (1 to 50)"`
	TraceID         string   `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// OpportunityOutput is the output of opportunity_create and opportunity_update.
type OpportunityOutput struct {
	Opportunity Opportunity `json:"opportunity"`
	TraceID     string      `json:"trace_id"`
}

// OpportunityGetInput is the input of opportunity_get.
type OpportunityGetInput struct {
	OpportunityIDs []string `json:"opportunity_ids" jsonschema:"the opportunities to read, 1 to 100"`
}

// OpportunityGetOutput is the output of opportunity_get.
type OpportunityGetOutput struct {
	Opportunities []Opportunity `json:"opportunities" jsonschema:"the opportunities found, in the order asked"`
	Missing       []string      `json:"missing" jsonschema:"ids you have no opportunity with"`
}

// ListInput is the input of opportunity_list and index_run_list.
type ListInput struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from a previous call, to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size (default 100, at most 1000)"`
}

// OpportunityListOutput is the output of opportunity_list.
type OpportunityListOutput struct {
	Opportunities []Opportunity `json:"opportunities"`
	NextCursor    string        `json:"next_cursor,omitempty" jsonschema:"set when more remain; pass it back as cursor"`
}
