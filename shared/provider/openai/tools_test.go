package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

func TestChatSendsToolsAndReadsToolCalls(t *testing.T) {
	s := newServer(t, 4)
	s.queue = []reply{{status: http.StatusOK, body: `{"id":"chatcmpl-2","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",
		"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
		"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"web_search","arguments":"{\"query\":\"go 1.24 release\"}"}}]}}],
		"usage":{"prompt_tokens":80,"completion_tokens":12,"total_tokens":92}}`}}
	g, err := openai.NewGenerator(s.client(t, nil), "gpt-4o-mini")
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.2
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)
	req := provider.ChatRequest{
		System: "You are helpful.",
		Messages: []provider.Message{
			{Role: "user", Content: "What is new in Go?"},
			{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "call_0", Name: "web_search", Arguments: json.RawMessage(`{"query":"go"}`)}}},
			{Role: "tool", ToolCallID: "call_0", Name: "web_search", Content: "Title: Go\nContent: ..."},
			{Role: "user", Content: "And in 1.24?"},
		},
		Tools:       []provider.ToolSpec{{Name: "web_search", Description: "Search the web.", InputSchema: schema}},
		MaxTokens:   200,
		Temperature: &temp,
	}
	got, err := g.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ChatReply{ToolCalls: []provider.ToolCall{{ID: "call_abc", Name: "web_search", Arguments: json.RawMessage(`{"query":"go 1.24 release"}`)}},
		StopReason: provider.StopToolUse, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", InputTokens: 80, OutputTokens: 12}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Chat mismatch (-want +got):\n%s", diff)
	}
	wantBody := map[string]any{
		"model": "gpt-4o-mini", "max_tokens": float64(200), "temperature": 0.2,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are helpful."},
			map[string]any{"role": "user", "content": "What is new in Go?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_0", "type": "function",
				"function": map[string]any{"name": "web_search", "arguments": `{"query":"go"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "call_0", "content": "Title: Go\nContent: ..."},
			map[string]any{"role": "user", "content": "And in 1.24?"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "web_search", "description": "Search the web.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []any{"query"}}}}},
	}
	if diff := cmp.Diff(wantBody, s.requests()[0]); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s", diff)
	}
}

func TestChatReadsAnAnswerAndRefusesBrokenToolCalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		want    provider.ChatReply
		wantErr bool
	}{
		{"AnAnswerEndsTheTurn", `{"model":"m","choices":[{"finish_reason":"stop","message":{"role":"assistant","content":" Hello. "}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
			provider.ChatReply{Text: "Hello.", StopReason: provider.StopEnd, Provider: "openai", Model: "m", InputTokens: 5, OutputTokens: 2}, false},
		{"ACutAnswerSaysSo", `{"model":"m","choices":[{"finish_reason":"length","message":{"role":"assistant","content":"Hel"}}]}`,
			provider.ChatReply{Text: "Hel", StopReason: provider.StopMaxToken, Provider: "openai", Model: "m"}, false},
		{"ArgumentsThatAreNotJSONAreAnError", `{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}}]}`,
			provider.ChatReply{}, true},
		{"NeitherTextNorCallsIsAnError", `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":""}}]}`, provider.ChatReply{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, 4)
			s.queue = []reply{{status: http.StatusOK, body: tc.body}}
			g, _ := openai.NewGenerator(s.client(t, nil), "gpt-4o-mini")
			got, err := g.Chat(context.Background(), provider.ChatRequest{Messages: []provider.Message{{Role: "user", Content: "hi"}}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Chat mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
