package career

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
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
	Code     string `json:"code" jsonschema:"what kind of problem: schema, score_range, score_mismatch (a score disagrees with the strategy's rule or the requirements'), threshold_mismatch (satisfied disagrees with the threshold), evidence_mismatch (terms, coverage or similarity are not what the requirement and atom give), no_evidence, atom_missing, unlisted_atom, stale_evidence (an atom changed since), stale_opportunity (the opportunity changed since), opportunity_mismatch, opportunity_missing, unverified"`
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
// checks of a stored or inline report, recomputed from the caller's atoms and
// opportunity.
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

// tolerance is how far a reported figure may lie from the one recomputed:
// reports round to 4 decimals, and scores combine rounded figures.
const tolerance = 1e-3

// findings collects what validation finds.
type findings []Finding

func (fs *findings) add(code, severity, path, format string, args ...any) {
	*fs = append(*fs, Finding{Code: code, Severity: severity, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (fs *findings) inRange(path string, x, lo float64) {
	if math.IsNaN(x) || x < lo || x > 1 {
		fs.add("score_range", SeverityError, path, "%g is outside [%g, 1]", x, lo)
	}
}

// validate recomputes r from the rules of its strategy and the caller's data.
//
// A report is authentic when the caller's stored report under its id is the
// same report: match_opportunity stores every report it makes. An authentic
// report that cites an atom or opportunity changed (or gone) since is stale,
// and goes to review. Any other report must agree with the atoms and the
// opportunity as they are now: it was not made from them, so disagreement is
// an error, not a change.
func (s *Service) validate(ctx context.Context, c tenant.Caller, r MatchReport) (ValidationSummary, error) {
	authentic, err := s.authentic(ctx, c, r)
	if err != nil {
		return ValidationSummary{}, err
	}
	v := &reportCheck{r: r, drift: SeverityError}
	if authentic {
		v.drift = SeverityWarning
	}
	v.checkShape()
	if v.atoms, err = s.citedAtoms(ctx, c, r, &v.fs); err != nil {
		return ValidationSummary{}, err
	}
	if err := s.checkOpportunity(ctx, c, r, authentic, &v.fs); err != nil {
		return ValidationSummary{}, err
	}
	if r.Strategy == StrategyHybrid {
		if v.sims, err = s.similarities(ctx, c, r, v.atoms, &v.fs); err != nil {
			return ValidationSummary{}, err
		}
	}
	for i, e := range r.Requirements {
		v.checkRequirement(i, e)
	}
	v.checkTotals()
	v.checkMatchedAtoms()
	return summarize(v.fs), nil
}

// reportCheck is one validation of a report against the caller's data as it
// is now: the atoms the report cites, the similarities recomputed for it
// (hybrid reports), and what was found so far.
type reportCheck struct {
	r     MatchReport
	atoms map[string]Atom
	sims  *similarities
	// drift is the severity of a difference from the caller's data: a
	// warning for an authentic report (the data changed since), else an error.
	drift string
	fs    findings
}

// checkShape checks what the report must have whatever the data: a known
// strategy, an opportunity, requirement evidence, an overall score in range.
func (v *reportCheck) checkShape() {
	if !contains(Strategies, v.r.Strategy) {
		v.fs.add("schema", SeverityError, "strategy", "%q is not a known strategy", v.r.Strategy)
	}
	if v.r.OpportunityID == "" && v.r.OpportunitySourceHash == "" {
		v.fs.add("schema", SeverityError, "opportunity_id", "names no opportunity")
	}
	if len(v.r.Requirements) == 0 {
		v.fs.add("schema", SeverityError, "requirements", "has no requirement evidence")
	}
	v.fs.inRange("overall_score", v.r.OverallScore, 0)
}

// checkRequirement checks the evidence of requirement i: its own figures,
// then the rule of the strategy, then the atom it cites.
func (v *reportCheck) checkRequirement(i int, e Evidence) {
	p := fmt.Sprintf("requirements[%d]", i)
	v.checkFigures(p, i, e)
	reqTerms := unique(terms(e.Requirement))
	inReq := set(reqTerms...)
	for _, w := range e.MatchedTerms {
		if !inReq[w] {
			v.fs.add("evidence_mismatch", SeverityError, p+".matched_terms", "%q is not a term of the requirement %q", w, e.Requirement)
		}
	}
	if e.AtomID == "" {
		v.checkNoAtom(p, e)
		return
	}
	v.checkScore(p, e)
	v.checkAgainstAtom(p, i, e, reqTerms, inReq)
}

// checkFigures checks that requirement i's index is its position and its
// figures lie in range.
func (v *reportCheck) checkFigures(p string, i int, e Evidence) {
	if e.Index != i {
		v.fs.add("schema", SeverityError, p+".requirement_index", "is %d, want %d", e.Index, i)
	}
	v.fs.inRange(p+".score", e.Score, 0)
	v.fs.inRange(p+".coverage", e.Coverage, 0)
	if e.Cosine != nil {
		v.fs.inRange(p+".cosine", *e.Cosine, -1)
	}
}

// checkNoAtom checks that evidence citing no atom claims nothing.
func (v *reportCheck) checkNoAtom(p string, e Evidence) {
	if e.Satisfied {
		v.fs.add("no_evidence", SeverityError, p, "is claimed satisfied but names no atom")
	}
	if e.Score != 0 || e.Coverage != 0 || e.Cosine != nil || len(e.MatchedTerms) > 0 {
		v.fs.add("score_mismatch", SeverityError, p, "names no atom but claims evidence (score %g, coverage %g, %d terms)", e.Score, e.Coverage, len(e.MatchedTerms))
	}
}

// checkScore checks evidence against the rule of the report's strategy: a
// similarity exactly when hybrid, the score the rule gives, satisfied exactly
// at or above the threshold, and a satisfied claim backed by terms or
// similarity.
func (v *reportCheck) checkScore(p string, e Evidence) {
	hybrid := v.r.Strategy == StrategyHybrid
	switch {
	case hybrid && e.Cosine == nil:
		v.fs.add("schema", SeverityError, p+".cosine", "is missing: hybrid evidence has a similarity")
	case !hybrid && e.Cosine != nil:
		v.fs.add("schema", SeverityError, p+".cosine", "is given, but %s uses no embeddings", v.r.Strategy)
	}
	if want := evidenceScore(e.Coverage, e.Cosine); math.Abs(want-e.Score) > tolerance {
		v.fs.add("score_mismatch", SeverityError, p+".score", "is %g, but %s gives %g for this evidence", e.Score, v.r.Strategy, round(want))
	}
	if e.Satisfied != (e.Score >= SatisfiedThreshold) {
		v.fs.add("threshold_mismatch", SeverityError, p+".satisfied", "is %v, but a score of %g is %s the threshold %g",
			e.Satisfied, e.Score, map[bool]string{true: "at or above", false: "below"}[e.Score >= SatisfiedThreshold], SatisfiedThreshold)
	}
	if e.Satisfied && len(e.MatchedTerms) == 0 && (e.Cosine == nil || *e.Cosine <= 0) {
		v.fs.add("no_evidence", SeverityError, p, "is claimed satisfied by %q without matched terms or similarity", e.AtomID)
	}
}

// checkAgainstAtom recomputes requirement i's evidence from the requirement
// and the atom it cites, as it is now: a missing or changed atom is drift.
func (v *reportCheck) checkAgainstAtom(p string, i int, e Evidence, reqTerms []string, inReq map[string]bool) {
	a, ok := v.atoms[e.AtomID]
	if !ok {
		v.fs.add("atom_missing", v.drift, p+".atom_id", "atom %q does not exist in your tenant", e.AtomID)
		return
	}
	if e.AtomSourceHash != "" && e.AtomSourceHash != a.SourceHash {
		// The atom changed: its evidence cannot be recomputed.
		v.fs.add("stale_evidence", v.drift, p+".atom_source_hash", "atom %q has changed since the match; match again", e.AtomID)
		return
	}
	inAtom := set(terms(a.Text)...)
	shared, cov := coverage(reqTerms, inAtom)
	for _, w := range e.MatchedTerms {
		if inReq[w] && !inAtom[w] {
			v.fs.add("evidence_mismatch", SeverityError, p+".matched_terms", "atom %q does not contain the term %q", e.AtomID, w)
		}
	}
	if !slices.Equal(sorted(shared), sorted(e.MatchedTerms)) {
		v.fs.add("evidence_mismatch", SeverityError, p+".matched_terms", "are %q, but the requirement and atom %q share %q", e.MatchedTerms, e.AtomID, shared)
	}
	if math.Abs(cov-e.Coverage) > tolerance {
		v.fs.add("evidence_mismatch", SeverityError, p+".coverage", "is %g, but atom %q covers %g of the requirement's terms", e.Coverage, e.AtomID, round(cov))
	}
	if cos, ok := v.sims.of(i, e.AtomID); ok && e.Cosine != nil && math.Abs(cos-*e.Cosine) > tolerance {
		v.fs.add("evidence_mismatch", SeverityError, p+".cosine", "is %g, but the requirement and atom %q have similarity %g", *e.Cosine, e.AtomID, cos)
	}
}

// checkTotals checks the figures over all requirements: the overall score
// is their mean, and the unsatisfied list names those not satisfied.
func (v *reportCheck) checkTotals() {
	sum := 0.0
	var unsatisfied []int
	for i, e := range v.r.Requirements {
		sum += e.Score
		if !e.Satisfied {
			unsatisfied = append(unsatisfied, i)
		}
	}
	if len(v.r.Requirements) > 0 {
		if mean := round(sum / float64(len(v.r.Requirements))); math.Abs(mean-v.r.OverallScore) > tolerance {
			v.fs.add("score_mismatch", SeverityError, "overall_score", "is %g but the requirements' scores average %g", v.r.OverallScore, mean)
		}
	}
	if !slices.Equal(unsatisfied, v.r.Unsatisfied) && !(len(unsatisfied) == 0 && len(v.r.Unsatisfied) == 0) {
		v.fs.add("schema", SeverityError, "unsatisfied_requirements", "is %v but the evidence leaves %v unsatisfied", v.r.Unsatisfied, unsatisfied)
	}
}

// checkMatchedAtoms checks that matched_atoms lists exactly the atoms that
// satisfy a requirement: one listed without is an error, one unlisted a
// warning.
func (v *reportCheck) checkMatchedAtoms() {
	satisfiedBy := map[string]bool{}
	for _, e := range v.r.Requirements {
		if e.AtomID != "" && e.Satisfied {
			satisfiedBy[e.AtomID] = true
		}
	}
	for i, id := range v.r.MatchedAtoms {
		if !satisfiedBy[id] {
			v.fs.add("no_evidence", SeverityError, fmt.Sprintf("matched_atoms[%d]", i), "atom %q is claimed as a match but satisfies no requirement", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(satisfiedBy)) {
		if !slices.Contains(v.r.MatchedAtoms, id) {
			v.fs.add("unlisted_atom", SeverityWarning, "matched_atoms", "atom %q satisfies a requirement but is not listed", id)
		}
	}
}

// summarize orders findings by path and decides the status: rejected on an
// error, needs_review on warnings only.
func summarize(fs findings) ValidationSummary {
	slices.SortStableFunc(fs, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	status := Accepted
	for _, f := range fs {
		if f.Severity == SeverityError {
			status = Rejected
			break
		}
		status = NeedsReview
	}
	if fs == nil {
		fs = findings{}
	}
	return ValidationSummary{Status: status, FindingCount: len(fs), Findings: fs}
}

// authentic reports whether the caller's stored report under r's id is r.
func (s *Service) authentic(ctx context.Context, c tenant.Caller, r MatchReport) (bool, error) {
	if validateID("report_id", r.ReportID) != nil {
		return false, nil
	}
	stored, err := s.loadReport(ctx, c, r.ReportID)
	if fault.KindOf(err) == fault.KindNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	a, _ := json.Marshal(stored) // reports always encode
	b, _ := json.Marshal(r)
	return bytes.Equal(a, b), nil
}

// citedAtoms returns the atoms r cites that the caller has, by id.
func (s *Service) citedAtoms(ctx context.Context, c tenant.Caller, r MatchReport, fs *findings) (map[string]Atom, error) {
	cited := map[string]bool{}
	for _, e := range r.Requirements {
		if e.AtomID != "" {
			cited[e.AtomID] = true
		}
	}
	for _, id := range r.MatchedAtoms {
		cited[id] = true
	}
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(cited)) {
		if validateID("atom_id", id) != nil {
			fs.add("schema", SeverityError, "matched_atoms", "%q is not an atom id", id)
			continue
		}
		ids = append(ids, id)
	}
	atoms := map[string]Atom{}
	for start := 0; start < len(ids); start += MaxBatchIDs {
		got, err := s.GetAtoms(ctx, c, AtomGetInput{AtomIDs: ids[start:min(start+MaxBatchIDs, len(ids))]})
		if err != nil {
			return nil, err
		}
		for _, a := range got.Atoms {
			atoms[a.AtomID] = a
		}
	}
	return atoms, nil
}

// checkOpportunity compares the opportunity r names with the caller's: its
// source hash, and the count and texts of its requirements.
func (s *Service) checkOpportunity(ctx context.Context, c tenant.Caller, r MatchReport, authentic bool, fs *findings) error {
	if r.OpportunityID == "" {
		return nil // matched inline: nothing stored to compare with
	}
	if validateID("opportunity_id", r.OpportunityID) != nil {
		fs.add("schema", SeverityError, "opportunity_id", "%q is not an opportunity id", r.OpportunityID)
		return nil
	}
	code, severity, since := "opportunity_mismatch", SeverityError, ""
	if authentic {
		code, severity, since = "stale_opportunity", SeverityWarning, " (it changed since the match; match again)"
	}
	o, err := s.loadOpportunity(ctx, c, r.OpportunityID)
	if fault.KindOf(err) == fault.KindNotFound {
		fs.add("opportunity_missing", severity, "opportunity_id", "opportunity %q does not exist in your tenant", r.OpportunityID)
		return nil
	}
	if err != nil {
		return err
	}
	if r.OpportunitySourceHash != o.SourceHash {
		fs.add(code, severity, "opportunity_source_hash", "is %q, but opportunity %q has %q%s", r.OpportunitySourceHash, o.OpportunityID, o.SourceHash, since)
	}
	if len(r.Requirements) != len(o.Requirements) {
		fs.add(code, severity, "requirements", "has %d requirements, but opportunity %q has %d%s", len(r.Requirements), o.OpportunityID, len(o.Requirements), since)
	}
	for i, e := range r.Requirements[:min(len(r.Requirements), len(o.Requirements))] {
		if e.Requirement != o.Requirements[i] {
			fs.add(code, severity, fmt.Sprintf("requirements[%d].requirement", i), "is %q, but requirement %d of opportunity %q is %q%s", e.Requirement, i, o.OpportunityID, o.Requirements[i], since)
		}
	}
	return nil
}

// similarities are the cosine similarities of a hybrid report, recomputed:
// by requirement index, then atom id.
type similarities struct{ cos map[int]map[string]float64 }

// of returns the recomputed similarity of requirement i and atom id; false if
// it was not recomputed. A nil *similarities recomputed none.
func (sm *similarities) of(i int, id string) (float64, bool) {
	if sm == nil {
		return 0, false
	}
	cos, ok := sm.cos[i][id]
	return cos, ok
}

// similarities recomputes the similarity of each requirement of a hybrid
// report and the unchanged atom it cites, as matching did: with the
// embedder the report names. Without that embedder nothing is recomputed and
// a warning says so.
func (s *Service) similarities(ctx context.Context, c tenant.Caller, r MatchReport, atoms map[string]Atom, fs *findings) (*similarities, error) {
	var cited []Atom
	var reqs []string
	var idx []int
	for i, e := range r.Requirements {
		if a, ok := atoms[e.AtomID]; ok && (e.AtomSourceHash == "" || e.AtomSourceHash == a.SourceHash) {
			cited = append(cited, a)
			reqs = append(reqs, e.Requirement)
			idx = append(idx, i)
		}
	}
	if len(cited) == 0 {
		return nil, nil
	}
	emb := s.embedder
	if emb == nil || emb.Provider() != r.EmbeddingProvider || emb.Model() != r.EmbeddingModel || emb.Dims() != r.EmbeddingDims {
		have := "none"
		if emb != nil {
			have = fmt.Sprintf("%s %s (%d dims)", emb.Provider(), emb.Model(), emb.Dims())
		}
		fs.add("unverified", SeverityWarning, "embedding_model", "similarities were not recomputed: the report's embedder is %s %s (%d dims), this server's %s",
			r.EmbeddingProvider, r.EmbeddingModel, r.EmbeddingDims, have)
		return nil, nil
	}
	vecs, err := s.atomVectors(ctx, c, emb, cited)
	if err != nil {
		return nil, err
	}
	q, err := emb.Embed(ctx, provider.EmbedRequest{Texts: reqs, Purpose: provider.ForQuery})
	if err != nil {
		return nil, fault.Unavailable(err, "embedding the requirements failed; retry")
	}
	sm := &similarities{cos: map[int]map[string]float64{}}
	for j, i := range idx {
		sm.cos[i] = map[string]float64{cited[j].AtomID: round(cosine(q.Vectors[j], vecs[j]))}
	}
	return sm, nil
}

func sorted(ws []string) []string { return slices.Sorted(slices.Values(ws)) }
