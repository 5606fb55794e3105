package career_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestIndexAndHybridMatching(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		for _, tc := range []struct {
			name string
			fn   func(t *testing.T, tbl store.Table, blobs store.Blobs)
		}{
			{"IndexBuildEmbedsOnlyWhatChanged", testIndexBuild},
			{"HybridMatchingIsDeterministicWithOrWithoutAnIndex", testHybrid},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.fn(t, tbl, storetest.OpenLocalFS(t)) })
		}
	})
}

func testIndexBuild(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	var mu sync.Mutex
	var progress []float64
	svc := career.New(tbl, blobs, &career.Options{Embedder: offline.NewEmbedder(64), Progress: func(_ context.Context, done, total float64, _ string) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, done/total)
	}})
	c := newCaller(t, tbl)
	res, err := svc.IngestResume(ctx, c, career.IngestResumeInput{FileName: "dana.md", ContentBase64: b64(readFixture(t, "dana-lee.md"))})
	if err != nil {
		t.Fatal(err)
	}
	var opps []career.Opportunity
	for _, title := range []string{"Go engineer", "Data engineer"} {
		o, err := svc.CreateOpportunity(ctx, c, career.OpportunityCreateInput{Title: title, Requirements: []string{"Go", "DynamoDB"}})
		if err != nil {
			t.Fatal(err)
		}
		opps = append(opps, o.Opportunity)
	}
	all := len(res.Atoms) + 1 + len(opps)
	build := func(scope string, want career.IndexCounts) career.IndexBuildOutput {
		t.Helper()
		out, err := svc.IndexBuild(ctx, c, career.IndexBuildInput{Scope: scope, TraceID: audit.NewTraceID()})
		if err != nil {
			t.Fatalf("IndexBuild(%s): %v", scope, err)
		}
		if out.Counts != want || out.Run.Status != career.RunCompleted || out.Run.Provider != "offline" || out.Run.PromptScope != career.PromptVersion+"/"+scope {
			t.Errorf("IndexBuild(%s) = %+v, want counts %+v", scope, out, want)
		}
		return out
	}
	first := build("all", career.IndexCounts{Indexed: all})
	if len(progress) == 0 || progress[len(progress)-1] != 1 {
		t.Errorf("progress reported %v, want it to reach 1", progress)
	}
	build("all", career.IndexCounts{Skipped: all})
	// Change an atom and an opportunity: both stale, the rest skipped.
	a := res.Atoms[0]
	if _, err := svc.UpdateAtom(ctx, c, career.AtomUpdateInput{AtomID: a.AtomID, ExpectedVersion: a.Version, Text: a.Text + " On call.", Section: a.Section}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateOpportunity(ctx, c, career.OpportunityUpdateInput{OpportunityID: opps[0].OpportunityID, ExpectedVersion: 1, Title: "Go engineer", Requirements: []string{"Go", "Kafka"}}); err != nil {
		t.Fatal(err)
	}
	build("all", career.IndexCounts{Indexed: 2, Skipped: all - 2, Stale: 2})
	// A narrower scope compares with the last run that covered its kind.
	if _, err := svc.CreateAtom(ctx, c, career.AtomCreateInput{Text: "Ran the on-call rotation"}); err != nil {
		t.Fatal(err)
	}
	build("atoms", career.IndexCounts{Indexed: 1, Skipped: len(res.Atoms)})
	build("opps", career.IndexCounts{Skipped: len(opps)})
	// Another embedder (here: another size) starts from nothing.
	other := career.New(tbl, blobs, &career.Options{Embedder: offline.NewEmbedder(32)})
	o, err := other.IndexBuild(ctx, c, career.IndexBuildInput{Scope: "resumes"})
	if err != nil || o.Counts != (career.IndexCounts{Indexed: 1}) {
		t.Errorf("IndexBuild with another embedder = %+v, %v; want the resume indexed afresh", o.Counts, err)
	}

	runs, err := svc.ListIndexRuns(ctx, c, career.ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	var scopes []string
	for _, r := range runs.Runs {
		scopes = append(scopes, r.Scope+" "+r.Status)
	}
	if diff := cmp.Diff([]string{"resumes completed", "opps completed", "atoms completed", "all completed", "all completed", "all completed"}, scopes); diff != "" {
		t.Errorf("runs, newest first, mismatch (-want +got):\n%s", diff)
	}
	var types []string
	for _, e := range events(t, tbl, c, first.TraceID) {
		types = append(types, e.Type)
	}
	want := []string{audit.IndexBuildStarted, audit.IndexRunStarted, audit.IndexedArtifact, audit.IndexRunCompleted, audit.IndexBuildCompleted}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("audit trail mismatch (-want +got):\n%s", diff)
	}
	// Without an embedder nothing can be embedded.
	_, err = career.New(tbl, blobs, nil).IndexBuild(ctx, c, career.IndexBuildInput{})
	wantKind(t, err, fault.KindUnavailable, "")
}

func testHybrid(t *testing.T, tbl store.Table, blobs store.Blobs) {
	ctx := context.Background()
	svc := career.New(tbl, blobs, &career.Options{Embedder: offline.NewEmbedder(offline.DefaultDims)})
	c := newCaller(t, tbl)
	seedAtoms(t, svc, c)
	in := career.MatchInput{Opportunity: &sampleOpportunity, Strategy: career.StrategyHybrid, KLex: 5, KEmb: 5}
	before, err := svc.MatchOpportunity(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	r := before.MatchReport
	if r.EmbeddingProvider != "offline" || r.EmbeddingDims != offline.DefaultDims || r.KEmb != 5 || before.ValidationReport.Status != career.Accepted {
		t.Errorf("hybrid report = %+v, validation %+v", r, before.ValidationReport)
	}
	for _, e := range r.Requirements {
		if e.AtomID != "" && e.Cosine == nil {
			t.Errorf("requirement %d has no cosine: %+v", e.Index, e)
		}
	}
	if !r.Requirements[0].Satisfied || !r.Requirements[2].Satisfied {
		t.Errorf("hybrid evidence = %+v", r.Requirements)
	}
	// Vectors from the index give the same report as vectors made on the fly.
	if _, err := svc.IndexBuild(ctx, c, career.IndexBuildInput{Scope: "atoms"}); err != nil {
		t.Fatal(err)
	}
	after, err := svc.MatchOpportunity(ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(before.MatchReport)
	b2, _ := json.Marshal(after.MatchReport)
	if string(b1) != string(b2) || after.ValidationReport.Status != career.Accepted {
		t.Errorf("hybrid reports differ:\n%s\n%s", b1, b2)
	}
	// Validation recomputes the similarities: a changed one is found, and a
	// server with another embedder says it could not check them.
	i := slices.IndexFunc(r.Requirements, func(e career.Evidence) bool { return e.AtomID != "" })
	forged := r
	forged.Requirements = slices.Clone(r.Requirements)
	cos := *forged.Requirements[i].Cosine + 0.2
	forged.Requirements[i].Cosine = &cos
	forged.Requirements[i].Score = math.Round((forged.Requirements[i].Coverage+cos)/2*1e4) / 1e4
	sum := 0.0
	for _, e := range forged.Requirements {
		sum += e.Score
	}
	forged.OverallScore = math.Round(sum/float64(len(forged.Requirements))*1e4) / 1e4
	v, err := svc.ValidateMatchReport(ctx, c, career.ValidateInput{MatchReport: &forged})
	if err != nil {
		t.Fatal(err)
	}
	wantFinding(t, v.ValidationReport, career.Rejected, "evidence_mismatch", fmt.Sprintf("requirements[%d].cosine", i))
	v, err = career.New(tbl, blobs, &career.Options{Embedder: offline.NewEmbedder(64)}).ValidateMatchReport(ctx, c, career.ValidateInput{ReportID: r.ReportID})
	if err != nil {
		t.Fatal(err)
	}
	wantFinding(t, v.ValidationReport, career.NeedsReview, "unverified", "embedding_model")
}
