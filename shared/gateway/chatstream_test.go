package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// A hosted model's answer reaches an OpenAI client through the gateway as
// the model writes it: the stand-in model writes its first words, then
// waits until the client has read them as a chunk before it finishes.
func TestChatCompletionsStreamsAHostedModelsAnswerAsItIsWritten(t *testing.T) {
	proceed := make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			t.Error("the chat did not ask the model for a stream")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(data string) { fmt.Fprintf(w, "data: %s\n\n", data); w.(http.Flusher).Flush() }
		delta := func(d, finish string) string {
			return `{"id":"chatcmpl-m","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + finish + `}]}`
		}
		send(delta(`{"role":"assistant","content":"Every"}`, "null"))
		select {
		case <-proceed:
		case <-time.After(time.Minute):
			t.Error("the client saw nothing of the answer while the model was still writing")
		case <-r.Context().Done():
			return
		}
		send(delta(`{"content":" three months."}`, "null"))
		send(delta(`{}`, `"stop"`))
		send(`{"id":"chatcmpl-m","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":6,"total_tokens":46}}`)
		send("[DONE]")
	}))
	defer model.Close()
	client, _ := openai.NewClient(model.URL, "", &openai.ClientOptions{MaxRetries: -1})
	gen, _ := openai.NewGenerator(client, "gpt-4o-mini")
	tbl := storetest.OpenEmbedded(t)
	c := serveChat(t, tbl, lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: gen})

	resp := c.post(t, c.key, `{"model":"switchboard","stream":true,"messages":[{"role":"user","content":"How often should I replace my toothbrush?"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var text strings.Builder
	var usage *usage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ch chunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, choice := range ch.Choices {
			text.WriteString(choice.Delta.Content)
		}
		if text.String() == "Every" {
			close(proceed)
		}
		if ch.TokenUsage != nil {
			usage = ch.TokenUsage
		}
	}
	if text.String() != "Every three months." {
		t.Errorf("streamed answer %q", text.String())
	}
	if usage == nil || usage.PromptTokens != 40 || usage.CompletionTokens != 6 {
		t.Errorf("token_usage %+v, want the model stream's", usage)
	}
}
