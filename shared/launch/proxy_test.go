package launch

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/connector"
)

// richUpstream is a go-sdk MCP server with a tool of each kind a proxy must
// carry, counting the calls of each.
type richUpstream struct {
	url   string
	calls sync.Map // tool name -> *atomic.Int64
}

func (u *richUpstream) count(tool string) int64 {
	n, _ := u.calls.LoadOrStore(tool, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

func (u *richUpstream) called(tool string) {
	n, _ := u.calls.LoadOrStore(tool, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// startRichUpstream serves, over transport, with [upstreamToken] required:
// echo (read-only), charge (not read-only), fail (answers isError), count
// (three progress notifications to the caller's token), a resource and a
// prompt.
func startRichUpstream(t *testing.T, transport string) *richUpstream {
	t.Helper()
	u := &richUpstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "rich", Version: "1"}, nil)
	type text struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in text) (*mcp.CallToolResult, any, error) {
			u.called("echo")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "charges an amount"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Amount int `json:"amount"`
		}) (*mcp.CallToolResult, any, error) {
			u.called("charge")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "always fails"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			u.called("fail")
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the upstream refused"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "count", Description: "reports progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			u.called("count")
			if token := req.Params.GetProgressToken(); token != nil {
				for i := 1; i <= 3; i++ {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: 3, Message: "step"})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
		})
	srv.AddResource(&mcp.Resource{URI: "file:///readme.txt", Name: "readme", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if transport == connector.TransportSSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != upstreamToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	u.url = ts.URL + "/mcp"
	return u
}

// connectLocal connects a go-sdk client (protocol 2026-07-28) to the local
// server at base.
func connectLocal(t *testing.T, base string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// register creates, verifies and syncs connector name for up over transport.
func register(t *testing.T, cs *mcp.ClientSession, name, transport string, up *richUpstream) {
	t.Helper()
	callJSON(t, cs, "connector_create", map[string]any{"name": name, "base_url": up.url, "transport": transport,
		"headers": map[string]string{"Authorization": upstreamToken}}, false)
	callJSON(t, cs, "connector_verify", map[string]any{"name": name}, false)
	callJSON(t, cs, "connector_sync", map[string]any{"name": name}, false)
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestConnectorsAreProxiedThroughTheLocalServer lists and calls a go-sdk
// upstream's tools, resources and prompts under their proxied names through
// the local server over HTTP, on both transports: schemas and annotations as
// the upstream gave them, a denied tool hidden and refused, isError passed
// through, progress relayed to the client's token.
func TestConnectorsAreProxiedThroughTheLocalServer(t *testing.T) {
	base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
	var mu sync.Mutex
	var progress []float64
	cs := connectLocal(t, base, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, req.Params.Progress)
	}})
	ctx := context.Background()
	for _, transport := range []string{connector.TransportStreamable, connector.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			name := "rich_" + strings.TrimSuffix(transport, "_http")
			up := startRichUpstream(t, transport)
			register(t, cs, name, transport, up)
			for _, tool := range []string{"echo", "fail", "count"} {
				callJSON(t, cs, "approval_policy_set", map[string]any{"connector": name, "tool": tool, "policy": "ALWAYS_ALLOW"}, false)
			}
			callJSON(t, cs, "approval_policy_set", map[string]any{"connector": name, "tool": "charge", "policy": "ALWAYS_DENY"}, false)

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tl := range tools.Tools {
				byName[tl.Name] = tl
			}
			echo := byName[name+"__echo"]
			if echo == nil || byName["memory_add_message"] == nil {
				t.Fatalf("tools/list lacks %s__echo or Switchboard's own tools", name)
			}
			if echo.Annotations == nil || !echo.Annotations.ReadOnlyHint || !strings.Contains(string(mustJSON(t, echo.InputSchema)), `"text"`) {
				t.Errorf("%s is listed as %s, want the upstream's schema and readOnlyHint", echo.Name, mustJSON(t, echo))
			}
			if byName[name+"__charge"] != nil {
				t.Errorf("tools/list shows %s__charge, which ALWAYS_DENY hides", name)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "__echo", Arguments: map[string]any{"text": "hi there"}})
			if err != nil || res.IsError || textOf(res) != "hi there" {
				t.Fatalf("calling %s__echo answered %+v, %v; want the upstream's echo", name, res, err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "__fail", Arguments: map[string]any{}})
			if err != nil || !res.IsError || textOf(res) != "the upstream refused" {
				t.Fatalf("calling %s__fail answered %+v, %v; want the upstream's isError result as it was", name, res, err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name + "__charge", Arguments: map[string]any{"amount": 1}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "ALWAYS_DENY") || up.count("charge") != 0 {
				t.Fatalf("calling the denied %s__charge answered %+v, %v (upstream calls %d); want a refusal", name, res, err, up.count("charge"))
			}
			mu.Lock()
			progress = nil
			mu.Unlock()
			params := &mcp.CallToolParams{Name: name + "__count", Arguments: map[string]any{}}
			params.SetProgressToken("p-" + name)
			if res, err = cs.CallTool(ctx, params); err != nil || res.IsError || textOf(res) != "counted" {
				t.Fatalf("calling %s__count answered %+v, %v", name, res, err)
			}
			got := awaitProgress(&mu, &progress, 3)
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress received %v, want the upstream's 1, 2, 3", got)
			}

			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			uri := "connector://" + name + "/file:///readme.txt"
			if !slices.ContainsFunc(resources.Resources, func(r *mcp.Resource) bool { return r.URI == uri }) {
				t.Errorf("resources/list lacks %s", uri)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "read me" || read.Contents[0].URI != uri {
				t.Errorf("reading %s answered %+v, %v", uri, read, err)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil || !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == name+"__greet" }) {
				t.Fatalf("prompts/list answered %+v, %v; want %s__greet", prompts, err, name)
			}
			prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name + "__greet", Arguments: map[string]string{"who": "ada"}})
			if err != nil || len(prompt.Messages) != 1 || prompt.Messages[0].Content.(*mcp.TextContent).Text != "hello ada" {
				t.Errorf("getting %s__greet answered %+v, %v", name, prompt, err)
			}
		})
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch__echo", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "nosuch") {
		t.Errorf("calling a tool of no connector answered %+v, %v; want a tool error naming the connector", res, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var approvalLink = regexp.MustCompile(`/approvals/([0-9a-f]{32})`)

// TestAnAskUserCallIsApprovedOnThePageAndRunsOnce calls an ASK_USER tool
// from a client that cannot answer forms: the tool error links the approval
// page, which the test opens and approves as a browser would, and the retry
// carrying the approval id runs the call exactly once.
func TestAnAskUserCallIsApprovedOnThePageAndRunsOnce(t *testing.T) {
	base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
	cs := connectLocal(t, base, nil)
	up := startRichUpstream(t, connector.TransportStreamable)
	register(t, cs, "pay", connector.TransportStreamable, up)
	ctx := context.Background()
	args := map[string]any{"amount": 5}

	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay__charge", Arguments: args})
	if err != nil || !first.IsError {
		t.Fatalf("an ASK_USER call answered %+v, %v; want a tool error asking for approval", first, err)
	}
	m := approvalLink.FindStringSubmatch(textOf(first))
	if m == nil || up.count("charge") != 0 {
		t.Fatalf("the refusal %q links no approval page (upstream calls %d)", textOf(first), up.count("charge"))
	}
	id := m[1]
	retry := func() *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay__charge", Arguments: args, Meta: mcp.Meta{connector.ApprovalMetaKey: id}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := retry(); !res.IsError || !strings.Contains(textOf(res), "waiting for a decision") {
		t.Fatalf("a retry before the decision answered %q, want it still waiting", textOf(res))
	}

	page := strings.TrimSuffix(base, "/mcp") + "/approvals/" + id
	opened, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(opened.Body)
	opened.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(body)
	if opened.StatusCode != http.StatusOK || csrf == nil || !strings.Contains(string(body), "charge") || len(opened.Cookies()) != 1 {
		t.Fatalf("GET %s = %d, want the page showing the call with a form:\n%s", page, opened.StatusCode, body)
	}
	form := url.Values{"decision": {"approve"}, "csrf": {html.UnescapeString(string(csrf[1]))}}
	post, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.AddCookie(opened.Cookies()[0])
	decided, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	decided.Body.Close()
	if decided.StatusCode != http.StatusOK {
		t.Fatalf("approving answered %d", decided.StatusCode)
	}

	if res := retry(); res.IsError || textOf(res) != "charged" || up.count("charge") != 1 {
		t.Fatalf("the approved retry answered %q (upstream calls %d), want the call run once", textOf(res), up.count("charge"))
	}
	if res := retry(); !res.IsError || !strings.Contains(textOf(res), "already used") || up.count("charge") != 1 {
		t.Fatalf("a second retry answered %q (upstream calls %d), want the approval spent", textOf(res), up.count("charge"))
	}
	other, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay__charge", Arguments: map[string]any{"amount": 500}, Meta: mcp.Meta{connector.ApprovalMetaKey: id}})
	if err != nil || !other.IsError || up.count("charge") != 1 {
		t.Fatalf("the approval with other arguments answered %+v, %v; want it refused", other, err)
	}
}

// TestAnAskUserCallIsApprovedByElicitation calls an ASK_USER tool from a
// 2026-07-28 client that answers forms: the gateway answers an
// InputRequiredResult, the go-sdk client asks its handler and calls again
// with the answer and the request state, and the call runs once; a client
// that declines runs nothing.
func TestAnAskUserCallIsApprovedByElicitation(t *testing.T) {
	base, _ := serveLocalAllowing(t, t.TempDir(), "127.0.0.1")
	up := startRichUpstream(t, connector.TransportSSE)
	register(t, connectLocal(t, base, nil), "pay", connector.TransportSSE, up)
	for _, tc := range []struct {
		name      string
		action    string
		wantRuns  int64
		wantError bool
	}{
		{"an accepted approval runs the call once", "accept", 1, false},
		{"a declined approval runs nothing", "decline", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int64
			cs := connectLocal(t, base, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				if !strings.Contains(req.Params.Message, "charge") {
					t.Errorf("the form says %q, without the tool", req.Params.Message)
				}
				return &mcp.ElicitResult{Action: tc.action, Content: map[string]any{"confirm": tc.action == "accept"}}, nil
			}})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pay__charge", Arguments: map[string]any{"amount": 7}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.wantError || asked.Load() != 1 || up.count("charge") != tc.wantRuns {
				t.Fatalf("answered %q (isError %v), asked %d times, upstream calls %d; want isError %v, asked once, %d calls",
					textOf(res), res.IsError, asked.Load(), up.count("charge"), tc.wantError, tc.wantRuns)
			}
		})
	}
}

// awaitProgress returns the progress values received so far once there are
// n, or after 2 s: the client's handler receives notifications from a queue
// of its own, which may lag the result.
func awaitProgress(mu *sync.Mutex, progress *[]float64, n int) []float64 {
	var got []float64
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		got = slices.Clone(*progress)
		mu.Unlock()
		if len(got) >= n {
			break
		}
	}
	return got
}
