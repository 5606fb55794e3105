package chat

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestWebSearchTriggers(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    bool
	}{
		{"What is the latest Go release?", true},
		{"Any news about the election today", true},
		{"Please search the web for PGA tuning", true},
		{"Tin tức mới nhất về Go", true},
		{"How often should I replace my toothbrush?", false},
		{"What does the currency field hold?", false}, // "current" inside a word is no trigger
		{"Hello, my name is Mike.", false},
	} {
		if got := wantsWebSearch(tc.message); got != tc.want {
			t.Errorf("wantsWebSearch(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}

// searchTools offers one web search tool answering in seed 004's text format.
type searchTools struct{ calls []string }

func (s *searchTools) List(context.Context, tenant.Caller) ([]Tool, error) {
	return []Tool{{Group: ToolsWebSearch, ToolSpec: provider.ToolSpec{Name: "duckduckgo_search", Description: "Search the web.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}}}, nil
}

func (s *searchTools) Call(_ context.Context, _ tenant.Caller, name string, args json.RawMessage) (ToolResult, error) {
	s.calls = append(s.calls, name+" "+string(args))
	return ToolResult{Text: "Title: Go 1.26 released\nContent: Go 1.26 is out.\nLink: https://go.dev/blog/go1.26\n---"}, nil
}

func TestAnOfflineTurnWithTriggerWordsSearchesTheWeb(t *testing.T) {
	tools := &searchTools{}
	svc := New(Options{Memory: memory.New(storetest.OpenEmbedded(t), nil), Generator: offline.NewGenerator(), Tools: tools})
	out, err := svc.Chat(context.Background(), tenant.Caller{Tenant: "acme", Principal: "alice"}, Input{ThreadID: "web", Message: "What is the latest Go release?"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`duckduckgo_search {"query":"What is the latest Go release?"}`}, tools.calls); diff != "" {
		t.Errorf("tool calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{RouteTools, RouteAnswer}, out.Route); diff != "" {
		t.Errorf("route mismatch (-want +got):\n%s", diff)
	}
	if !out.Offline || out.Answer != "No language model is configured, so this answer is assembled without one: here is what duckduckgo_search returned.\n\nTitle: Go 1.26 released\nContent: Go 1.26 is out.\nLink: https://go.dev/blog/go1.26\n---" {
		t.Errorf("answer %q", out.Answer)
	}
}
