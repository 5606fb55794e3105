package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
)

// sseServer answers every POST /v1/chat/completions with events, written
// as OpenAI writes a stream: text/event-stream, each event a "data: " line
// and a blank line, flushed one by one. It records the request's body.
func sseServer(t *testing.T, status int, events ...string) (*openai.Generator, *map[string]any) {
	t.Helper()
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("request %s with Accept %q, want /v1/chat/completions accepting text/event-stream", r.URL.Path, r.Header.Get("Accept"))
		}
		json.NewDecoder(r.Body).Decode(&body)
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, events[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			if strings.HasPrefix(e, ":") {
				fmt.Fprintf(w, "%s\n\n", e)
			} else {
				fmt.Fprintf(w, "data: %s\n\n", e)
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	c, err := openai.NewClient(srv.URL, "sk-test", &openai.ClientOptions{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := openai.NewGenerator(c, "gpt-4o-mini")
	return g, &body
}

// chunk is a chat.completion.chunk with one choice's delta.
func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1732600000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1",` +
		`"choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}],"usage":null}`
}

const usageChunk = `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1732600000,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38}}`

func TestChatStreamReadsOpenAIsServerSentEvents(t *testing.T) {
	for _, tc := range []struct {
		name       string
		events     []string
		wantDeltas []string
		want       provider.ChatReply
	}{
		{"TextArrivesInDeltasWithTheUsageLast",
			[]string{chunk(`{"role":"assistant","content":"","refusal":null}`, ""), ": keep-alive", chunk(`{"content":"Every"}`, ""),
				chunk(`{"content":" three"}`, ""), chunk(`{"content":" months."}`, ""), chunk(`{}`, "stop"), usageChunk, "[DONE]"},
			[]string{"Every", " three", " months."},
			provider.ChatReply{Text: "Every three months.", StopReason: provider.StopEnd, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", InputTokens: 31, OutputTokens: 7}},
		{"ToolCallsAreAssembledFromTheirFragments",
			[]string{chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_ab","type":"function","function":{"name":"web_search","arguments":""}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"go 1.24\"}"}}]}`, ""),
				chunk(`{"tool_calls":[{"index":1,"id":"call_cd","type":"function","function":{"name":"vector_store_list","arguments":"{}"}}]}`, ""),
				chunk(`{}`, "tool_calls"), usageChunk, "[DONE]"},
			nil,
			provider.ChatReply{ToolCalls: []provider.ToolCall{{ID: "call_ab", Name: "web_search", Arguments: json.RawMessage(`{"query":"go 1.24"}`)},
				{ID: "call_cd", Name: "vector_store_list", Arguments: json.RawMessage(`{}`)}},
				StopReason: provider.StopToolUse, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", InputTokens: 31, OutputTokens: 7}},
		{"ACutAnswerStopsForLength",
			[]string{chunk(`{"role":"assistant","content":"Every"}`, ""), chunk(`{}`, "length"), usageChunk, "[DONE]"},
			[]string{"Every"},
			provider.ChatReply{Text: "Every", StopReason: provider.StopMaxToken, Provider: "openai", Model: "gpt-4o-mini-2024-07-18", InputTokens: 31, OutputTokens: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, body := sseServer(t, http.StatusOK, tc.events...)
			var deltas []string
			got, err := g.ChatStream(context.Background(), provider.ChatRequest{System: "Be brief.", Messages: []provider.Message{{Role: "user", Content: "How often?"}}}, func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ChatStream mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDeltas, deltas); diff != "" {
				t.Errorf("deltas mismatch (-want +got):\n%s", diff)
			}
			if (*body)["stream"] != true || !cmp.Equal((*body)["stream_options"], map[string]any{"include_usage": true}) {
				t.Errorf("request %v, want stream true with stream_options.include_usage", *body)
			}
		})
	}
}

func TestChatStreamFailures(t *testing.T) {
	long := strings.Repeat("a", provider.MaxStreamEventBytes)
	for _, tc := range []struct {
		name       string
		status     int
		events     []string
		wantDeltas int
		wantErr    string
	}{
		{"AnErrorEventMidStream", 200, []string{chunk(`{"role":"assistant","content":"Every"}`, ""),
			`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`}, 1, "The server had an error while processing your request."},
		{"AStreamThatEndsEarly", 200, []string{chunk(`{"role":"assistant","content":"Every"}`, "")}, 1, "the stream ended before the reply did"},
		{"AnEventLongerThanTheBound", 200, []string{chunk(`{"content":"`+long+`"}`, "")}, 0, fmt.Sprintf("longer than %d bytes", provider.MaxStreamEventBytes)},
		{"AnEventThatIsNotJSON", 200, []string{"{not json"}, 0, "not a chat.completion.chunk"},
		{"ARefusalBeforeTheStream", 401, []string{`{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error"}}`}, 0, "HTTP 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := sseServer(t, tc.status, tc.events...)
			n := 0
			_, err := g.ChatStream(context.Background(), provider.ChatRequest{Messages: []provider.Message{{Role: "user", Content: "hi"}}}, func(string) { n++ })
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ChatStream = %v, want an error containing %q", err, tc.wantErr)
			}
			if n != tc.wantDeltas {
				t.Errorf("%d deltas before the error, want %d", n, tc.wantDeltas)
			}
		})
	}
}

func TestChatStreamStopsWhenTheContextEnds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunk(`{"role":"assistant","content":"Every"}`, ""))
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c, _ := openai.NewClient(srv.URL, "", &openai.ClientOptions{MaxRetries: -1})
	g, _ := openai.NewGenerator(c, "gpt-4o-mini")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := g.ChatStream(ctx, provider.ChatRequest{Messages: []provider.Message{{Role: "user", Content: "hi"}}}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ChatStream = %v, want the context's cancellation", err)
	}
}
