package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnEmptyDocumentIsSkippedNotFatal evaluates a collection one of whose
// documents holds no text: it is skipped and counted, and the evaluation
// runs to its end.
func TestAnEmptyDocumentIsSkippedNotFatal(t *testing.T) {
	runPath := filepath.Join(t.TempDir(), "run.trec")
	if err := run("testdata/empty-doc", "test", runPath, "", evalOptions{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	b, err := os.ReadFile(runPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"q1 Q0 d1 1 ", "q2 Q0 d3 1 "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("run file lacks %q:\n%s", want, b)
		}
	}
}

// TestEachPipelineRanks runs the evaluation with each pipeline's retrieval
// this command runs, and refuses the others, naming them.
func TestEachPipelineRanks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       evalOptions
		wantErr string
	}{
		{"basic", evalOptions{pipeline: "basic", pool: depth}, ""},
		{"basic_rerank", evalOptions{pipeline: "basic_rerank", pool: depth}, ""},
		{"pylate_colbert over the hybrid top documents", evalOptions{pipeline: "pylate_colbert", source: "hybrid", pool: depth}, ""},
		{"pylate_colbert over centroid candidates", evalOptions{pipeline: "pylate_colbert", source: "centroid", pool: depth}, ""},
		{"pylate_colbert with an unknown source", evalOptions{pipeline: "pylate_colbert", source: "magic", pool: depth}, "--source"},
		{"crag, whose retrieval takes the generator", evalOptions{pipeline: "crag", pool: depth}, "does not run its retrieval"},
		{"a name that is no pipeline", evalOptions{pipeline: "nosuch", pool: depth}, "not a pipeline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runPath := filepath.Join(t.TempDir(), "run.trec")
			err := run("testdata/empty-doc", "test", runPath, "", tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("run: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			b, err := os.ReadFile(runPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "q1 Q0 d1 1 ") {
				t.Errorf("run file does not rank d1 first for q1:\n%s", b)
			}
		})
	}
}
