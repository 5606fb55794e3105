package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/rag"
)

// TestAnEmptyDocumentIsSkippedNotFatal evaluates a collection one of whose
// documents holds no text: it is skipped and counted, and the evaluation
// runs to its end, with the retriever's default and with each pipeline.
func TestAnEmptyDocumentIsSkippedNotFatal(t *testing.T) {
	for _, pipe := range append([]string{""}, rag.Pipelines...) {
		t.Run("pipeline "+pipe, func(t *testing.T) {
			runPath := filepath.Join(t.TempDir(), "run.trec")
			if err := run("testdata/empty-doc", "test", runPath, "", evalOptions{pipeline: pipe}); err != nil {
				t.Fatalf("run: %v", err)
			}
			b, err := os.ReadFile(runPath)
			if err != nil {
				t.Fatal(err)
			}
			if pipe == rag.PipelineGlobalGraphRAG {
				return // it cites the documents of communities, which three sentences may not make
			}
			for _, want := range []string{"q1 Q0 d1 1 ", "q2 Q0 d3 1 "} {
				if !strings.Contains(string(b), want) {
					t.Errorf("run file lacks %q:\n%s", want, b)
				}
			}
		})
	}
}

// TestPipelineOptionsRankOrAreRefused runs the candidate pool and source
// options of the pipelines that take them, and refuses what is no pipeline
// or no source, naming the field.
func TestPipelineOptionsRankOrAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       evalOptions
		wantErr string
	}{
		{"basic_rerank over a pool of 2", evalOptions{pipeline: "basic_rerank", pool: 2}, ""},
		{"pylate_colbert over the hybrid top documents", evalOptions{pipeline: "pylate_colbert", source: "hybrid", pool: 2}, ""},
		{"pylate_colbert over centroid candidates", evalOptions{pipeline: "pylate_colbert", source: "centroid"}, ""},
		{"pylate_colbert with an unknown source", evalOptions{pipeline: "pylate_colbert", source: "magic"}, "--source"},
		{"a name that is no pipeline", evalOptions{pipeline: "nosuch"}, "no pipeline"},
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
