package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/bedrock"
)

// frame is one message of an AWS event stream: an event of a type, or an
// exception, with its JSON payload.
type frame struct {
	kind    string // "event" or "exception"
	typ     string // the :event-type or :exception-type
	payload string
}

func event(typ, payload string) frame { return frame{"event", typ, payload} }

// hold makes the stand-in stop writing and wait for the client to go.
var hold = frame{kind: "hold"}

func exception(typ, payload string) frame { return frame{"exception", typ, payload} }

// converseStream is a Bedrock Runtime stand-in answering POST
// /model/{modelId}/converse-stream as the service does: 200,
// application/vnd.amazon.eventstream, the frames encoded with the SDK's own
// event-stream encoder (prelude, headers, payload, CRCs). It records the
// request's body.
func converseStream(t *testing.T, frames ...frame) (*bedrockruntime.Client, *map[string]any) {
	t.Helper()
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.EscapedPath(), "/converse-stream") || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			t.Errorf("request %s %s, want a signed POST /model/{modelId}/converse-stream", r.Method, r.URL.EscapedPath())
		}
		data, _ := io.ReadAll(r.Body)
		json.Unmarshal(data, &body)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Requestid", "5f8a3b1c-2d4e-4f60-8a7b-9c0d1e2f3a4b")
		enc := eventstream.NewEncoder()
		for _, f := range frames {
			if f == hold {
				<-r.Context().Done()
				return
			}
			var h eventstream.Headers
			h.Set(":message-type", eventstream.StringValue(f.kind))
			h.Set(":"+f.kind+"-type", eventstream.StringValue(f.typ))
			h.Set(":content-type", eventstream.StringValue("application/json"))
			var buf bytes.Buffer
			if err := enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(f.payload)}); err != nil {
				t.Error(err)
			}
			w.Write(buf.Bytes())
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	// Read whole (see runtime.client) unless the stream must stay open.
	var client bedrockruntime.HTTPClient = readWhole{srv.Client()}
	if slices.Contains(frames, hold) {
		client = srv.Client()
	}
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		Retryer:      retry.AddWithMaxAttempts(retry.NewStandard(), 1),
		HTTPClient:   client,
	}), &body
}

// The frames of a streamed answer, as Bedrock sends them ("p" is the
// padding Bedrock adds to every event).
var (
	messageStart = event("messageStart", `{"p":"abcdefghij","role":"assistant"}`)
	textDelta    = func(s string) frame {
		b, _ := json.Marshal(s)
		return event("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":`+string(b)+`},"p":"abcd"}`)
	}
	blockStop   = event("contentBlockStop", `{"contentBlockIndex":0,"p":"abcdefghijklmnop"}`)
	messageStop = func(reason string) frame { return event("messageStop", `{"p":"abcdefgh","stopReason":"`+reason+`"}`) }
	metadata    = event("metadata", `{"metrics":{"latencyMs":412},"p":"abc","usage":{"inputTokens":125,"outputTokens":9,"totalTokens":134}}`)
)

func TestConverseStreamReadsTheEventStream(t *testing.T) {
	const model = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
	for _, tc := range []struct {
		name       string
		frames     []frame
		wantDeltas []string
		want       provider.ChatReply
	}{
		{"TextArrivesInDeltasWithTheUsageLast",
			[]frame{messageStart, textDelta("Every"), textDelta(" three"), textDelta(" months."), blockStop, messageStop("end_turn"), metadata},
			[]string{"Every", " three", " months."},
			provider.ChatReply{Text: "Every three months.", StopReason: provider.StopEnd, Provider: "bedrock", Model: model, InputTokens: 125, OutputTokens: 9}},
		{"AToolUseIsAssembledFromItsFragments",
			[]frame{messageStart, textDelta("Let me look."), blockStop,
				event("contentBlockStart", `{"contentBlockIndex":1,"p":"ab","start":{"toolUse":{"name":"web_search","toolUseId":"tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"}}}`),
				event("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"query\": "}},"p":"abc"}`),
				event("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"go 1.24\", \"n\": 12345678901234567890}"}},"p":"abc"}`),
				event("contentBlockStop", `{"contentBlockIndex":1,"p":"abc"}`), messageStop("tool_use"), metadata},
			[]string{"Let me look."},
			provider.ChatReply{Text: "Let me look.", ToolCalls: []provider.ToolCall{{ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "web_search",
				Arguments: json.RawMessage(`{"query": "go 1.24", "n": 12345678901234567890}`)}},
				StopReason: provider.StopToolUse, Provider: "bedrock", Model: model, InputTokens: 125, OutputTokens: 9}},
		{"ACutAnswerStopsForMaxTokens",
			[]frame{messageStart, textDelta("Every"), blockStop, messageStop("max_tokens"), metadata},
			[]string{"Every"},
			provider.ChatReply{Text: "Every", StopReason: provider.StopMaxToken, Provider: "bedrock", Model: model, InputTokens: 125, OutputTokens: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, body := converseStream(t, tc.frames...)
			g, _ := bedrock.NewGenerator(rt, model)
			var deltas []string
			temp := 0.3
			got, err := g.ChatStream(context.Background(), provider.ChatRequest{System: "Be brief.", Messages: []provider.Message{{Role: "user", Content: "How often?"}},
				MaxTokens: 300, Temperature: &temp}, func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ChatStream mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDeltas, deltas); diff != "" {
				t.Errorf("deltas mismatch (-want +got):\n%s", diff)
			}
			wantBody := map[string]any{"system": []any{map[string]any{"text": "Be brief."}},
				"messages":        []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": "How often?"}}}},
				"inferenceConfig": map[string]any{"maxTokens": float64(300), "temperature": 0.3}}
			if diff := cmp.Diff(wantBody, *body, cmp.Comparer(func(a, b float64) bool { return float32(a) == float32(b) })); diff != "" {
				t.Errorf("ConverseStream body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverseStreamFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		frames     []frame
		wantDeltas int
		wantErr    []string
		wantKind   fault.Kind
	}{
		{"AnExceptionMidStream", []frame{messageStart, textDelta("Every"),
			exception("modelStreamErrorException", `{"message":"The model stream failed.","originalStatusCode":500}`)}, 1,
			[]string{"converse-stream", "ModelStreamErrorException", "The model stream failed."}, fault.KindInternal},
		{"ThrottledMidStream", []frame{messageStart, textDelta("Every"), exception("throttlingException", `{"message":"Too many tokens, please wait before trying again."}`)}, 1,
			[]string{"ThrottlingException", "Too many tokens"}, fault.KindUnavailable},
		{"AStreamThatEndsEarly", []frame{messageStart, textDelta("Every")}, 1, []string{"ended before messageStop"}, fault.KindInternal},
		{"ADeltaLongerThanTheBound", []frame{messageStart, textDelta(strings.Repeat("a", provider.MaxStreamEventBytes+1))}, 0,
			[]string{"a delta is longer than"}, fault.KindInternal},
		{"AToolUseWhoseInputIsNotJSON", []frame{messageStart,
			event("contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"name":"web_search","toolUseId":"t1"}}}`),
			event("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"query\""}}}`), messageStop("tool_use"), metadata}, 0,
			[]string{"toolUse web_search: input is not JSON"}, fault.KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, _ := converseStream(t, tc.frames...)
			g, _ := bedrock.NewGenerator(rt, bedrock.DefaultGenerationModel)
			n := 0
			_, err := g.ChatStream(context.Background(), provider.ChatRequest{Messages: []provider.Message{{Role: "user", Content: "hi"}}}, func(string) { n++ })
			if err == nil {
				t.Fatal("ChatStream succeeded, want an error")
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
			if k := fault.KindOf(err); k != tc.wantKind {
				t.Errorf("error kind %s, want %s", k, tc.wantKind)
			}
			if n != tc.wantDeltas {
				t.Errorf("%d deltas before the error, want %d", n, tc.wantDeltas)
			}
		})
	}
}

func TestConverseStreamStopsWhenTheContextEnds(t *testing.T) {
	rt, _ := converseStream(t, messageStart, textDelta("Every"), hold)
	g, _ := bedrock.NewGenerator(rt, bedrock.DefaultGenerationModel)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := g.ChatStream(ctx, provider.ChatRequest{Messages: []provider.Message{{Role: "user", Content: "hi"}}}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) || fault.KindOf(err) == fault.KindUnavailable {
		t.Errorf("ChatStream = %v, want the context's cancellation", err)
	}
}
