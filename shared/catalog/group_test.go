package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// TestToolsAreInSeed000sGroups checks the groups by seed 000's names: every
// optimizer_vs-* tool is in Vector Search, the proxied tools (through
// connector_call) in Connectors, the web search tools (when the catalog has
// them) in Web Search, and no other tool in any group.
func TestToolsAreInSeed000sGroups(t *testing.T) {
	for _, tool := range catalog.Default().Tools() {
		want := ""
		switch {
		case strings.HasPrefix(tool.Name, "optimizer_vs-"):
			want = catalog.GroupVectorSearch
		case tool.Name == catalog.ConnectorCallTool:
			want = catalog.GroupConnectors
		case tool.Name == "duckduckgo_search" || tool.Name == "web_search":
			want = catalog.GroupWebSearch
		}
		if tool.Group != want {
			t.Errorf("%s is in group %q, want %q", tool.Name, tool.Group, want)
		}
	}
}

// TestPromptsAreInSeed000sGroups checks the prompts' groups by seed 000's
// rules: the vector search steps' prompts (optimizer_vs-*, and
// optimizer_context-default, the rephrase step's) are in Vector Search, and
// the chat's system prompts and Switchboard's own in none.
func TestPromptsAreInSeed000sGroups(t *testing.T) {
	want := map[string]string{
		"optimizer_basic-default": "", "optimizer_tools-default": "",
		"optimizer_context-default": catalog.GroupVectorSearch, "optimizer_vs-table-selection": catalog.GroupVectorSearch,
		"optimizer_vs-grade": catalog.GroupVectorSearch, "optimizer_vs-rephrase": catalog.GroupVectorSearch,
		"switchboard_answer-default": "", "switchboard_graph-extract": "", "switchboard_graph-report": "",
	}
	prompts := catalog.Default().Prompts()
	if len(prompts) != len(want) {
		t.Errorf("%d prompts, want %d", len(prompts), len(want))
	}
	for _, p := range prompts {
		if g, ok := want[p.Name]; !ok || p.Group != g {
			t.Errorf("prompt %s is in group %q, want %q (known: %v)", p.Name, p.Group, g, ok)
		}
	}
}

func TestAToolInAnUnknownGroupIsRefused(t *testing.T) {
	tool := &catalog.Tool{Name: "x", Title: "X", Description: "x", Family: "memory", Function: "memory/x",
		Visibility: catalog.Public, Limits: catalog.Limits{Timeout: time.Second, MemoryMB: 128}, Group: "NL2SQL"}
	if _, err := catalog.New([]*catalog.Tool{tool}, nil, nil); err == nil || !strings.Contains(err.Error(), `"NL2SQL"`) {
		t.Errorf("err = %v, want a refusal naming the group", err)
	}
}

func TestAPromptInAnUnknownGroupIsRefused(t *testing.T) {
	p := &catalog.Prompt{Name: "x", Tool: catalog.PromptGetTool, Group: "NL2SQL"}
	tools := catalog.Default().Tools()
	if _, err := catalog.New(tools, nil, []*catalog.Prompt{p}); err == nil || !strings.Contains(err.Error(), `"NL2SQL"`) {
		t.Errorf("err = %v, want a refusal naming the group", err)
	}
}
