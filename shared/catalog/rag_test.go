package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchema returns the resolved input schema of the Default tool named name.
func inputSchema(t *testing.T, name string) *jsonschema.Resolved {
	t.Helper()
	tool, ok := Default().Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
		t.Fatalf("input schema of %s: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestRAGSchemasRefuseWhatTheSeedRefuses checks the pipeline tools' input
// schemas against seed 002's validation rules, at the edge, before any
// function runs (package rag enforces the same rules again).
func TestRAGSchemasRefuseWhatTheSeedRefuses(t *testing.T) {
	long := func(n int) string { b, _ := json.Marshal(strings.Repeat("é", n)); return string(b) }
	for _, tc := range []struct {
		tool, args string
		ok         bool
	}{
		{"rag_basic", `{"query":"q"}`, true},
		{"rag_basic", `{"query":` + long(8000) + `}`, true},
		{"rag_basic", `{"query":` + long(8001) + `}`, false},
		{"rag_basic", `{"query":""}`, false},
		{"rag_basic", `{}`, false},
		{"rag_basic", `{"query":"q","top_k":0}`, false},
		{"rag_basic", `{"query":"q","top_k":51}`, false},
		{"rag_basic", `{"query":"q","top_k":50,"include_sources":false,"include_metadata":false}`, true},
		{"rag_basic", `{"query":"q","request_id":"550e8400-e29b-41d4-a716-446655440000"}`, true},
		{"rag_basic", `{"query":"q","request_id":"not-a-uuid"}`, false},
		{"rag_basic", `{"query":"q","mode":"fuzzy"}`, false},
		{"rag_basic", `{"query":"q","thread_id":"a b"}`, false},
		{"rag_basic", `{"query":"q","stores":["docs"],"mode":"bm25","filter":{"lang":["en"]},"thread_id":"chat_1"}`, true},
		{"rag_basic", `{"query":"q","filter":{"lang":[]}}`, false},
		{"rag_basic", `{"query":"q","confidence_threshold":0.5}`, false},
		{"rag_crag", `{"query":"q","confidence_threshold":0}`, true},
		{"rag_crag", `{"query":"q","confidence_threshold":1}`, true},
		{"rag_crag", `{"query":"q","confidence_threshold":-0.1}`, false},
		{"rag_crag", `{"query":"q","confidence_threshold":1.5}`, false},
		{"rag_crag", `{"query":"q","correction_strategy":"expand"}`, true},
		{"rag_crag", `{"query":"q","correction_strategy":"pray"}`, false},
		{"rag_basic_rerank", `{"query":"q","candidate_pool":50}`, true},
		{"rag_basic_rerank", `{"query":"q","candidate_pool":51}`, false},
		{"rag_health_check", `{}`, true},
		{"rag_health_check", `{"verbose":true}`, false},
		{"optimizer_vs-rephrase", `{"question":"q","conversation_id":"chat_1"}`, true},
		{"optimizer_vs-rephrase", `{"question":""}`, false},
		{"optimizer_vs-grade", `{"question":"q","documents":[]}`, true},
		{"optimizer_vs-grade", `{"question":"q"}`, false},
	} {
		name := tc.args
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(fmt.Sprintf("%s %s", tc.tool, name), func(t *testing.T) {
			rs := inputSchema(t, tc.tool)
			var v any
			if err := json.Unmarshal([]byte(tc.args), &v); err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(v); (err == nil) != tc.ok {
				t.Errorf("accepted = %v, want %v (%v)", err == nil, tc.ok, err)
			}
		})
	}
}

func TestRAGEntriesAreComplete(t *testing.T) {
	c, err := New(append(ragTools(), ragStepTools()...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range c.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			internal := strings.HasPrefix(tool.Name, "optimizer_vs-")
			if internal != (tool.Visibility == Internal) {
				t.Errorf("visibility %s", tool.Visibility)
			}
		})
	}
	for _, f := range c.Functions() {
		if strings.HasPrefix(f.Path, "rag/") && f.Path != "rag/health_check" && (f.Limits.ReservedConcurrency != 5 || f.Limits.Timeout.Seconds() != 30) {
			t.Errorf("%s has limits %+v, want seed 002's 5 concurrent queries and 30 s", f.Path, f.Limits)
		}
	}
}

// TestRAGPipelinesAreTheFamilysToolsButTheHealthCheck checks the list
// rag_health_check reports: every pipeline tool of the family, by seed 002's
// pipeline name, and not the health check itself.
func TestRAGPipelinesAreTheFamilysToolsButTheHealthCheck(t *testing.T) {
	cat := Default()
	got := cat.RAGPipelines()
	var want []string
	for _, tool := range cat.Tools() {
		if tool.Family == RAGFamily && tool.Name != HealthCheckTool {
			if !tool.Generates || tool.Visibility != Public {
				t.Errorf("%s is in the rag family but is not a public generating tool", tool.Name)
			}
			want = append(want, strings.TrimPrefix(tool.Name, "rag_"))
		}
	}
	for _, p := range []string{"basic", "basic_rerank", "crag"} {
		if !slices.Contains(got, p) {
			t.Errorf("RAGPipelines() = %v, missing %s", got, p)
		}
	}
	if slices.Contains(got, "health_check") || !slices.Equal(got, want) {
		t.Errorf("RAGPipelines() = %v, want %v", got, want)
	}
}
