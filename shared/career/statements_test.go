package career_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/career"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// Extraction is bounded in what it makes of a resume: a section name, which
// every atom under it repeats, is cut to MaxSectionChars; statements stop
// one past MaxResumeAtoms; a bullet's continuation lines are joined once.
func TestExtractionBoundsWhatAResumeYields(t *testing.T) {
	persist := false
	tbl := storetest.OpenEmbedded(t)
	svc, c := career.New(tbl, nil, nil), newCaller(t, tbl)
	ingest := func(md string) (career.IngestResumeOutput, error) {
		return svc.IngestResume(t.Context(), c, career.IngestResumeInput{FileName: "cv.md", ContentBase64: b64([]byte(md)), Persist: &persist})
	}
	t.Run("a long heading is cut in the sections of its atoms", func(t *testing.T) {
		out, err := ingest("## Experience\n\n### " + strings.Repeat("Staff Engineer ", 2000) + "\n\n- Built search in Go.\n- Ran the on-call rota.\n")
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Atoms) != 2 {
			t.Fatalf("%d atoms, want 2", len(out.Atoms))
		}
		for _, a := range out.Atoms {
			if n := utf8.RuneCountInString(a.Section); n != career.MaxSectionChars || !strings.HasPrefix(a.Section, "Experience > Staff Engineer") {
				t.Errorf("section of %d characters %.40q..., want it cut to %d", n, a.Section, career.MaxSectionChars)
			}
		}
	})
	t.Run("more statements than a resume may yield are refused", func(t *testing.T) {
		_, err := ingest("## Experience\n\n" + strings.Repeat("- Shipped a feature.\n", 100_000))
		if fault.KindOf(err) != fault.KindInvalid || !strings.Contains(err.Error(), "more than 500 statements") {
			t.Errorf("error = %v, want invalid_argument naming the limit", err)
		}
	})
	t.Run("continuation lines join their bullet", func(t *testing.T) {
		out, err := ingest("## Experience\n\n- Built\n  search\n  in Go.\n- Ran on-call.\n")
		if err != nil || len(out.Atoms) != 2 || out.Atoms[0].Text != "Built search in Go." {
			t.Errorf("atoms %+v, %v; want the first to read \"Built search in Go.\"", out.Atoms, err)
		}
	})
}
