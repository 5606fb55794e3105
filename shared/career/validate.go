package career

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The statuses of a validation.
const (
	Accepted    = "accepted"
	Rejected    = "rejected"
	NeedsReview = "needs_review"
)

// Severities of a finding: an error rejects a report, a warning sends it to review.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding is one thing validation found wrong with a report.
type Finding struct {
	Code     string `json:"code" jsonschema:"what kind of problem: schema, score_range, score_mismatch, atom_missing, no_evidence, evidence_mismatch, unlisted_atom, stale_evidence, weak_evidence, opportunity_missing"`
	Severity string `json:"severity" jsonschema:"error (rejects the report) or warning (needs review)"`
	Path     string `json:"path" jsonschema:"where in the report, such as requirements[2].atom_id"`
	Message  string `json:"message"`
}

// ValidateInput is the input of validate_match_report.
type ValidateInput struct {
	ReportID    string       `json:"report_id,omitempty" jsonschema:"a stored report, as match_opportunity returned it; give this or match_report"`
	MatchReport *MatchReport `json:"match_report,omitempty" jsonschema:"a report given inline; give this or report_id"`
	TraceID     string       `json:"trace_id,omitempty" jsonschema:"the call's trace: its audit events and the result's _meta use it; the call's own if omitted"`
}

// ValidateOutput is the output of validate_match_report.
type ValidateOutput struct {
	TraceID          string            `json:"trace_id"`
	ReportID         string            `json:"report_id,omitempty"`
	ValidationReport ValidationSummary `json:"validation_report"`
}

// ValidateMatchReport serves validate_match_report: schema and consistency
// checks of a stored or inline report against the caller's atoms.
func (s *Service) ValidateMatchReport(ctx context.Context, c tenant.Caller, in ValidateInput) (ValidateOutput, error) {
	trace, err := traceID(ctx, in.TraceID)
	if err != nil {
		return ValidateOutput{}, err
	}
	var r MatchReport
	switch {
	case (in.ReportID == "") == (in.MatchReport == nil):
		return ValidateOutput{}, fault.Invalid("report_id", "give exactly one of report_id and match_report")
	case in.MatchReport != nil:
		r = *in.MatchReport
	default:
		if err := validateID("report_id", in.ReportID); err != nil {
			return ValidateOutput{}, err
		}
		if r, err = s.loadReport(ctx, c, in.ReportID); err != nil {
			return ValidateOutput{}, err
		}
	}
	v, err := s.validate(ctx, c, r)
	if err != nil {
		return ValidateOutput{}, err
	}
	s.record(ctx, c, trace, audit.ValidationCompleted, "validate_match_report", "ok", map[string]any{
		"report_id": r.ReportID, "status": v.Status, "finding_count": v.FindingCount})
	return ValidateOutput{TraceID: trace, ReportID: r.ReportID, ValidationReport: v}, nil
}

// validate checks r and sums the findings up.
func (s *Service) validate(ctx context.Context, c tenant.Caller, r MatchReport) (ValidationSummary, error) {
	var fs []Finding
	add := func(code, sev, path, format string, args ...any) {
		fs = append(fs, Finding{Code: code, Severity: sev, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	inRange := func(path string, x, lo float64) {
		if math.IsNaN(x) || x < lo || x > 1 {
			add("score_range", SeverityError, path, "%g is outside [%g, 1]", x, lo)
		}
	}
	if !contains(Strategies, r.Strategy) {
		add("schema", SeverityError, "strategy", "%q is not a known strategy", r.Strategy)
	}
	if r.OpportunityID == "" && r.OpportunitySourceHash == "" {
		add("schema", SeverityError, "opportunity_id", "names no opportunity")
	}
	if len(r.Requirements) == 0 {
		add("schema", SeverityError, "requirements", "has no requirement evidence")
	}
	inRange("overall_score", r.OverallScore, 0)

	// The atoms the report cites, looked up in the caller's tenant only.
	cited := map[string]bool{}
	for _, e := range r.Requirements {
		if e.AtomID != "" {
			cited[e.AtomID] = true
		}
	}
	for _, id := range r.MatchedAtoms {
		cited[id] = true
	}
	atoms := map[string]Atom{}
	var ids []string
	for id := range cited {
		if validateID("atom_id", id) != nil {
			add("schema", SeverityError, "matched_atoms", "%q is not an atom id", id)
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for start := 0; start < len(ids); start += MaxBatchIDs {
		got, err := s.GetAtoms(ctx, c, AtomGetInput{AtomIDs: ids[start:min(start+MaxBatchIDs, len(ids))]})
		if err != nil {
			return ValidationSummary{}, err
		}
		for _, a := range got.Atoms {
			atoms[a.AtomID] = a
		}
	}

	sum := 0.0
	satisfiedBy := map[string]bool{}
	var unsatisfied []int
	for i, e := range r.Requirements {
		p := fmt.Sprintf("requirements[%d]", i)
		if e.Index != i {
			add("schema", SeverityError, p+".requirement_index", "is %d, want %d", e.Index, i)
		}
		inRange(p+".score", e.Score, 0)
		inRange(p+".coverage", e.Coverage, 0)
		if e.Cosine != nil {
			inRange(p+".cosine", *e.Cosine, -1)
		}
		sum += e.Score
		if !e.Satisfied {
			unsatisfied = append(unsatisfied, i)
		}
		if e.AtomID == "" {
			if e.Satisfied {
				add("no_evidence", SeverityError, p, "is claimed satisfied but names no atom")
			}
			continue
		}
		a, ok := atoms[e.AtomID]
		if !ok {
			add("atom_missing", SeverityError, p+".atom_id", "atom %q does not exist in your tenant", e.AtomID)
			continue
		}
		if e.Satisfied {
			satisfiedBy[e.AtomID] = true
			if len(e.MatchedTerms) == 0 && (e.Cosine == nil || *e.Cosine <= 0) {
				add("no_evidence", SeverityError, p, "is claimed satisfied by %q without matched terms or similarity", e.AtomID)
			}
			if e.Score < SatisfiedThreshold {
				add("weak_evidence", SeverityWarning, p+".score", "%g is below the %g a satisfied requirement needs", e.Score, SatisfiedThreshold)
			}
		}
		have := map[string]bool{}
		for _, w := range terms(a.Text) {
			have[w] = true
		}
		for _, w := range e.MatchedTerms {
			if !have[w] {
				add("evidence_mismatch", SeverityError, p+".matched_terms", "atom %q does not contain the term %q", e.AtomID, w)
			}
		}
		if e.AtomSourceHash != "" && e.AtomSourceHash != a.SourceHash {
			add("stale_evidence", SeverityWarning, p+".atom_source_hash", "atom %q has changed since the match; match again", e.AtomID)
		}
	}
	if len(r.Requirements) > 0 {
		if mean := round(sum / float64(len(r.Requirements))); math.Abs(mean-r.OverallScore) > 1e-3 {
			add("score_mismatch", SeverityError, "overall_score", "is %g but the requirements' scores average %g", r.OverallScore, mean)
		}
	}
	if !slices.Equal(unsatisfied, r.Unsatisfied) && !(len(unsatisfied) == 0 && len(r.Unsatisfied) == 0) {
		add("schema", SeverityError, "unsatisfied_requirements", "is %v but the evidence leaves %v unsatisfied", r.Unsatisfied, unsatisfied)
	}
	for i, id := range r.MatchedAtoms {
		if !satisfiedBy[id] {
			add("no_evidence", SeverityError, fmt.Sprintf("matched_atoms[%d]", i), "atom %q is claimed as a match but satisfies no requirement", id)
		}
	}
	for id := range satisfiedBy {
		if !slices.Contains(r.MatchedAtoms, id) {
			add("unlisted_atom", SeverityWarning, "matched_atoms", "atom %q satisfies a requirement but is not listed", id)
		}
	}
	if r.OpportunityID != "" && validateID("opportunity_id", r.OpportunityID) == nil {
		if _, err := s.loadOpportunity(ctx, c, r.OpportunityID); fault.KindOf(err) == fault.KindNotFound {
			add("opportunity_missing", SeverityWarning, "opportunity_id", "opportunity %q does not exist in your tenant", r.OpportunityID)
		} else if err != nil {
			return ValidationSummary{}, err
		}
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		return 0
	})
	status := Accepted
	for _, f := range fs {
		if f.Severity == SeverityError {
			status = Rejected
			break
		}
		status = NeedsReview
	}
	if fs == nil {
		fs = []Finding{}
	}
	return ValidationSummary{Status: status, FindingCount: len(fs), Findings: fs}, nil
}
