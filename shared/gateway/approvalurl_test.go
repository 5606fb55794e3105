package gateway_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// executeAPIHost is the host of a front door's execute-api URL.
const executeAPIHost = "abc123.execute-api.eu-west-1.amazonaws.com"

// frontDoors are the ways a client reaches the gateway, each as a server in
// front of the gateway's handler: the path its routes are under, and the URL
// the approval page's links must begin with, given the server's own URL.
var frontDoors = []struct {
	name   string
	prefix string
	serve  func(h http.Handler) http.Handler
	base   func(server string) string
}{
	{"the local server links its own address", "", func(h http.Handler) http.Handler { return h },
		func(server string) string { return server }},
	{"a REST API at its execute-api URL links under its stage", "/v1", restDoor("/v1", executeAPIHost),
		func(string) string { return "https://" + executeAPIHost + "/v1" }},
	{"a REST API at a custom domain's root links at the root", "", restDoor("", "mcp.example.org"),
		func(string) string { return "https://mcp.example.org" }},
	{"an HTTP API links at the root", "", httpAPIDoor(executeAPIHost),
		func(string) string { return "https://" + executeAPIHost }},
}

// restDoor stands in for a REST API (payload format 1.0, streamed) whose
// clients use host, with stage leading every path when it is not "" (the
// execute-api URL), or none (a custom domain mapped at its root): the event
// carries the path without the stage and the path asked for in its request
// context, as API Gateway's does.
func restDoor(stage, host string) func(http.Handler) http.Handler {
	serve := apigw.StreamingHandler
	return func(h http.Handler) http.Handler {
		lambda := serve(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path, ok := strings.CutPrefix(r.URL.Path, stage)
			if !ok {
				http.Error(w, `{"message":"Missing Authentication Token"}`, http.StatusForbidden)
				return
			}
			asked := r.URL.Path
			r.URL.Path, r.Host = path, host
			r.TLS = &tls.ConnectionState{} // clients reach API Gateway over HTTPS
			e, err := apigw.RESTEvent(r, "v1")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			e.RequestContext.Path = asked
			// A Lambda function's context has no HTTP server's values.
			resp, err := lambda(context.Background(), e)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			for k, vs := range resp.MultiValueHeaders {
				w.Header()[k] = vs
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
		})
	}
}

// httpAPIDoor stands in for an HTTP API (payload format 2.0, stage
// $default) whose clients use host.
func httpAPIDoor(host string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		lambda := apigw.Handler(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			e := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery, Headers: map[string]string{"host": host},
				Body: base64.StdEncoding.EncodeToString(body), IsBase64Encoded: true,
				RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: "$default", DomainName: host,
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, SourceIP: "203.0.113.9"}},
			}
			for k := range r.Header {
				e.Headers[strings.ToLower(k)] = strings.Join(r.Header.Values(k), ",")
			}
			e.Headers["host"] = host
			resp, _ := lambda(context.Background(), e)
			for k, v := range resp.Headers {
				w.Header().Set(k, v)
			}
			for _, c := range resp.Cookies {
				w.Header().Add("Set-Cookie", c)
			}
			w.WriteHeader(resp.StatusCode)
			if resp.IsBase64Encoded {
				b, _ := base64.StdEncoding.DecodeString(resp.Body)
				w.Write(b)
				return
			}
			io.WriteString(w, resp.Body)
		})
	}
}

// TestTheApprovalLinkIsAbsoluteBehindEveryFrontDoor calls an ASK_USER tool
// from a client without elicitation through each front door, with an
// X-Forwarded-Prefix header no server may trust: the tool error links the
// approval page absolutely, at the URL the client reached the gateway at
// (in its _meta and its text, answered by the fast path), as does the
// retry's refusal while the approval waits (answered by the go-sdk). The
// page's form then posts to that page, where the approval is granted, and
// the retry runs the call.
func TestTheApprovalLinkIsAbsoluteBehindEveryFrontDoor(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "charge"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	tbl := storetest.OpenEmbedded(t)
	deps := lambdafn.Deps{Table: tbl, Blobs: storetest.OpenLocalFS(t), Summarizer: offline.Summarizer{}}
	connectorsDeps(t, &deps)
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}}
	deps.CheckURL, deps.HTTPClient = guard.CheckURL, guard.Client(0)
	cat, inv := catalog.Default(), stack(t, deps)
	gw, err := gateway.New(gateway.Options{Catalog: cat, Invoker: inv, Approvals: gateway.ConnectorApprovals(cat, inv),
		Anonymous: &tenant.Caller{Tenant: tenant.Local, Principal: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	h := gw.Handler()
	local := httptest.NewServer(h)
	t.Cleanup(local.Close)
	for _, args := range []string{`{"name":"pay","base_url":"` + up.URL + `","transport":"streamable_http"}`, `{"name":"pay"}`} {
		tool := map[bool]string{true: "connector_create", false: "connector_sync"}[strings.Contains(args, "base_url")]
		if got := post(t, local.URL+"/mcp", callHeaders(tool), askBody(tool, args, "")); got.status != http.StatusOK || strings.Contains(got.body, `"isError":true`) {
			t.Fatalf("%s = %d %s", tool, got.status, got.body)
		}
	}
	for _, tc := range frontDoors {
		t.Run(tc.name, func(t *testing.T) {
			door := httptest.NewServer(tc.serve(h))
			t.Cleanup(door.Close)
			served, want := door.URL+tc.prefix, tc.base(door.URL)+"/approvals/"
			call := func(tool, args, meta string) string {
				t.Helper()
				hdr := callHeaders(tool)
				hdr["X-Forwarded-Prefix"] = "/evil" // no server takes it
				got := post(t, served+"/mcp", hdr, askBody(tool, args, meta))
				if got.status != http.StatusOK {
					t.Fatalf("tools/call %s = %d %s", tool, got.status, got.body)
				}
				return got.body
			}

			first := call("pay__charge", `{}`, "")
			m := regexp.MustCompile(`"switchboard.dev/approval_id":"([0-9a-f]{32})"`).FindStringSubmatch(first)
			if m == nil {
				t.Fatalf("the call answered %s; want a tool error asking for approval", first)
			}
			id := m[1]
			link := want + id
			if !strings.Contains(first, `"switchboard.dev/approval_url":"`+link+`"`) || !strings.Contains(first, "Open "+link+" to approve") {
				t.Fatalf("the tool error links the page as\n%s\nwant %s in its _meta and its text", first, link)
			}
			retry := func() string { return call("pay__charge", `{}`, `,"switchboard.dev/approval_id":"`+id+`"`) }
			if got := retry(); !strings.Contains(got, "waiting for a decision: open "+link) {
				t.Fatalf("the retry before the decision answered\n%s\nwant it to link %s", got, link)
			}

			pageURL := served + "/approvals/" + id
			opened, err := http.Get(pageURL)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(opened.Body)
			opened.Body.Close()
			action := regexp.MustCompile(`action="([^"]+)"`).FindSubmatch(page)
			csrf := csrfRE.FindSubmatch(page)
			if opened.StatusCode != http.StatusOK || action == nil || csrf == nil || len(opened.Cookies()) != 1 {
				t.Fatalf("GET %s = %d, want the page with a form and a cookie:\n%s", pageURL, opened.StatusCode, page)
			}
			target, err := url.Parse(link)
			if err != nil {
				t.Fatal(err)
			}
			if posts := target.ResolveReference(&url.URL{Path: html.UnescapeString(string(action[1]))}).String(); posts != link {
				t.Fatalf("the page's form posts to %s, want %s", posts, link)
			}
			form := url.Values{"decision": {"approve"}, "csrf": {html.UnescapeString(string(csrf[1]))}}
			post, _ := http.NewRequest(http.MethodPost, pageURL, strings.NewReader(form.Encode()))
			post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			post.Header.Set("Origin", target.Scheme+"://"+target.Host)
			post.AddCookie(opened.Cookies()[0])
			decided, err := http.DefaultClient.Do(post)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(decided.Body)
			decided.Body.Close()
			if decided.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Approved")) {
				t.Fatalf("approving on the page = %d\n%s", decided.StatusCode, body)
			}
			if got := retry(); !strings.Contains(got, `"text":"charged"`) {
				t.Fatalf("the approved retry answered %s, want the upstream's result", got)
			}
		})
	}
}

// callHeaders are the headers of a 2026-07-28 client's tools/call of tool.
func callHeaders(tool string) map[string]string {
	return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// askBody is a 2026-07-28 client's tools/call of tool, a client without
// elicitation, with args and more _meta members (",…" or "").
func askBody(tool, args, meta string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}` + meta + `}}}`
}
