package bedrock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
)

func TestConverseChatSendsAToolConfigAndReadsToolUse(t *testing.T) {
	rt := newRuntime(t)
	rt.answer = map[string]any{
		"output": map[string]any{"message": map[string]any{"role": "assistant", "content": []any{
			map[string]any{"text": "Let me search."},
			map[string]any{"toolUse": map[string]any{"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "web_search",
				"input": map[string]any{"query": "go 1.24", "max_results": 3, "threshold": json.Number("0.1")}}},
		}}},
		"stopReason": "tool_use",
		"usage":      map[string]any{"inputTokens": 210, "outputTokens": 31, "totalTokens": 241},
		"metrics":    map[string]any{"latencyMs": 512},
	}
	g, err := bedrock.NewGenerator(rt.client(), "amazon.nova-micro-v1:0")
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	req := provider.ChatRequest{
		System: "You are helpful.",
		Messages: []provider.Message{
			{Role: "user", Content: "What is new in Go?"},
			{Role: "assistant", ToolCalls: []provider.ToolCall{
				{ID: "t1", Name: "web_search", Arguments: json.RawMessage(`{"query":"go","id":12345678901234567890}`)},
				{ID: "t2", Name: "vector_store_list", Arguments: json.RawMessage(`{}`)},
			}},
			{Role: "tool", ToolCallID: "t1", Content: "Title: Go"},
			{Role: "tool", ToolCallID: "t2", Content: "no stores", IsError: true},
			{Role: "user", Content: "And 1.24?"},
		},
		Tools:       []provider.ToolSpec{{Name: "web_search", Description: "Search the web.", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)}},
		MaxTokens:   300,
		Temperature: &temp,
	}
	got, err := g.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ChatReply{Text: "Let me search.", StopReason: provider.StopToolUse, Provider: "bedrock", Model: "amazon.nova-micro-v1:0", InputTokens: 210, OutputTokens: 31,
		ToolCalls: []provider.ToolCall{{ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "web_search", Arguments: json.RawMessage(`{"max_results":3,"query":"go 1.24","threshold":0.1}`)}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Chat mismatch (-want +got):\n%s", diff)
	}
	calls := rt.recorded()
	if len(calls) != 1 || calls[0].op != "converse" {
		t.Fatalf("calls %+v, want one converse", calls)
	}
	wantBody := map[string]any{
		"system":          []any{map[string]any{"text": "You are helpful."}},
		"inferenceConfig": map[string]any{"maxTokens": float64(300), "temperature": 0.5},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"text": "What is new in Go?"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"toolUse": map[string]any{"toolUseId": "t1", "name": "web_search", "input": map[string]any{"query": "go", "id": 12345678901234567890.0}}},
				map[string]any{"toolUse": map[string]any{"toolUseId": "t2", "name": "vector_store_list", "input": map[string]any{}}},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"toolResult": map[string]any{"toolUseId": "t1", "status": "success", "content": []any{map[string]any{"text": "Title: Go"}}}},
				map[string]any{"toolResult": map[string]any{"toolUseId": "t2", "status": "error", "content": []any{map[string]any{"text": "no stores"}}}},
				map[string]any{"text": "And 1.24?"},
			}},
		},
		"toolConfig": map[string]any{"tools": []any{map[string]any{"toolSpec": map[string]any{"name": "web_search", "description": "Search the web.",
			"inputSchema": map[string]any{"json": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}}}}},
	}
	if !strings.Contains(string(calls[0].raw), `"id":12345678901234567890`) {
		t.Errorf("Converse body %s does not carry the large integer argument as its digits", calls[0].raw)
	}
	if diff := cmp.Diff(wantBody, calls[0].body); diff != "" {
		t.Errorf("Converse body mismatch (-want +got):\n%s", diff)
	}
}
