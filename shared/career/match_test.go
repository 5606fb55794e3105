package career_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestMatching(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		for _, tc := range []struct {
			name string
			fn   func(t *testing.T, tbl store.Table)
		}{
			{"AtomsAndOpportunitiesUpdateOnlyFromTheVersionRead", testVersions},
			{"MatchingGivesPerRequirementEvidenceAndTheSameReportTwice", testMatch},
			{"ValidationRejectsReportsThatDoNotHoldUp", testValidate},
			{"TenantsNeverSeeEachOthersCareerData", testCareerTenants},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.fn(t, tbl) })
		}
	})
}

func testVersions(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	trace := audit.NewTraceID()
	a, err := svc.CreateAtom(ctx, c, career.AtomCreateInput{Text: "Wrote Go", Section: "Skills", TraceID: trace})
	if err != nil || a.Atom.Version != 1 {
		t.Fatalf("CreateAtom = %+v, %v", a, err)
	}
	up, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.Atom.AtomID, ExpectedVersion: 1, Text: "Wrote a lot of Go", TraceID: trace})
	if err != nil || up.Atom.Version != 2 || up.Atom.SourceHash == a.Atom.SourceHash || !up.Atom.CreatedAt.Equal(a.Atom.CreatedAt) {
		t.Fatalf("UpdateAtom = %+v, %v", up, err)
	}
	_, err = svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.Atom.AtomID, ExpectedVersion: 1, Text: "stale write", TraceID: trace})
	wantKind(t, err, fault.KindConflict, "")
	_, err = svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.Atom.AtomID, ExpectedVersion: 0, Text: "create over it", TraceID: trace})
	wantKind(t, err, fault.KindConflict, "")
	_, err = svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: "never", ExpectedVersion: 3, Text: "x", TraceID: trace})
	wantKind(t, err, fault.KindNotFound, "")
	if made, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: "mine", ExpectedVersion: 0, Text: "made by update", TraceID: trace}); err != nil || made.Atom.Version != 1 {
		t.Fatalf("UpdateAtom(version 0) = %+v, %v", made, err)
	}
	got, err := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{a.Atom.AtomID, "nope", "mine"}})
	if err != nil || len(got.Atoms) != 2 || got.Atoms[0].Text != "Wrote a lot of Go" || !cmp.Equal(got.Missing, []string{"nope"}) {
		t.Errorf("GetAtoms = %+v, %v", got, err)
	}

	o, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: "Go engineer", Requirements: []string{"Go"}, TraceID: trace})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.UpdateOpportunity(ctx, c, career.OpportunityUpdateInput{OpportunityID: o.Opportunity.OpportunityID, ExpectedVersion: 2, Title: "x", Requirements: []string{"y"}, TraceID: trace})
	wantKind(t, err, fault.KindConflict, "")
	up2, err := svc.UpdateOpportunity(ctx, c, career.OpportunityUpdateInput{OpportunityID: o.Opportunity.OpportunityID, ExpectedVersion: 1, Title: "Senior Go engineer", Requirements: []string{"Go", "AWS"}, TraceID: trace})
	if err != nil || up2.Opportunity.Version != 2 || len(up2.Opportunity.Requirements) != 2 {
		t.Fatalf("UpdateOpportunity = %+v, %v", up2, err)
	}
	// Every change, and only the changes that landed, is in the audit trail
	// with the id and the versions it moved between.
	var changes []string
	for _, e := range events(t, tbl, c, trace) {
		id := e.Detail["atom_id"]
		if id == nil {
			id = e.Detail["opportunity_id"]
		}
		changes = append(changes, fmt.Sprintf("%s %v %v->%v %v", e.Type, id, e.Detail["previous_version"], e.Detail["version"], e.Detail["source_hash"] != nil))
	}
	oid := o.Opportunity.OpportunityID
	want := []string{
		"AtomCreated " + a.Atom.AtomID + " 0->1 true",
		"AtomUpdated " + a.Atom.AtomID + " 1->2 true",
		"AtomCreated mine 0->1 true",
		"OpportunityCreated " + oid + " 0->1 true",
		"OpportunityUpdated " + oid + " 1->2 true",
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
	list, err := svc.ListOpportunities(ctx, c, career.ListInput{})
	if err != nil || len(list.Opportunities) != 1 || list.Opportunities[0].Title != "Senior Go engineer" {
		t.Errorf("ListOpportunities = %+v, %v", list, err)
	}
	for _, tc := range []struct {
		name, field string
		call        func() error
	}{
		{"EmptyText", "text", func() error {
			_, err := svc.CreateAtom(ctx, c, career.AtomCreateInput{Text: " "})
			return err
		}},
		{"NoRequirement", "requirements", func() error {
			_, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: "x"})
			return err
		}},
		{"BlankRequirement", "requirements[1]", func() error {
			_, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: "x", Requirements: []string{"ok", " "}})
			return err
		}},
		{"BadID", "atom_ids[0]", func() error {
			_, err := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{"a#b"}})
			return err
		}},
		{"BadCursor", "cursor", func() error {
			_, err := svc.ListAtoms(ctx, c, career.AtomListInput{Cursor: "!!!"})
			return err
		}},
		{"NegativeVer", "expected_version", func() error {
			_, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: "a", ExpectedVersion: -1, Text: "x"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantKind(t, tc.call(), fault.KindInvalid, tc.field)
		})
	}
}

// seedAtoms ingests the fixture resume for c.
func seedAtoms(t *testing.T, svc *career.Service, c tenant.Caller) career.IngestResumeOutput {
	t.Helper()
	out, err := svc.IngestResume(context.Background(), c, career.IngestResumeInput{FileName: "dana.md", ContentBase64: b64(readFixture(t, "dana-lee.md")), Persist: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range out.Atoms {
		if _, err := svc.UpdateAtom(context.Background(), c, career.AtomUpdateInput{AtomID: a.AtomID, Text: a.Text, Section: a.Section, ResumeID: a.ResumeID}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var sampleOpportunity = career.InlineOpportunity{
	Title:        "Senior Go engineer",
	Company:      "Globex",
	Requirements: []string{"Go services on AWS Lambda", "DynamoDB data modelling", "Mentoring engineers", "Kubernetes operators in Rust"},
}

func testMatch(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	seedAtoms(t, svc, c)
	o, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: sampleOpportunity.Title, Company: sampleOpportunity.Company, Requirements: sampleOpportunity.Requirements})
	if err != nil {
		t.Fatal(err)
	}
	trace := audit.NewTraceID()
	first, err := svc.MatchOpportunity(ctx, c, career.MatchInput{OpportunityID: o.Opportunity.OpportunityID, ResumeID: "resume-0", TraceID: trace})
	if err != nil {
		t.Fatal(err)
	}
	r := first.MatchReport
	var got []string
	for _, e := range r.Requirements {
		got = append(got, e.Requirement+" -> "+map[bool]string{true: "satisfied", false: "unsatisfied"}[e.Satisfied])
		if e.Satisfied && (e.AtomID == "" || len(e.MatchedTerms) == 0) {
			t.Errorf("requirement %d satisfied without evidence: %+v", e.Index, e)
		}
	}
	want := []string{"Go services on AWS Lambda -> satisfied", "DynamoDB data modelling -> satisfied", "Mentoring engineers -> satisfied", "Kubernetes operators in Rust -> unsatisfied"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evidence mismatch (-want +got):\n%s", diff)
	}
	if !cmp.Equal(r.Unsatisfied, []int{3}) || len(r.MatchedAtoms) == 0 || r.OverallScore <= 0 || r.OverallScore >= 1 || r.Strategy != career.StrategyLexical {
		t.Errorf("report = %+v", r)
	}
	if first.ValidationReport.Status != career.Accepted {
		t.Errorf("the fresh report validates as %+v", first.ValidationReport)
	}
	// The same inputs give the same report, byte for byte; only the trace differs.
	second, err := svc.MatchOpportunity(ctx, c, career.MatchInput{OpportunityID: o.Opportunity.OpportunityID})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(first.MatchReport)
	b2, _ := json.Marshal(second.MatchReport)
	if string(b1) != string(b2) || second.TraceID == first.TraceID {
		t.Errorf("two runs differ:\n%s\n%s", b1, b2)
	}
	// Inline, the same opportunity matches the same atoms.
	inline, err := svc.MatchOpportunity(ctx, c, career.MatchInput{Opportunity: &sampleOpportunity})
	if err != nil || !cmp.Equal(inline.MatchReport.MatchedAtoms, r.MatchedAtoms) || inline.MatchReport.OverallScore != r.OverallScore {
		t.Errorf("inline match = %+v, %v", inline.MatchReport, err)
	}
	var types []string
	for _, e := range events(t, tbl, c, trace) {
		types = append(types, e.Type)
		if e.Type == audit.RunStarted && e.Detail["resume_id"] != "resume-0" {
			t.Errorf("RunStarted lacks the resume id: %+v", e.Detail)
		}
	}
	if diff := cmp.Diff([]string{audit.RunStarted, audit.MatchCompleted, audit.ValidationCompleted, audit.RunCompleted}, types); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
	for name, in := range map[string]career.MatchInput{
		"opportunity_id":              {},
		"strategy":                    {OpportunityID: "x", Strategy: "magic"},
		"k_lex":                       {OpportunityID: "x", KLex: 1000},
		"opportunity.requirements":    {Opportunity: &career.InlineOpportunity{Title: "x"}},
		"opportunity.title":           {Opportunity: &career.InlineOpportunity{Requirements: []string{"x"}}},
		"resume_id":                   {OpportunityID: "x", ResumeID: "../r"},
		"opportunity.requirements[0]": {Opportunity: &career.InlineOpportunity{Title: "x", Requirements: []string{""}}},
	} {
		_, err := svc.MatchOpportunity(ctx, c, in)
		wantKind(t, err, fault.KindInvalid, name)
	}
	_, err = svc.MatchOpportunity(ctx, c, career.MatchInput{OpportunityID: "missing"})
	wantKind(t, err, fault.KindNotFound, "")
	// Without an embedder the hybrid strategy is unavailable, whatever the
	// opportunity: the server's configuration is checked before any read.
	for _, in := range []career.MatchInput{
		{OpportunityID: o.Opportunity.OpportunityID, Strategy: career.StrategyHybrid},
		{Opportunity: &sampleOpportunity, Strategy: career.StrategyHybrid},
		{OpportunityID: "missing", Strategy: career.StrategyHybrid},
	} {
		_, err = svc.MatchOpportunity(ctx, c, in)
		wantKind(t, err, fault.KindUnavailable, "")
		if !strings.Contains(err.Error(), "embedder") {
			t.Errorf("hybrid without an embedder: %v, want it to name the missing embedder", err)
		}
	}
}

func testValidate(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	seedAtoms(t, svc, c)
	o, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: sampleOpportunity.Title, Company: sampleOpportunity.Company, Requirements: sampleOpportunity.Requirements})
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.MatchOpportunity(ctx, c, career.MatchInput{OpportunityID: o.Opportunity.OpportunityID})
	if err != nil {
		t.Fatal(err)
	}
	good := m.MatchReport
	byID, err := svc.ValidateMatchReport(ctx, c, career.ValidateInput{ReportID: good.ReportID})
	if err != nil || byID.ValidationReport.Status != career.Accepted || byID.ValidationReport.FindingCount != 0 {
		t.Fatalf("validating the stored report = %+v, %v", byID, err)
	}
	// An atom of another tenant, with the same text as the one cited.
	other := newCaller(t, tbl)
	cited := good.Requirements[0]
	got, _ := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{cited.AtomID}})
	foreign, err := svc.CreateAtom(ctx, other, career.AtomCreateInput{Text: got.Atoms[0].Text, Section: got.Atoms[0].Section})
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(f func(r *career.MatchReport)) *career.MatchReport {
		b, _ := json.Marshal(good)
		var r career.MatchReport
		json.Unmarshal(b, &r)
		f(&r)
		return &r
	}
	// recount keeps a tampered report's overall score consistent, so that
	// only the tampering is found.
	recount := func(r *career.MatchReport) {
		sum := 0.0
		for _, e := range r.Requirements {
			sum += e.Score
		}
		r.OverallScore = math.Round(sum/float64(len(r.Requirements))*1e4) / 1e4
	}
	for _, tc := range []struct {
		name       string
		report     *career.MatchReport
		status     string
		code, path string // a finding the report must get
	}{
		{"AsMatched", tamper(func(r *career.MatchReport) {}), career.Accepted, "", ""},
		{"ScoreOutOfRange", tamper(func(r *career.MatchReport) { r.Requirements[0].Score = 1.5 }), career.Rejected, "score_range", "requirements[0].score"},
		{"OverallDisagrees", tamper(func(r *career.MatchReport) { r.OverallScore = 0.99 }), career.Rejected, "score_mismatch", "overall_score"},
		{"AtomThatDoesNotExist", tamper(func(r *career.MatchReport) { r.Requirements[0].AtomID = "atom_nowhere" }), career.Rejected, "atom_missing", "requirements[0].atom_id"},
		{"AtomOfAnotherTenant", tamper(func(r *career.MatchReport) {
			r.Requirements[0].AtomID = foreign.Atom.AtomID
			r.MatchedAtoms[0] = foreign.Atom.AtomID
		}), career.Rejected, "atom_missing", "requirements[0].atom_id"},
		{"ClaimWithoutEvidence", tamper(func(r *career.MatchReport) {
			r.Requirements[3].Satisfied = true
			r.Unsatisfied = nil
		}), career.Rejected, "no_evidence", "requirements[3]"},
		{"SatisfiedBelowTheThreshold", tamper(func(r *career.MatchReport) {
			r.Requirements[0].Score, r.Requirements[0].Coverage = 0.4, 0.4
			recount(r)
		}), career.Rejected, "threshold_mismatch", "requirements[0].satisfied"},
		{"CoverageOneWithALowScore", tamper(func(r *career.MatchReport) { r.Requirements[0].Coverage = 1 }), career.Rejected, "score_mismatch", "requirements[0].score"},
		{"CoverageAndScoreInflatedTogether", tamper(func(r *career.MatchReport) {
			r.Requirements[0].Coverage, r.Requirements[0].Score = 1, 1
			recount(r)
		}), career.Rejected, "evidence_mismatch", "requirements[0].coverage"},
		{"MatchedAtomNothingSupports", tamper(func(r *career.MatchReport) { r.MatchedAtoms = append(r.MatchedAtoms, r.Requirements[3].AtomID) }), career.Rejected, "no_evidence", "matched_atoms[3]"},
		{"TermTheAtomLacks", tamper(func(r *career.MatchReport) {
			r.Requirements[0].MatchedTerms = append(r.Requirements[0].MatchedTerms, "kubernetes")
		}), career.Rejected, "evidence_mismatch", "requirements[0].matched_terms"},
		{"TermTheRequirementLacks", tamper(func(r *career.MatchReport) {
			// "dynamodb" is in the atom, not in "Go services on AWS Lambda".
			r.Requirements[0].MatchedTerms = append(r.Requirements[0].MatchedTerms, "dynamodb")
		}), career.Rejected, "evidence_mismatch", "requirements[0].matched_terms"},
		{"RequirementTextSwapped", tamper(func(r *career.MatchReport) {
			r.Requirements[0].Requirement, r.Requirements[1].Requirement = r.Requirements[1].Requirement, r.Requirements[0].Requirement
		}), career.Rejected, "opportunity_mismatch", "requirements[0].requirement"},
		{"ExtraRequirement", tamper(func(r *career.MatchReport) {
			r.Requirements = append(r.Requirements, career.Evidence{Index: 4, Requirement: "Rust", MatchedTerms: []string{}})
			r.Unsatisfied = append(r.Unsatisfied, 4)
			recount(r)
		}), career.Rejected, "opportunity_mismatch", "requirements"},
		{"WrongOpportunitySourceHash", tamper(func(r *career.MatchReport) { r.OpportunitySourceHash = "0123456789abcdef" }), career.Rejected, "opportunity_mismatch", "opportunity_source_hash"},
		{"OpportunityOfNobody", tamper(func(r *career.MatchReport) { r.OpportunityID = "opp_nowhere" }), career.Rejected, "opportunity_missing", "opportunity_id"},
		{"CosineInALexicalReport", tamper(func(r *career.MatchReport) {
			cos := 0.9
			r.Requirements[0].Cosine = &cos
		}), career.Rejected, "schema", "requirements[0].cosine"},
		{"UnknownStrategy", tamper(func(r *career.MatchReport) { r.Strategy = "vibes" }), career.Rejected, "schema", "strategy"},
		{"UnlistedAtom", tamper(func(r *career.MatchReport) { r.MatchedAtoms = r.MatchedAtoms[1:] }), career.NeedsReview, "unlisted_atom", "matched_atoms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := svc.ValidateMatchReport(ctx, c, career.ValidateInput{MatchReport: tc.report})
			if err != nil {
				t.Fatal(err)
			}
			wantFinding(t, out.ValidationReport, tc.status, tc.code, tc.path)
		})
	}
	// Changes after the match send the stored report (by id or given back
	// unchanged) to review: stale, not forged.
	e := good.Requirements[0]
	atoms, _ := svc.GetAtoms(ctx, c, career.AtomGetInput{AtomIDs: []string{e.AtomID}})
	a := atoms.Atoms[0]
	if _, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.AtomID, ExpectedVersion: a.Version, Text: a.Text + " Also on call.", Section: a.Section}); err != nil {
		t.Fatal(err)
	}
	stale, err := svc.ValidateMatchReport(ctx, c, career.ValidateInput{ReportID: good.ReportID})
	if err != nil {
		t.Fatal(err)
	}
	wantFinding(t, stale.ValidationReport, career.NeedsReview, "stale_evidence", "requirements[0].atom_source_hash")
	if _, err := svc.UpdateOpportunity(ctx, c, career.OpportunityUpdateInput{OpportunityID: o.Opportunity.OpportunityID, ExpectedVersion: 1,
		Title: sampleOpportunity.Title, Requirements: append([]string{"Terraform"}, sampleOpportunity.Requirements...)}); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]career.ValidateInput{"ByID": {ReportID: good.ReportID}, "Inline": {MatchReport: tamper(func(*career.MatchReport) {})}} {
		t.Run("StaleOpportunity"+name, func(t *testing.T) {
			out, err := svc.ValidateMatchReport(ctx, c, in)
			if err != nil {
				t.Fatal(err)
			}
			wantFinding(t, out.ValidationReport, career.NeedsReview, "stale_opportunity", "opportunity_source_hash")
			wantFinding(t, out.ValidationReport, career.NeedsReview, "stale_opportunity", "requirements")
		})
	}
	_, err = svc.ValidateMatchReport(ctx, c, career.ValidateInput{})
	wantKind(t, err, fault.KindInvalid, "report_id")
	_, err = svc.ValidateMatchReport(ctx, c, career.ValidateInput{ReportID: "mr_missing"})
	wantKind(t, err, fault.KindNotFound, "")
}

// wantFinding checks that v has status and, unless code is empty, a finding
// with code at path; with code empty, that it has no finding at all.
func wantFinding(t *testing.T, v career.ValidationSummary, status, code, path string) {
	t.Helper()
	found := false
	for _, f := range v.Findings {
		found = found || f.Code == code && f.Path == path
	}
	if v.Status != status || v.FindingCount != len(v.Findings) || (code == "" && len(v.Findings) > 0) || (code != "" && !found) {
		t.Errorf("validation = %+v, want %s with a %s finding at %s", v, status, code, path)
	}
}

func testCareerTenants(t *testing.T, tbl store.Table) {
	ctx := context.Background()
	svc := career.New(tbl, nil, nil)
	a, b := newCaller(t, tbl), newCaller(t, tbl)
	seedAtoms(t, svc, a)
	m, err := svc.MatchOpportunity(ctx, a, career.MatchInput{Opportunity: &sampleOpportunity})
	if err != nil {
		t.Fatal(err)
	}
	mustInteraction(t, svc, a, "int-a")
	// B sees none of A's atoms, reports or interactions.
	if got, _ := svc.GetAtoms(ctx, b, career.AtomGetInput{AtomIDs: m.MatchReport.MatchedAtoms}); len(got.Atoms) != 0 {
		t.Errorf("tenant B reads A's atoms: %v", got.Atoms)
	}
	if list, _ := svc.ListAtoms(ctx, b, career.AtomListInput{}); len(list.Atoms) != 0 {
		t.Errorf("tenant B lists A's atoms: %v", list.Atoms)
	}
	_, err = svc.ValidateMatchReport(ctx, b, career.ValidateInput{ReportID: m.MatchReport.ReportID})
	wantKind(t, err, fault.KindNotFound, "")
	inline, err := svc.ValidateMatchReport(ctx, b, career.ValidateInput{MatchReport: &m.MatchReport})
	if err != nil || inline.ValidationReport.Status != career.Rejected {
		t.Errorf("tenant B validating A's report inline: %+v, %v; want rejected (atoms not B's)", inline.ValidationReport, err)
	}
	bm, err := svc.MatchOpportunity(ctx, b, career.MatchInput{Opportunity: &sampleOpportunity})
	if err != nil || len(bm.MatchReport.MatchedAtoms) != 0 || bm.MatchReport.AtomsConsidered != 0 {
		t.Errorf("tenant B's match used A's atoms: %+v, %v", bm.MatchReport, err)
	}
	if r := apply(t, svc, b, "int-a", "Prepare", "k"); r.Outcome != career.NotFound {
		t.Errorf("tenant B moved A's interaction: %+v", r)
	}
	got, _ := svc.GetInteractions(ctx, a, career.InteractionGetInput{InteractionIDs: []string{"int-a"}})
	if got.Interactions[0].State != career.Draft {
		t.Errorf("A's interaction is now %s", got.Interactions[0].StateName)
	}
}
