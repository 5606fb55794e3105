package beir

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadReadsTheJudgedQueriesOfASplit(t *testing.T) {
	ds, err := Load("testdata/tiny", "test")
	if err != nil {
		t.Fatal(err)
	}
	want := &Dataset{
		Corpus:  []Doc{{ID: "d1", Title: "Foxes", Text: "The quick brown fox."}, {ID: "d2", Text: "Dogs sleep a lot."}},
		Queries: []Query{{ID: "q1", Text: "fox"}},
		Qrels:   Qrels{"q1": {"d1": 1, "d3": 2}},
	}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	for _, split := range []string{"bad", "missing"} {
		if _, err := Load("testdata/tiny", split); err == nil {
			t.Errorf("split %q: no error", split)
		}
	}
}

func TestMetrics(t *testing.T) {
	rel := map[string]int{"a": 1, "b": 2, "z": 0}
	tests := []struct {
		name   string
		ranked []string
		k      int
		ndcg   float64
		recall float64
	}{
		{"ideal order", []string{"b", "a"}, 10, 1, 1},
		{"swapped", []string{"a", "b"}, 10, (1 + 2/math.Log2(3)) / (2 + 1/math.Log2(3)), 1},
		{"one found at rank 3 within the cut", []string{"x", "y", "b"}, 3, (2 / 2.0) / (2 + 1/math.Log2(3)), 0.5},
		{"cut before the hit", []string{"x", "b"}, 1, 0, 0},
		{"nothing retrieved", nil, 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranked, rel, tt.k); math.Abs(got-tt.ndcg) > 1e-12 {
				t.Errorf("NDCG = %v, want %v", got, tt.ndcg)
			}
			if got := Recall(tt.ranked, rel, tt.k); math.Abs(got-tt.recall) > 1e-12 {
				t.Errorf("Recall = %v, want %v", got, tt.recall)
			}
		})
	}
	qrels := Qrels{"q1": rel, "q2": {"c": 1}}
	if got := MeanNDCG(Run{"q1": {"b", "a"}}, qrels, 10); got != 0.5 {
		t.Errorf("MeanNDCG = %v, want 0.5 (a missing query scores 0)", got)
	}
}

func TestWriteRunWritesTRECLines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRun(&b, "q1", []string{"d1", "d2"}, []float64{2.5, 1}, "switchboard"); err != nil {
		t.Fatal(err)
	}
	want := "q1 Q0 d1 1 2.500000 switchboard\nq1 Q0 d2 2 1.000000 switchboard\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("run mismatch (-want +got):\n%s", diff)
	}
	if err := WriteRun(&b, "q1", []string{"d1"}, nil, "x"); err == nil {
		t.Error("mismatched scores: no error")
	}
}
