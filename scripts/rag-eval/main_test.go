package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// docsDir holds real documentation (zstd's README and manual page, two of
// Go's design documents), with their licences.
const docsDir = "../../shared/provider/offline/testdata/docs"

// TestAStoreOfRealDocumentation is issue 10's check of rag_basic and
// rag_crag, on a small store of real documentation so that it runs in CI:
// questions of other domains get "no relevant documents" from both at least
// 90% of the time, while questions the documents answer get an answer from
// them, citing them.
func TestAStoreOfRealDocumentation(t *testing.T) {
	ctx := t.Context()
	e, err := newEnv(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	corpus, err := readDocs(docsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ingest(ctx, io.Discard, corpus); err != nil {
		t.Fatal(err)
	}
	rates, err := e.offDomain(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range pipelines {
		if rates[tool] < 0.9 {
			t.Errorf("%s: no relevant documents for %.0f%% of the questions of other domains, want at least 90%%", tool, 100*rates[tool])
		}
	}
	for _, q := range []string{
		"How do I remove the source file after compressing with zstd?",
		"How do I train a zstd dictionary?",
		"How many threads can zstd use for compression?",
		"What is a GODEBUG setting?",
		"How does the Go compiler perform escape analysis?",
	} {
		for _, tool := range pipelines {
			r, err := e.ask(ctx, tool, q)
			if err != nil {
				t.Fatal(err)
			}
			cites := slices.ContainsFunc(r.Sources, func(s string) bool { return strings.Contains(r.Answer, "["+s+"]") })
			if noRelevantDocuments(r) || !cites {
				t.Errorf("%s %q: answer %q from %v, want an answer from the documents that cites them", tool, q, r.Answer, r.Sources)
			}
		}
	}
}
