package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// answering is a client elicitation handler that answers every form with
// action and content, and remembers the questions it was asked.
type answering struct {
	action  string
	content map[string]any
	mu      sync.Mutex
	asked   []string
}

func (a *answering) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req.Params.Message)
	return &mcp.ElicitResult{Action: a.action, Content: a.content}, nil
}

func (a *answering) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// conversationWith creates conversation id holding n messages.
func conversationWith(t *testing.T, cs *mcp.ClientSession, id string, n int) {
	t.Helper()
	mustCall(t, cs, "memory_get_or_create", map[string]any{"conversation_id": id})
	for range n {
		mustCall(t, cs, "memory_add_message", map[string]any{"conversation_id": id, "role": "user", "content": "hello"})
	}
}

func exists(t *testing.T, cs *mcp.ClientSession, id string) bool {
	t.Helper()
	return !call(t, cs, "memory_get_context", map[string]any{"conversation_id": id}).IsError
}

// TestMemoryDeleteAsksTheUserThroughTheClient runs memory_delete's
// confirmation end to end with the go-sdk client, whose multi round-trip
// middleware answers the input request with its elicitation handler and
// calls again with the answer and the request state.
func TestMemoryDeleteAsksTheUserThroughTheClient(t *testing.T) {
	h := newHarness(t, nil)
	setup := h.connect(t, "", nil)
	tests := []struct {
		name        string
		answer      *answering // nil: a client that cannot show forms
		version     string
		args        map[string]any
		wantAsked   bool
		wantDeleted bool
	}{
		{name: "the user confirms", answer: &answering{action: "accept", content: map[string]any{"confirm": true}}, wantAsked: true, wantDeleted: true},
		{name: "the user declines", answer: &answering{action: "decline"}, wantAsked: true},
		{name: "the user leaves the box unticked", answer: &answering{action: "accept", content: map[string]any{"confirm": false}}, wantAsked: true},
		{name: "confirm true is not asked again", answer: &answering{action: "decline"}, args: map[string]any{"confirm": true}, wantDeleted: true},
		{name: "a client without forms is not asked", wantDeleted: true},
		{name: "a client on 2025-11-25 is not asked", answer: &answering{action: "decline"}, version: "2025-11-25", wantDeleted: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "doomed-" + string(rune('a'+i))
			conversationWith(t, setup, id, 2)
			var opts mcp.ClientOptions
			if tt.answer != nil {
				opts.ElicitationHandler = tt.answer.handle
			}
			cs := h.connectVersion(t, "", &opts, tt.version)
			args := map[string]any{"conversation_id": id}
			for k, v := range tt.args {
				args[k] = v
			}
			res := call(t, cs, "memory_delete", args)
			var asked []string
			if tt.answer != nil {
				asked = tt.answer.questions()
			}
			if tt.wantAsked != (len(asked) == 1) || len(asked) > 1 {
				t.Fatalf("asked %q, want one question: %v", asked, tt.wantAsked)
			}
			if tt.wantAsked && (!strings.Contains(asked[0], id) || !strings.Contains(asked[0], "2 messages")) {
				t.Errorf("asked %q, want the conversation and its 2 messages named", asked[0])
			}
			if res.IsError == tt.wantDeleted {
				t.Errorf("isError = %v: %s", res.IsError, text(res))
			}
			if got := exists(t, setup, id); got == tt.wantDeleted {
				t.Errorf("the conversation exists: %v, want %v", got, !tt.wantDeleted)
			}
		})
	}
}

// TestARequestStateOpensOnlyForItsCall drives the rounds by hand (the
// client's multi round-trip middleware off) to send back request states
// that were altered, issued for other arguments or another caller, or used
// before.
func TestARequestStateOpensOnlyForItsCall(t *testing.T) {
	h := newHarness(t, func(o *gateway.Options) { o.Anonymous = nil })
	alice, bob := newKey(t, h, "acme", "alice"), newKey(t, h, "acme", "bob")
	answer := &answering{action: "accept", content: map[string]any{"confirm": true}}
	manual := &mcp.ClientOptions{ElicitationHandler: answer.handle, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	cs := h.connect(t, alice, manual)
	conversationWith(t, cs, "kept", 1)
	conversationWith(t, cs, "doomed", 1)

	first := call(t, cs, "memory_delete", map[string]any{"conversation_id": "doomed"})
	if !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("memory_delete answered %+v, want an input-required result with a request state", first)
	}
	if _, ok := first.InputRequests["confirm"].(*mcp.ElicitParams); !ok {
		t.Fatalf("input requests %v, want a form named confirm", first.InputRequests)
	}
	yes := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	retry := func(cs *mcp.ClientSession, id, state string) (*mcp.CallToolResult, error) {
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_delete",
			Arguments: map[string]any{"conversation_id": id}, InputResponses: yes, RequestState: state})
	}
	refusals := []struct {
		name   string
		client *mcp.ClientSession
		id     string
		state  string
		want   error
	}{
		{"an altered state", cs, "doomed", first.RequestState + "-TAMPERED", elicit.ErrTampered},
		{"a state for other arguments", cs, "kept", first.RequestState, elicit.ErrForeign},
		{"another principal's state", h.connect(t, bob, manual), "doomed", first.RequestState, elicit.ErrForeign},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			res, err := retry(tt.client, tt.id, tt.state)
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, tt.want.Error()) {
				t.Fatalf("retry = %+v, %v; want invalid params: %v", res, err, tt.want)
			}
		})
	}
	if !exists(t, cs, "kept") || !exists(t, cs, "doomed") {
		t.Fatal("a refused state deleted something")
	}
	res, err := retry(cs, "doomed", first.RequestState)
	if err != nil || res.IsError {
		t.Fatalf("the answer with its state: %+v, %v", res, err)
	}
	if exists(t, cs, "doomed") {
		t.Error("the confirmed conversation was not deleted")
	}
	again, err := retry(cs, "doomed", first.RequestState)
	if err != nil || !again.IsError || !strings.Contains(text(again), elicit.ErrReplayed.Error()) {
		t.Errorf("the same state again: %+v, %v; want a tool error saying it was already used", again, err)
	}
	if len(answer.questions()) != 0 {
		t.Errorf("the manual client's handler was called: %q", answer.questions())
	}
}

// asker is a tool that asks for what its input names until it is answered.
type askerInput struct {
	Ask string `json:"ask"`
}

func withAsker(t *testing.T) func(*gateway.Options) {
	asker := &catalog.Tool{
		Name: "asker", Title: "Asker", Description: "Asks for a name or a completion.", Family: "test", Function: "test/asker",
		InputSchema: mustSchema[askerInput](t), OutputSchema: mustSchema[askerInput](t), Visibility: catalog.Public,
		Limits: catalog.Limits{Timeout: time.Second, MemoryMB: 128},
	}
	return func(o *gateway.Options) {
		cat, err := catalog.New(append(catalog.Default().Tools(), asker), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Catalog = cat
		o.Invoker = invoke.NewLocal(map[string]lambdaHandler{"test/asker": lambdafn.Tool(asker, lambdafn.Deps{}, func(ctx context.Context, _ tenant.Caller, in askerInput) (askerInput, error) {
			if _, ok := elicit.FromContext(ctx).Response("q"); ok {
				return in, nil
			}
			if in.Ask == "sampling" {
				//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
				return in, elicit.Ask("q", &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			}
			return in, elicit.Ask("q", elicit.Form("What is your name?", map[string]any{"type": "object"}))
		})}, nil)
	}
}

func TestAClientBefore20260728GetsAToolErrorNamingTheVersionThatCanAsk(t *testing.T) {
	h := newHarness(t, withAsker(t))
	answer := &answering{action: "accept", content: map[string]any{}}
	cs := h.connectVersion(t, "", &mcp.ClientOptions{ElicitationHandler: answer.handle}, "2025-11-25")
	res := call(t, cs, "asker", map[string]any{"ask": "form"})
	if !res.IsError || !strings.Contains(text(res), "What is your name?") || !strings.Contains(text(res), elicit.ProtocolVersion) {
		t.Errorf("asker answered %q (isError %v), want a tool error naming the question and %s", text(res), res.IsError, elicit.ProtocolVersion)
	}
	if q := answer.questions(); len(q) != 0 {
		t.Errorf("the server sent the client a request: %q", q)
	}
}

func TestAQuestionTheClientCannotAnswerIsMissingRequiredClientCapability(t *testing.T) {
	h := newHarness(t, withAsker(t))
	answer := &answering{action: "accept", content: map[string]any{}}
	cs := h.connect(t, "", &mcp.ClientOptions{ElicitationHandler: answer.handle}) // forms, no sampling
	if res := call(t, cs, "asker", map[string]any{"ask": "form"}); res.IsError {
		t.Errorf("a form the client can answer: %s", text(res))
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "asker", Arguments: map[string]any{"ask": "sampling"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(werr.Data), `"sampling":{}`) {
		t.Errorf("asking a client without sampling for a completion: %v, want MissingRequiredClientCapabilityError naming sampling", err)
	}
}

// TestEveryListAndReadSaysHowToCacheIt checks ttlMs and cacheScope: what
// comes from the catalog is public for CatalogTTL, a tenant's own data
// (its conversations, its connectors' tools) private and immediately stale.
func TestEveryListAndReadSaysHowToCacheIt(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	conversationWith(t, cs, "cached", 1)
	ctx := context.Background()
	public := mcp.Cacheable{TTLMs: int(gateway.CatalogTTL.Milliseconds()), CacheScope: "public"}
	private := mcp.Cacheable{TTLMs: 0, CacheScope: "private"}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://conversation/cached"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		got, want mcp.Cacheable
	}{
		{"tools/list, which holds the tenant's connectors' tools", tools.Cacheable, private},
		{"resources/templates/list", templates.Cacheable, public},
		{"resources/list, which holds the tenant's conversations", resources.Cacheable, private},
		{"resources/read of a conversation", read.Cacheable, private},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}

// connectVersion is connect on protocol version (if set).
func (h *harness) connectVersion(t *testing.T, key string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	if version == "" {
		return h.connect(t, key, opts)
	}
	hc := &http.Client{}
	if key != "" {
		hc.Transport = bearer{key}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting on %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
