package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// fakeFunctions answers the calls of the test's fake tools (fake_<name>,
// served by function fake/<name>) with crafted responses, and sends every
// other call to the real functions. It counts the calls of each function.
type fakeFunctions struct {
	real  invoke.RawInvoker
	mu    sync.Mutex
	calls map[string]int
}

// fakeResults are the fake tools' results, by name, given the call's trace id.
var fakeResults = map[string]func(trace string) (*invoke.Response, error){
	"canonical": func(trace string) (*invoke.Response, error) {
		return lambdafnResult(trace, map[string]any{
			"text":   "a<b>&c \u2028 \u2029 é 😀 \"q\" \\ / \n\t\b\f\x01\x1f \x7f",
			"n":      1.5e300,
			"list":   []any{true, false, nil, math.Copysign(0, -1), 12, "x"},
			"nested": map[string]any{"<": map[string]any{">": []any{}}},
		}, false), nil
	},
	"tool_error": func(trace string) (*invoke.Response, error) {
		return lambdafnResult(trace, "conversation_id: <script> & friends must match ^[a-z]+$", true), nil
	},
	"escape_solidus":                textResult(`"\/"`, `{"a":"\/"}`),
	"escape_latin":                  textResult(`"caf\u00e9"`, `{"a":"caf\u00e9"}`),
	"escape_upper_hex":              textResult(`"\u001F"`, `{"a":"\u001F"}`),
	"escape_newline_as_hex":         textResult(`"\u000a"`, `{"a":"\u000a"}`),
	"escape_html":                   textResult(`"\u003c"`, `{"a":"\u003c"}`),
	"raw_line_separator":            textResult("\"a\u2028b\u2029\"", "{\"a\u2028\":\"\u2029\"}"),
	"raw_line_separator_structured": textResult(`"x"`, "{\"a\u2028\":\"\u2029\"}"),
	"raw_control":                   textResult("\"a\tb\"", `{"a":1}`),
	"spaced": func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":"x"}],"structuredContent":{ "a" : [1, 2] }}`), nil
	},
	"null_structured": func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":"null"}],"structuredContent":null}`), nil
	},
	"image": func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"image","data":"AAEC","mimeType":"image/png"},{"type":"text","text":"<ok>"}],"structuredContent":{"a":1}}`), nil
	},
	"no_meta": func(string) (*invoke.Response, error) {
		return result(`{"content":[{"type":"text","text":"x"}]}`), nil
	},
	"no_content": func(string) (*invoke.Response, error) {
		return result(`{"structuredContent":{"a":1}}`), nil
	},
	"trailing_garbage": func(trace string) (*invoke.Response, error) {
		resp := lambdafnResult(trace, map[string]any{"a": 1}, false)
		resp.Result = append(resp.Result, " x"...)
		return resp, nil
	},
	"undecodable": func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":"x"}],"structuredContent":{"a":}`), nil
	},
	"invalid_utf8": func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":"a` + "\xff" + `b"}],"structuredContent":{"a":"` + "\xfe" + `"}}`), nil
	},
	"slow":       nil, // answers when the call's context ends: see fakeFunctions.Invoke
	"echo_input": nil, // answers what the call says the client can be asked: see fakeFunctions.Invoke
	"asks": func(trace string) (*invoke.Response, error) {
		resp := lambdafnResult(trace, "asks needs an answer from you: sure?", true)
		resp.InputRequired = elicit.Ask("confirm", &mcp.ElicitParams{Message: "sure?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		return resp, nil
	},
	"fails": func(string) (*invoke.Response, error) {
		return nil, &invoke.FunctionError{Function: "fake/fails", Type: "Runtime.ExitError", Message: "exit status 2 <oops>"}
	},
	"times_out": func(string) (*invoke.Response, error) {
		return nil, &invoke.FunctionError{Function: "fake/times_out", Type: "Sandbox.Timedout", Message: "Task timed out"}
	},
	"input_required": func(string) (*invoke.Response, error) {
		return result(`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}},"requestState":"opaque"}`), nil
	},
	"notes": func(trace string) (*invoke.Response, error) {
		resp := lambdafnResult(trace, map[string]any{"done": true}, false)
		half, all := 0.5, 1.0
		resp.Notifications = []invoke.Notification{
			{Progress: &half, Total: 2, Message: "half <way>"},
			{Level: "debug", Logger: "fake", Data: "debug line"},
			{Level: "info", Logger: "fake", Data: map[string]any{"b": "<&>", "a": 1e21, "c": []any{1, "x"}}},
			{Level: "warning", Data: "careful"},
			{Level: "verbose", Data: "an unknown level"},
			{Progress: &all},
		}
		return resp, nil
	},
	"mid": func(trace string) (*invoke.Response, error) {
		return lambdafnResult(trace, map[string]any{"text": strings.Repeat("a <b> & \u00e9 ", 1000)}, false), nil
	},
	"big": func(trace string) (*invoke.Response, error) {
		return lambdafnResult(trace, map[string]any{"text": strings.Repeat("a <b> & \u00e9 ", 20000)}, false), nil
	},
}

// lambdafnResult writes v as lambdafn answers it: structured content and its
// JSON as text, or a tool error whose message is v.
func lambdafnResult(trace string, v any, isError bool) *invoke.Response {
	b, err := invoke.Marshal(v)
	if err != nil {
		panic(err)
	}
	text := b
	if !isError {
		if text, err = invoke.Marshal(string(b)); err != nil {
			panic(err)
		}
	}
	out := `{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":` + string(text) + `}]`
	if isError {
		return result(out + `,"isError":true}`)
	}
	return result(out + `,"structuredContent":` + string(b) + `}`)
}

func result(s string) *invoke.Response { return &invoke.Response{Result: json.RawMessage(s)} }

// textResult is a result in lambdafn's form with the given JSON of its text
// and structured content, which lambdafn would not write.
func textResult(text, structured string) func(trace string) (*invoke.Response, error) {
	return func(trace string) (*invoke.Response, error) {
		return result(`{"_meta":{"switchboard.dev/trace_id":"` + trace + `"},"content":[{"type":"text","text":` + text + `}],"structuredContent":` + structured + `}`), nil
	}
}

func (f *fakeFunctions) Invoke(ctx context.Context, function string, env *invoke.Request) (*invoke.Response, error) {
	f.mu.Lock()
	f.calls[function]++
	f.mu.Unlock()
	name, ok := strings.CutPrefix(function, "fake/")
	if !ok {
		return f.real.Invoke(ctx, function, env)
	}
	switch name {
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "echo_input":
		return lambdafnResult(env.TraceID, map[string]any{"input": env.Input, "protocol_version": env.ProtocolVersion}, false), nil
	}
	return fakeResults[name](env.TraceID)
}

// rawFunctions are fakeFunctions that give payloads undecoded too, as
// invoke.Local does, and decode them as it does.
type rawFunctions struct{ f *fakeFunctions }

func (r rawFunctions) InvokeRaw(ctx context.Context, function string, env *invoke.Request) ([]byte, error) {
	name, ok := strings.CutPrefix(function, "fake/")
	if !ok {
		r.f.mu.Lock()
		r.f.calls[function]++
		r.f.mu.Unlock()
		return r.f.real.InvokeRaw(ctx, function, env)
	}
	resp, err := r.f.Invoke(ctx, function, env)
	switch {
	case err != nil:
		return nil, err
	case name == "undecodable" || name == "trailing_garbage": // as the function wrote it: then the payload is not JSON either
		return []byte(`{"result":` + string(resp.Result) + `}`), nil
	}
	return invoke.EncodeResponse(resp)
}

func (r rawFunctions) Invoke(ctx context.Context, function string, env *invoke.Request) (*invoke.Response, error) {
	out, err := r.InvokeRaw(ctx, function, env)
	if err != nil {
		return nil, err
	}
	return invoke.DecodeResponse(function, out)
}

func (f *fakeFunctions) count() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// twoPaths is one gateway served twice: with the fast path, and with every
// request going to the go-sdk.
type twoPaths struct {
	fast, sdk string       // MCP URLs
	sdkCalls  atomic.Int64 // tools/call requests the go-sdk's server handled
	functions *fakeFunctions
	handler   http.Handler // the gateway's, with the fast path
}

// newTwoPaths serves the gateway over an invoker that gives payloads
// undecoded if raw is set, else one that gives responses only.
func newTwoPaths(t *testing.T, raw bool) *twoPaths {
	t.Helper()
	tbl := storetest.OpenEmbedded(t)
	def := catalog.Default()
	tools := def.Tools()
	template, ok := def.Tool("memory_get_summary")
	if !ok {
		t.Fatal("no memory_get_summary")
	}
	for name := range fakeResults {
		fake := *template
		fake.Name, fake.Function, fake.Mutates = "fake_"+name, "fake/"+name, false
		tools = append(tools, &fake)
	}
	internal := *template
	internal.Name, internal.Visibility = "pipeline_only", catalog.Internal
	tools = append(tools, &internal)
	cat, err := catalog.New(tools, def.Resources(), nil)
	if err != nil {
		t.Fatal(err)
	}
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}
	stack, err := local.New(local.Options{Deps: deps, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	p := &twoPaths{functions: &fakeFunctions{real: stack, calls: map[string]int{}}}
	var invoker invoke.Invoker = p.functions
	if raw {
		invoker = rawFunctions{p.functions}
	}
	g, err := New(Options{
		Catalog:           cat,
		Invoker:           invoker,
		Anonymous:         &tenant.Caller{Tenant: tenant.Local, Principal: "local"},
		AllowLocalOrigins: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Server().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				p.sdkCalls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	// A payload the fast path releases is overwritten at once, as a later
	// call could: any use after the release spoils the answer.
	releasePayload = func(b []byte) {
		for i := range b {
			b[i] = 'X'
		}
	}
	t.Cleanup(func() { releasePayload = invoke.ReleasePayload })
	p.handler = withTestDeadline(g.Handler())
	fast := httptest.NewUnstartedServer(p.handler)
	fast.Listener = WholeAnswers(fast.Config, fast.Listener) // as the local server serves it
	fast.Start()
	t.Cleanup(fast.Close)
	fastPathOn = false
	sdk := httptest.NewServer(withTestDeadline(g.Handler()))
	fastPathOn = true
	t.Cleanup(sdk.Close)
	p.fast, p.sdk = fast.URL+"/mcp", sdk.URL+"/mcp"
	return p
}

// withTestDeadline gives a request with an X-Test-Deadline header the
// deadline a Lambda gateway has, short enough that the gateway stops
// waiting for a function 100 ms in.
func withTestDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Deadline") != "" {
			ctx, cancel := context.WithTimeout(r.Context(), answerReserve+100*time.Millisecond)
			defer cancel()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// exchange is an HTTP answer, for comparing.
type exchange struct {
	Status int
	Header http.Header
	Body   string
}

// ids matches the random request ids answers may name, and the sealed
// request states, random too.
var ids = regexp.MustCompile(`[0-9a-f]{32}|"requestState":"[^"]*"`)

func send(t *testing.T, url string, header map[string]string, body string) exchange {
	t.Helper()
	e, err := exchangeWith(url, header, body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// exchangeWith POSTs body to url with the headers of a 2025-11-25 client
// and header, and returns the answer.
func exchangeWith(url string, header map[string]string, body string) (exchange, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return exchange{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return exchange{}, err
	}
	resp.Header.Del("Date")
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		// The go-sdk sends SSE chunked, the fast path with its length: the
		// same bytes, framed as HTTP allows.
		resp.Header.Del("Content-Length")
	}
	return exchange{Status: resp.StatusCode, Header: resp.Header, Body: ids.ReplaceAllString(string(b), "<id>")}, nil
}

// sessionless is the _meta a 2026-07-28 client sends with every request.
const sessionless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

func toolsCall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func toolsCallMeta(tool, args, meta string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,"_meta":{` + meta + `}}}`
}

func sessionlessHeaders(tool string) map[string]string {
	return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

func TestTheFastPathAnswersAsTheGoSDKDoes(t *testing.T) {
	for _, raw := range []bool{true, false} {
		t.Run(map[bool]string{true: "PayloadsUndecoded", false: "ResponsesOnly"}[raw], func(t *testing.T) {
			testTheFastPathAnswersAsTheGoSDKDoes(t, newTwoPaths(t, raw), raw)
		})
	}
}

func testTheFastPathAnswersAsTheGoSDKDoes(t *testing.T, p *twoPaths, raw bool) {
	conv := `{"conversation_id":"fast"}`
	// A conversation to read, with a summary.
	send(t, p.sdk, nil, toolsCall("1", "memory_get_or_create", conv))
	for i := range 12 {
		send(t, p.sdk, nil, toolsCall("1", "memory_add_message", fmt.Sprintf(`{"conversation_id":"fast","role":"user","content":"Message %d: <b>brush</b> & floss, é 😀"}`, i)))
	}
	if e := send(t, p.sdk, nil, toolsCall("1", "memory_get_context", conv)); !strings.Contains(e.Body, `"summary"`) {
		t.Fatalf("seeding: %+v", e)
	}
	const (
		fast = "fast" // answered by the fast path
		sdk  = "sdk"  // passed to the go-sdk
	)
	v26 := sessionlessHeaders("memory_get_context")
	caps := func(c string) string {
		return `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + c
	}
	type tc struct {
		name   string
		header map[string]string
		body   string
		served string
	}
	cases := []tc{
		{"ASuccessfulCall", nil, toolsCall("1", "memory_get_context", conv), fast},
		{"AStringID", nil, toolsCall(`"req-<1>"`, "memory_get_context", conv), sdk},
		{"APlainStringID", nil, toolsCall(`"req 1"`, "memory_get_context", conv), fast},
		{"ANegativeID", nil, toolsCall("-42", "memory_get_context", conv), fast},
		{"ALargeID", nil, toolsCall("123456789012345", "memory_get_context", conv), fast},
		{"ATooLargeID", nil, toolsCall("12345678901234567", "memory_get_context", conv), sdk},
		{"AFractionalID", nil, toolsCall("1.5", "memory_get_context", conv), sdk},
		{"AnExponentID", nil, toolsCall("1e3", "memory_get_context", conv), sdk},
		{"AMinusZeroID", nil, toolsCall("-0", "memory_get_context", conv), sdk},
		{"ANullID", nil, toolsCall("null", "memory_get_context", conv), sdk},
		{"ANotification", nil, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"fast"}}}`, sdk},
		{"AToolError", nil, toolsCall("2", "memory_get_context", `{"conversation_id":"nope"}`), fast},
		{"InvalidArguments", nil, toolsCall("3", "memory_add_message", `{"conversation_id":"fast","role":"robot","content":"x"}`), fast},
		{"ArgumentsOfTheWrongType", nil, toolsCall("3", "memory_get_context", `["fast"]`), fast},
		{"NoArguments", nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_get_context"}}`, fast},
		{"NullArguments", nil, toolsCall("3", "memory_get_context", "null"), sdk},
		{"ArgumentsWithEscapesAndSpaces", nil, toolsCall("3", "memory_get_context", "{ \"conversation_id\" : \"f\\u0061st\", \"max_messages\": 2 }"), fast},
		{"UnicodeArguments", nil, toolsCall("3", "memory_get_context", `{"conversation_id":"é😀"}`), fast},
		{"AnUnknownTool", nil, toolsCall("4", "no_such_tool", conv), sdk},
		{"AnInternalTool", nil, toolsCall("4", "pipeline_only", conv), sdk},
		{"AnEscapedToolName", nil, toolsCall("4", `memory_get_\u0063ontext`, conv), sdk},
		{"NoParams", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, sdk},
		{"NullParams", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":null}`, sdk},
		{"AnotherMethod", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`, sdk},
		{"AWrongJSONRPCVersion", nil, strings.Replace(toolsCall("5", "memory_get_context", conv), `"2.0"`, `"1.0"`, 1), sdk},
		{"ABatch", map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, "[" + toolsCall("5", "memory_get_context", conv) + "]", sdk},
		{"ADuplicateKey", nil, `{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"memory_get_context","arguments":{}}}`, sdk},
		{"AnUnknownKey", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_get_context","arguments":{}},"x":1}`, sdk},
		{"AnUnknownParam", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_get_context","arguments":{},"requestState":"x"}}`, sdk},
		{"WhiteSpaceAround", nil, " \n\t" + toolsCall("5", "memory_get_context", conv) + "\r\n ", fast},
		{"TrailingGarbage", nil, toolsCall("5", "memory_get_context", conv) + " x", sdk},
		{"MalformedJSON", nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_get_context","arguments":{"conversation_id":"fast"}`, sdk},
		{"AnEmptyBody", nil, "", sdk},
		{"InvalidUTF8", nil, toolsCall("5", "memory_get_context", `{"conversation_id":"`+"\xff"+`"}`), sdk},
		{"AControlCharacter", nil, toolsCall("5", "memory_get_context", `{"conversation_id":"`+"\x01"+`"}`), sdk},
		{"DeepArguments", nil, toolsCall("5", "memory_get_context", strings.Repeat("[", 100)+strings.Repeat("]", 100)), sdk},
		{"AProgressToken", nil, toolsCallMeta("memory_get_context", conv, `"progressToken":"p-1"`), fast},
		{"AnotherMetaKey", nil, toolsCallMeta("memory_get_context", conv, `"traceparent":"x"`), sdk},

		{"WithoutAProtocolVersion", map[string]string{"Mcp-Protocol-Version": ""}, toolsCall("1", "memory_get_context", conv), fast},
		{"Protocol20241105", map[string]string{"Mcp-Protocol-Version": "2024-11-05"}, toolsCall("1", "memory_get_context", conv), fast},
		{"Protocol20250326", map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, toolsCall("1", "memory_get_context", conv), fast},
		{"Protocol20250618", map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, toolsCall("1", "memory_get_context", conv), fast},
		{"AnUnsupportedProtocol", map[string]string{"Mcp-Protocol-Version": "2024-01-01"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"AFutureProtocol", map[string]string{"Mcp-Protocol-Version": "2099-01-01"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"An2026MetaUnder2025", nil, toolsCallMeta("memory_get_context", conv, caps(`{}`)), sdk},
		{"Protocol20260728", v26, toolsCallMeta("memory_get_context", conv, caps(`{}`)), fast},
		{"Protocol20260728WithClientInfo", v26, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_get_context","arguments":` + conv + `,` + sessionless + `}}`, fast},
		{"Protocol20260728WithCapabilities", v26, toolsCallMeta("memory_get_context", conv, caps(`{"roots":{"listChanged":true},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"experimental":{"x":{"y":"z"}},"other":"ignored"}`)), fast},
		{"Protocol20260728WithCapabilitiesOfAWrongType", v26, toolsCallMeta("memory_get_context", conv, caps(`{"sampling":"yes"}`)), sdk},
		{"Protocol20260728WithNumbersInCapabilities", v26, toolsCallMeta("memory_get_context", conv, caps(`{"experimental":{"n":1e400}}`)), sdk},
		{"Protocol20260728WithoutCapabilities", v26, toolsCallMeta("memory_get_context", conv, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`), sdk},
		{"Protocol20260728WithNullCapabilities", v26, toolsCallMeta("memory_get_context", conv, caps(`null`)), sdk},
		{"Protocol20260728WithoutMeta", v26, toolsCall("7", "memory_get_context", conv), sdk},
		{"Protocol20260728WithAnotherMetaVersion", v26, toolsCallMeta("memory_get_context", conv, `"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}`), sdk},
		{"Protocol20260728WithoutMcpMethod", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": "memory_get_context"}, toolsCallMeta("memory_get_context", conv, caps(`{}`)), sdk},
		{"Protocol20260728WithAnotherMcpName", sessionlessHeaders("memory_delete"), toolsCallMeta("memory_get_context", conv, caps(`{}`)), sdk},
		{"Protocol20260728WithAnotherMcpMethod", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Name": "memory_get_context"}, toolsCallMeta("memory_get_context", conv, caps(`{}`)), sdk},
		{"Protocol20260728ToolError", v26, toolsCallMeta("memory_get_context", `{"conversation_id":"nope"}`, caps(`{}`)), fast},
		{"Protocol20260728UnknownTool", sessionlessHeaders("nope"), toolsCallMeta("nope", conv, caps(`{}`)), sdk},
		{"AProxiedTool", nil, toolsCall("8", "nosuch__echo", conv), fast},
		{"AProxiedToolWithAnApprovalID", nil, toolsCallMeta("nosuch__echo", conv, `"switchboard.dev/approval_id":"x"`), sdk},
		{"Protocol20260728ProxiedTool", sessionlessHeaders("nosuch__echo"), toolsCallMeta("nosuch__echo", conv, caps(`{"elicitation":{"form":{}}}`)), fast},

		{"TextContentType", map[string]string{"Content-Type": "text/plain"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"AContentTypeWithParameters", map[string]string{"Content-Type": "Application/JSON; charset=utf-8"}, toolsCall("1", "memory_get_context", conv), fast},
		{"AcceptingOnlyJSON", map[string]string{"Accept": "application/json"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"AcceptingAnything", map[string]string{"Accept": "*/*"}, toolsCall("1", "memory_get_context", conv), fast},
		{"ARebindingHost", map[string]string{"Host": "evil.example"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"ALocalhostHost", map[string]string{"Host": "localhost"}, toolsCall("1", "memory_get_context", conv), fast},
		{"ALastEventID", map[string]string{"Last-Event-ID": "x_1"}, toolsCall("1", "memory_get_context", conv), sdk},
		{"AnAllowedOrigin", map[string]string{"Origin": "http://localhost:6274"}, toolsCall("1", "memory_get_context", conv), fast},
		{"AForeignOrigin", map[string]string{"Origin": "https://evil.example"}, toolsCall("1", "memory_get_context", conv), sdk},
	}
	// The fast path answers results in lambdafn's form, and failures; the
	// go-sdk the rest, once the function has answered. A payload that is not
	// a response is a failure.
	answeredFast := map[string]bool{"canonical": true, "tool_error": true, "notes": true, "mid": true, "big": true, "echo_input": true,
		"raw_line_separator_structured": true, "null_structured": true, "fails": true, "times_out": true, "slow": true,
		"undecodable": raw, "trailing_garbage": raw, "raw_control": raw}
	for name := range fakeResults {
		served := sdk
		if answeredFast[name] {
			served = fast
		}
		var header map[string]string
		header26 := sessionlessHeaders("fake_" + name)
		if name == "slow" { // the gateway stops waiting for it
			header = map[string]string{"X-Test-Deadline": "1"}
			header26["X-Test-Deadline"] = "1"
		}
		cases = append(cases, tc{"Result_" + name, header, toolsCall("9", "fake_"+name, "{}"), served})
		cases = append(cases, tc{"Result20260728_" + name, header26, toolsCallMeta("fake_"+name, "{}", caps(`{}`)), served})
	}
	for _, c := range []string{`{}`, `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`, `{"elicitation":{"url":{}}}`, `{"elicitation":{"url":{},"form":{}}}`,
		`{"sampling":{"tools":{}},"roots":{"listChanged":false}}`, `{"roots":{}}`, `{"experimental":{"elicitation":{}}}`} {
		for _, tool := range []string{"fake_echo_input", "fake_asks"} {
			served := sdk
			if tool == "fake_echo_input" {
				served = fast
			}
			cases = append(cases, tc{"Capabilities" + c + "_" + tool, sessionlessHeaders(tool), toolsCallMeta(tool, "{}", caps(c)), served})
		}
	}
	for _, token := range []string{`"progressToken":3`, `"progressToken":"tok"`, `"progressToken":"<tok>"`, `"progressToken":1.5`, `"progressToken":null`} {
		served := fast
		if !strings.HasSuffix(token, `3`) && !strings.HasSuffix(token, `"tok"`) {
			served = sdk
		}
		cases = append(cases, tc{"Notifications_" + token, nil, toolsCallMeta("fake_notes", "{}", token), served})
		cases = append(cases, tc{"Notifications20260728_" + token, sessionlessHeaders("fake_notes"), toolsCallMeta("fake_notes", "{}", caps(`{}`)+","+token), served})
	}
	for _, level := range []string{"debug", "warning", "emergency", "verbose"} {
		cases = append(cases, tc{"Notifications20260728_LogLevel_" + level, sessionlessHeaders("fake_notes"),
			toolsCallMeta("fake_notes", "{}", caps(`{}`)+`,"progressToken":1,"io.modelcontextprotocol/logLevel":"`+level+`"`), fast})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, sdkBefore := p.functions.count(), p.sdkCalls.Load()
			fastAnswer := send(t, p.fast, c.header, c.body)
			sdkCallsViaFast := p.sdkCalls.Load() - sdkBefore
			viaFast := diffCalls(before, p.functions.count())
			before, sdkBefore = p.functions.count(), p.sdkCalls.Load()
			sdkAnswer := send(t, p.sdk, c.header, c.body)
			sdkCallsViaSDK := p.sdkCalls.Load() - sdkBefore
			viaSDK := diffCalls(before, p.functions.count())
			if diff := cmp.Diff(sdkAnswer, fastAnswer); diff != "" {
				t.Errorf("answers differ (-go-sdk +fast path):\n%s", diff)
			}
			if diff := cmp.Diff(viaSDK, viaFast); diff != "" {
				t.Errorf("functions invoked differ (-go-sdk +fast path):\n%s", diff)
			}
			switch {
			case c.served == fast && (sdkCallsViaFast != 0 || sdkCallsViaSDK != 1):
				t.Errorf("the go-sdk served %d calls through the fast path's server, %d through its own; want 0 and 1", sdkCallsViaFast, sdkCallsViaSDK)
			case c.served == sdk && sdkCallsViaFast != sdkCallsViaSDK:
				t.Errorf("the go-sdk served %d calls through the fast path's server, %d through its own; want the same", sdkCallsViaFast, sdkCallsViaSDK)
			}
		})
	}
}

func diffCalls(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if v != before[k] {
			out[k] = v - before[k]
		}
	}
	return out
}

func TestTheFastPathHandsAResultAskingForInputToTheGoSDKOnce(t *testing.T) {
	p := newTwoPaths(t, true)
	before := p.functions.count()
	e := send(t, p.fast, nil, toolsCall("1", "fake_input_required", "{}"))
	if e.Status != http.StatusOK || p.sdkCalls.Load() != 1 {
		t.Errorf("got %d, %d go-sdk calls; want 200 and the go-sdk answering", e.Status, p.sdkCalls.Load())
	}
	if diff := cmp.Diff(map[string]int{"fake/input_required": 1}, diffCalls(before, p.functions.count())); diff != "" {
		t.Errorf("functions invoked (-want +got):\n%s", diff)
	}
}

func TestTakePrefetchedGivesTheResponseOnceAndOnlyToItsFunction(t *testing.T) {
	resp := result(`{}`)
	ctx := context.WithValue(context.Background(), prefetchedKey{}, &prefetchedCall{function: "f", requestID: "r", traceID: "t", resp: resp})
	env := &invoke.Request{}
	if _, ok := takePrefetched(ctx, "g", env); ok {
		t.Error("another function took the response")
	}
	if got, ok := takePrefetched(ctx, "f", env); !ok || got.resp != resp || env.RequestID != "r" || env.TraceID != "t" {
		t.Errorf("took %v %v with ids %q %q", got, ok, env.RequestID, env.TraceID)
	}
	if _, ok := takePrefetched(ctx, "f", env); ok {
		t.Error("the response was taken twice")
	}
	if _, ok := takePrefetched(context.Background(), "f", env); ok {
		t.Error("a response was taken from a context without one")
	}
}

func TestCanonicalEscapes(t *testing.T) {
	for _, tc := range []struct {
		escape string
		want   bool
	}{
		{`\"`, true}, {`\\`, true}, {`\n`, true}, {`\b`, true}, {`\u0001`, true}, {`\u001f`, true},
		{`\u2028`, true}, {`\u2029`, true},
		{`\/`, false}, {`\u000a`, false}, {`\u0008`, false}, {`\u001F`, false}, {`\u0020`, false},
		{`\u00e9`, false}, {`\ufffd`, false}, {`\u003c`, false},
	} {
		if got := canonicalEscapeLen([]byte(tc.escape)) > 0; got != tc.want {
			t.Errorf("canonicalEscapeLen(%s) > 0 = %v, want %v", tc.escape, got, tc.want)
		}
		// What encoding/json writes for the character decides.
		var s string
		if err := json.Unmarshal([]byte(`"`+tc.escape+`"`), &s); err != nil {
			t.Fatal(err)
		}
		b, _ := invoke.Marshal(s)
		if canonical := string(b) == `"`+tc.escape+`"`; canonical != tc.want {
			t.Errorf("encoding/json writes %q as %s: canonical %v, want %v", s, b, canonical, tc.want)
		}
	}
}

// TestConcurrentFastCallsGetTheirOwnAnswers: the fast path reuses buffers
// (answers, payloads, results) from call to call; concurrent calls must
// each get their own answer whole.
func TestConcurrentFastCallsGetTheirOwnAnswers(t *testing.T) {
	p := newTwoPaths(t, true)
	const n = 40
	for i := range n {
		send(t, p.fast, nil, toolsCall("1", "memory_get_or_create", fmt.Sprintf(`{"conversation_id":"c%d"}`, i)))
	}
	var wg sync.WaitGroup
	const each = 30
	errs := make(chan string, n*each)
	for i := range n {
		wg.Go(func() {
			for range each {
				want := fmt.Sprintf(`\"conversation_id\":\"c%d\"`, i)
				e, err := exchangeWith(p.fast, nil, toolsCall("1", "memory_get_summary", fmt.Sprintf(`{"conversation_id":"c%d"}`, i)))
				if err != nil || e.Status != http.StatusOK || !strings.Contains(e.Body, want) || strings.Count(e.Body, "conversation_id") != 2 {
					errs <- fmt.Sprint(e.Body, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("an answer is not its call's: %s", e)
	}
	if p.sdkCalls.Load() != 0 {
		t.Errorf("the go-sdk served %d of the calls; want the fast path to", p.sdkCalls.Load())
	}
}
