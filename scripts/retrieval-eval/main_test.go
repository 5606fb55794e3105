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
			if err := run("testdata/empty-doc", "test", runPath, "", pipe, nil); err != nil {
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
