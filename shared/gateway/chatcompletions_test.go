package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/chat"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// chatServer is the local server's assembly behind HTTP, offline, with an
// API key for tenant acme and a store of guides ingested through the tools.
type chatServer struct {
	url, key string
	stack    *local.Stack
	keys     *apikey.Keys
}

// serveChat serves every function over deps behind the gateway on HTTP,
// with an API key for tenant acme.
func serveChat(t *testing.T, tbl store.Table, deps lambdafn.Deps) *chatServer {
	t.Helper()
	s := stack(t, deps)
	t.Cleanup(func() { s.Close() })
	keys := apikey.New(tbl, nil)
	cat := catalog.Default()
	gw, err := gateway.New(gateway.Options{Catalog: cat, Invoker: s, Keys: keys, Approvals: gateway.ConnectorApprovals(cat, s)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	key, _, err := keys.Create(context.Background(), "acme", "alice", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return &chatServer{url: srv.URL, key: key, stack: s, keys: keys}
}

func newChatServer(t *testing.T) *chatServer {
	t.Helper()
	tbl := storetest.OpenEmbedded(t)
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{},
		Embedder: offline.NewEmbedder(offline.DefaultDims), Generator: offline.NewGenerator()}
	srv := serveChat(t, tbl, deps)
	acme := tenant.Caller{Tenant: "acme", Principal: "alice"}
	for _, c := range []struct {
		tool string
		args string
	}{
		{"vector_store_create", `{"alias":"health","description":"health and hygiene guides"}`},
		{"vector_document_ingest", `{"store":"health","doc_id":"dental-guide","format":"md","content":"# Toothbrushes\n\nReplace your toothbrush every three months, or sooner if the bristles fray.","metadata":{"source":"dental-guide.md"}}`},
	} {
		tl, _ := catalog.Default().Tool(c.tool)
		resp, err := srv.stack.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: c.tool, Arguments: json.RawMessage(c.args), Caller: acme})
		if err != nil || resp.Error != nil {
			t.Fatalf("%s: %v %+v", c.tool, err, resp)
		}
	}
	return srv
}

func (c *chatServer) post(t *testing.T, key, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url+gateway.ChatCompletionsPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// chunk is an OpenAI chat.completion.chunk, as a client decodes it.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage      *usage          `json:"usage"`
	TokenUsage *usage          `json:"token_usage"`
	VSMetadata json.RawMessage `json:"vs_metadata"`
	ThreadID   string          `json:"thread_id"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// readSSE parses an event stream as OpenAI's clients do: "data: " lines,
// events separated by blank lines, ending with [DONE].
func readSSE(t *testing.T, r io.Reader) []chunk {
	t.Helper()
	var out []chunk
	sc := bufio.NewScanner(r)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		if done {
			t.Fatalf("data after [DONE]: %q", data)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, c)
	}
	if !done {
		t.Fatal("the stream did not end with data: [DONE]")
	}
	return out
}

func TestChatCompletionsStreamsAVectorSearchTurn(t *testing.T) {
	c := newChatServer(t)
	resp := c.post(t, c.key, `{"model":"switchboard","stream":true,"stream_options":{"include_usage":true},"thread_id":"web-1",
		"messages":[{"role":"user","content":"How often should I replace my toothbrush?"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	chunks := readSSE(t, resp.Body)
	if len(chunks) < 5 {
		t.Fatalf("%d chunks, want role, the answer in pieces, finish and usage: %+v", len(chunks), chunks)
	}
	for i, ch := range chunks[1 : len(chunks)-2] {
		if piece := ch.Choices[0].Delta.Content; strings.Count(strings.TrimSpace(piece), " ") > 0 || strings.TrimSpace(piece) == "" {
			t.Errorf("content chunk %d is %q, want one word", i+1, piece)
		}
	}
	var text strings.Builder
	for i, ch := range chunks {
		if ch.Object != "chat.completion.chunk" || ch.ID != chunks[0].ID || !strings.HasPrefix(ch.ID, "chatcmpl-") || ch.Created == 0 {
			t.Errorf("chunk %d %+v is not a chunk of one completion", i, ch)
		}
		for _, choice := range ch.Choices {
			text.WriteString(choice.Delta.Content)
		}
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %+v, want the assistant's role", chunks[0])
	}
	if !strings.Contains(text.String(), "three months") || !strings.HasPrefix(text.String(), "No language model is configured") {
		t.Errorf("streamed answer %q", text.String())
	}
	last, final := chunks[len(chunks)-2], chunks[len(chunks)-1]
	if fr := last.Choices[0].FinishReason; fr == nil || *fr != "stop" || last.ThreadID != "web-1" {
		t.Errorf("finish chunk %+v", last)
	}
	var vs struct {
		SearchedStores []string `json:"searched_stores"`
		ContextInput   string   `json:"context_input"`
		NumDocuments   int      `json:"num_documents"`
	}
	if err := json.Unmarshal(last.VSMetadata, &vs); err != nil || len(vs.SearchedStores) != 1 || vs.SearchedStores[0] != "health" || vs.NumDocuments != 1 || vs.ContextInput == "" {
		t.Errorf("vs_metadata %s (%v)", last.VSMetadata, err)
	}
	if u := final.Usage; u == nil || len(final.Choices) != 0 || u.TotalTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || *last.TokenUsage != *u {
		t.Errorf("usage chunk %+v, token_usage %+v", final, last.TokenUsage)
	}
}

func TestChatCompletionsAnswersOneCompletionWithoutStream(t *testing.T) {
	c := newChatServer(t)
	resp := c.post(t, c.key, `{"model":"switchboard","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi, I am Mike."},{"role":"assistant","content":"Hello Mike."},{"role":"user","content":[{"type":"text","text":"How often should I replace my toothbrush?"}]}]}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage      usage           `json:"usage"`
		VSMetadata json.RawMessage `json:"vs_metadata"`
		ThreadID   *string         `json:"thread_id"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "chat.completion" || len(got.Choices) != 1 || got.Choices[0].Message.Role != "assistant" ||
		!strings.Contains(got.Choices[0].Message.Content, "three months") || got.Choices[0].FinishReason != "stop" || got.Usage.TotalTokens == 0 {
		t.Errorf("completion %s", body)
	}
	if got.ThreadID != nil || !bytes.Contains(got.VSMetadata, []byte(`"num_documents":1`)) {
		t.Errorf("a stateless completion %s: want no thread and the search's metadata", body)
	}
}

func TestChatCompletionsRefusals(t *testing.T) {
	c := newChatServer(t)
	for _, tc := range []struct {
		name, key, body string
		status          int
		param           string
	}{
		{"WithoutAKey", "", `{"messages":[{"role":"user","content":"hi"}]}`, http.StatusUnauthorized, ""},
		{"NotJSON", c.key, `{"messages":`, http.StatusBadRequest, ""},
		{"NoMessages", c.key, `{"model":"switchboard","messages":[]}`, http.StatusBadRequest, "messages"},
		{"LastMessageNotTheUsers", c.key, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, http.StatusBadRequest, "messages[1].role"},
		{"ImageParts", c.key, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, http.StatusBadRequest, "messages[0].content"},
		{"ABadThread", c.key, `{"thread_id":"no spaces please","messages":[{"role":"user","content":"hi"}]}`, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := c.post(t, tc.key, tc.body)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == http.StatusUnauthorized {
				return
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Type != "invalid_request_error" {
				t.Fatalf("body %s is not an OpenAI error", body)
			}
			if tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param) {
				t.Errorf("param %v, want %s", e.Error.Param, tc.param)
			}
		})
	}
}

// The tools path with a connector's tool: the model calls pay__charge, the
// chat calls it through the connectors' proxy function with its approval
// policy, and the model answers from its result. An approval given on the
// page is carried into the thread's next turn, which makes the call the
// model asked for, exactly once.
func TestChatCallsConnectorToolsUnderTheirApprovalPolicy(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	var charged []json.RawMessage // the arguments of every call the upstream ran
	var chargedMu sync.Mutex
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "Charge the card."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct {
		Amount int `json:"amount"`
	}) (*mcp.CallToolResult, any, error) {
		chargedMu.Lock()
		charged = append(charged, req.Params.Arguments)
		chargedMu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"charged":12345678901234567890,"fee":0.1}`}}}, nil, nil
	})
	calls := func() []string {
		chargedMu.Lock()
		defer chargedMu.Unlock()
		var out []string
		for _, a := range charged {
			out = append(out, string(a))
		}
		return out
	}
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		msg := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_pay", "type": "function",
			"function": map[string]any{"name": "pay__charge", "arguments": `{"amount": 5}`}}}}
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			msg = map[string]any{"role": "assistant", "content": "The upstream said: " + last.Content}
		}
		json.NewEncoder(w).Encode(map[string]any{"model": "gpt-4o-mini", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	t.Cleanup(model.Close)
	client, _ := openai.NewClient(model.URL, "", nil)
	gen, _ := openai.NewGenerator(client, "gpt-4o-mini")

	tbl := storetest.OpenEmbedded(t)
	sealer, err := localkey.LoadKeyFile(filepath.Join(t.TempDir(), "connector-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}, Embedder: offline.NewEmbedder(offline.DefaultDims),
		Generator: gen, Sealer: sealer, CheckURL: guard.CheckURL, HTTPClient: guard.Client(10 * time.Second)}
	c := serveChat(t, tbl, deps)
	acme := tenant.Caller{Tenant: "acme", Principal: "alice"}
	for _, call := range []struct{ tool, args string }{
		{"connector_create", `{"name":"pay","base_url":"` + up.URL + `","transport":"streamable_http"}`},
		{"connector_sync", `{"name":"pay"}`},
	} {
		tl, _ := catalog.Default().Tool(call.tool)
		resp, err := c.stack.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: call.tool, Arguments: json.RawMessage(call.args), Caller: acme,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "setup"})
		if err != nil || resp.Error != nil {
			t.Fatalf("%s: %v %+v", call.tool, err, resp)
		}
	}
	say := func(t *testing.T, thread, message string, key ...string) string {
		t.Helper()
		resp := c.post(t, append(key, c.key)[0], `{"model":"switchboard","thread_id":"`+thread+`","messages":[{"role":"user","content":"`+message+`"}]}`)
		body, _ := io.ReadAll(resp.Body)
		var got struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK || len(got.Choices) != 1 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		return got.Choices[0].Message.Content
	}
	answer := func(t *testing.T, thread string, key ...string) string {
		t.Helper()
		return say(t, thread, "Charge my card.", key...)
	}
	approvalOf := func(t *testing.T, answer string) string {
		t.Helper()
		m := regexp.MustCompile(`/approvals/([0-9a-f]{32})`).FindStringSubmatch(answer)
		if m == nil {
			t.Fatalf("answer %q links no approval page", answer)
		}
		return m[1]
	}

	t.Run("AskUserAnswersWithTheApprovalPage", func(t *testing.T) {
		if got := answer(t, "pay-1"); !strings.Contains(got, "/approvals/") {
			t.Errorf("answer %q, want the approval page's path", got)
		}
	})
	t.Run("AnApprovalGivenOnThePageRunsTheCallOnTheNextTurnExactlyOnce", func(t *testing.T) {
		before := len(calls())
		id := approvalOf(t, answer(t, "pay-5"))
		decideOnThePage(t, c.url, c.key, id, "approve")
		if got, want := say(t, "pay-5", "I approved it."), `The upstream said: {"charged":12345678901234567890,"fee":0.1}`; got != want {
			t.Errorf("the turn after the approval answered %q, want %q", got, want)
		}
		if got := calls()[before:]; len(got) != 1 || got[0] != `{"amount":5}` {
			t.Fatalf("the upstream ran %q, want the model's call once, its arguments unchanged", got)
		}
		if again := answer(t, "pay-5"); approvalOf(t, again) == id {
			t.Errorf("the next turn answered %q, want a new approval asked", again)
		}
		if got := calls()[before:]; len(got) != 1 {
			t.Errorf("after another turn the upstream ran %d calls, want 1", len(got))
		}
		tools := &chat.Invoked{Catalog: catalog.Default(), Invoker: c.stack}
		res, err := tools.CallApproved(context.Background(), acme, "pay__charge", json.RawMessage(`{"amount":5}`), id)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "already used") {
			t.Errorf("a second retry with the approval answered %+v, %v; want it refused as used", res, err)
		}
		if got := calls()[before:]; len(got) != 1 {
			t.Errorf("after a second retry the upstream ran %d calls, want 1", len(got))
		}
	})
	t.Run("ADeniedApprovalIsReportedAndTheCallNeverRuns", func(t *testing.T) {
		before := len(calls())
		id := approvalOf(t, answer(t, "pay-6"))
		decideOnThePage(t, c.url, c.key, id, "deny")
		if got := say(t, "pay-6", "Did it go through?"); !strings.Contains(got, "denied") || strings.Contains(got, "charged") {
			t.Errorf("the turn after the denial answered %q, want it to say the call was denied", got)
		}
		if got := calls()[before:]; len(got) != 0 {
			t.Errorf("the upstream ran %q after a denial", got)
		}
	})
	t.Run("AnApprovalStillWaitingIsNotRunAndIsLinkedAgain", func(t *testing.T) {
		before := len(calls())
		id := approvalOf(t, answer(t, "pay-7"))
		if got := say(t, "pay-7", "Hello?"); !strings.Contains(got, "/approvals/"+id) {
			t.Errorf("the next turn answered %q, want the waiting approval's page linked", got)
		}
		if got := calls()[before:]; len(got) != 0 {
			t.Errorf("the upstream ran %q before a decision", got)
		}
	})
	t.Run("AlwaysAllowRunsTheToolAndKeepsItsNumbers", func(t *testing.T) {
		tl, _ := catalog.Default().Tool("approval_policy_set")
		resp, err := c.stack.Invoke(context.Background(), tl.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: tl.Name,
			Arguments: json.RawMessage(`{"connector":"pay","tool":"charge","policy":"ALWAYS_ALLOW"}`), Caller: acme, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "policy"})
		if err != nil || resp.Error != nil {
			t.Fatalf("approval_policy_set: %v %+v", err, resp)
		}
		if got, want := answer(t, "pay-2"), `The upstream said: {"charged":12345678901234567890,"fee":0.1}`; got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
	})
	t.Run("AKeyWhoseProfileDeniesTheToolCannotHaveTheChatCallIt", func(t *testing.T) {
		secret, key, err := c.keys.Create(context.Background(), "acme", "alice", nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.keys.SetProfile(context.Background(), key.Hash, profile.Profile{Deny: []string{"pay__*"}}); err != nil {
			t.Fatal(err)
		}
		const refused = "The upstream said: pay__charge is not a tool available in this conversation."
		if got := answer(t, "pay-3", secret); got != refused {
			t.Errorf("answer over /v1/chat/completions %q, want %q", got, refused)
		}
		cs := (&harness{url: c.url}).connect(t, secret, nil)
		if got := mustCall(t, cs, "chat", map[string]any{"thread_id": "pay-4", "message": "Charge my card."})["answer"]; got != refused {
			t.Errorf("answer of the chat tool %q, want %q", got, refused)
		}
	})
}

// decideOnThePage opens approval id's page with key and posts decision
// (approve or deny) with its CSRF token and cookie, as the browser does.
func decideOnThePage(t *testing.T, base, key, id, decision string) {
	t.Helper()
	page := base + "/approvals/" + id
	req := mustRequest(t, http.MethodGet, page)
	req.Header.Set("Authorization", "Bearer "+key)
	opened := do(t, req)
	cookies := (&http.Response{Header: opened.header}).Cookies()
	m := csrfRE.FindStringSubmatch(opened.body)
	if opened.status != http.StatusOK || m == nil || len(cookies) != 1 {
		t.Fatalf("GET %s = %d, want a form and a cookie:\n%s", page, opened.status, opened.body)
	}
	form := url.Values{"decision": {decision}, "csrf": {html.UnescapeString(m[1])}}
	post := mustRequest(t, http.MethodPost, page)
	post.Body = io.NopCloser(strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Authorization", "Bearer "+key)
	post.Header.Set("Origin", base)
	post.AddCookie(cookies[0])
	if got := do(t, post); got.status != http.StatusOK {
		t.Fatalf("POST %s %s = %d\n%s", page, decision, got.status, got.body)
	}
}

// The MCP tool chat serves the same turn as the endpoint, and
// memory_get_all_messages shows the documents it recorded as internal.
func TestTheChatToolOverMCP(t *testing.T) {
	c := newChatServer(t)
	cs := (&harness{url: c.url}).connect(t, c.key, nil)
	out := mustCall(t, cs, "chat", map[string]any{"thread_id": "mcp-1", "message": "How often should I replace my toothbrush?"})
	if answer, _ := out["answer"].(string); !strings.Contains(answer, "three months") || out["offline"] != true {
		t.Errorf("chat = %v", out)
	}
	msgs := mustCall(t, cs, "memory_get_all_messages", map[string]any{"conversation_id": "mcp-1"})["messages"].([]any)
	if len(msgs) != 3 || msgs[1].(map[string]any)["internal"] != true || msgs[1].(map[string]any)["role"] != "tool" {
		t.Errorf("messages %v, want the user's, the internal documents, the answer", msgs)
	}
}
