package approvalpage_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/approvalpage"
	"github.com/switchboard-dev/switchboard/shared/approvalpage/local"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/seal/localkey"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// clock is a settable clock that otherwise follows real time.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// env is a connector service over an embedded table, proxying a go-sdk
// upstream whose "charge" tool counts its calls, and the approval page in
// front of it. Callers authenticate with "Bearer <tenant>/<principal>".
type env struct {
	svc     *connector.Service
	page    http.Handler
	now     *clock
	charges atomic.Int64
	alice   tenant.Caller
}

// approvers are the ways the page reaches the connector service: in process
// (the local server) and through a function (AWS).
var approvers = []struct {
	name  string
	build func(t *testing.T, svc *connector.Service) approvalpage.Approver
}{
	{"in process", func(t *testing.T, svc *connector.Service) approvalpage.Approver { return local.Approver{Service: svc} }},
	{"through a function", remote},
}

// remote serves svc's approvals as three tools of a function "connectors",
// run by lambdafn in an invoke.Local, and returns the Remote that calls them.
func remote(t *testing.T, svc *connector.Service) approvalpage.Approver {
	tool := func(name string) *catalog.Tool {
		return &catalog.Tool{Name: name, Function: "connectors",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)}
	}
	deps := lambdafn.Deps{}
	fn := byTool{
		"approval_get":     lambdafn.Tool(tool("approval_get"), deps, svc.ApprovalGet),
		"approval_approve": lambdafn.Tool(tool("approval_approve"), deps, svc.Approve),
		"approval_deny":    lambdafn.Tool(tool("approval_deny"), deps, svc.Deny),
	}
	inv := invoke.NewLocal(map[string]lambda.Handler{"connectors": fn}, nil)
	return approvalpage.Remote{Invoker: inv, Function: "connectors", GetTool: "approval_get", ApproveTool: "approval_approve", DenyTool: "approval_deny"}
}

// byTool is a function serving several tools, each by its own handler.
type byTool map[string]lambda.Handler

func (b byTool) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := invoke.Decode(payload)
	if err != nil {
		return nil, err
	}
	h, ok := b[req.Tool]
	if !ok {
		return nil, fmt.Errorf("no tool %q", req.Tool)
	}
	return h.Invoke(ctx, payload)
}

func newEnv(t *testing.T) *env { return newEnvWith(t, approvers[0].build) }

func newEnvWith(t *testing.T, approver func(*testing.T, *connector.Service) approvalpage.Approver) *env {
	e := &env{now: &clock{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1.0.0"}, nil)
	type chargeIn struct {
		Amount string `json:"amount"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "Charges a card."}, func(ctx context.Context, req *mcp.CallToolRequest, in chargeIn) (*mcp.CallToolResult, any, error) {
		n := e.charges.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("charged %s (call %d)", in.Amount, n)}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)

	sealer, err := localkey.New(keyfile.Keys{"k1": keyfile.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	guard := &netguard.Policy{AllowHTTP: true, AllowedHosts: []string{"127.0.0.1"}} // the upstream is on loopback
	e.svc = connector.New(storetest.OpenEmbedded(t), sealer, &connector.Options{CheckURL: guard.CheckURL, HTTPClient: guard.Client(10 * time.Second), Now: e.now.Now})
	t.Cleanup(func() { e.svc.Close() })
	e.alice = newCaller("alice")
	ctx := context.Background()
	if _, err := e.svc.Create(ctx, e.alice, connector.CreateInput{Name: "pay", BaseURL: up.URL, Transport: connector.TransportStreamable}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Sync(ctx, e.alice, connector.NameInput{Name: "pay"}); err != nil {
		t.Fatal(err)
	}
	keys, err := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
	if err != nil {
		t.Fatal(err)
	}
	e.page, err = approvalpage.New(approvalpage.Options{Approver: approver(t, e.svc), Authenticate: authenticate, Tokens: keys,
		AllowOrigin: func(o string) bool { return o == "https://console.example.com" }, Now: e.now.Now,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newCaller returns a caller in a tenant of its own.
func newCaller(principal string) tenant.Caller {
	var b [6]byte
	rand.Read(b[:])
	return tenant.Caller{Tenant: "t" + hex.EncodeToString(b[:]), Principal: principal}
}

// authenticate is the tests' authenticator: "Bearer <tenant>/<principal>".
func authenticate(r *http.Request) (tenant.Caller, error) {
	cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t, p, ok2 := strings.Cut(cred, "/")
	if !ok || !ok2 {
		return tenant.Caller{}, fmt.Errorf("%w: no bearer token", approvalpage.ErrUnauthenticated)
	}
	return tenant.Caller{Tenant: t, Principal: p}, nil
}

func bearer(c tenant.Caller) string { return "Bearer " + c.Tenant + "/" + c.Principal }

// ask calls pay__charge for c with amount and returns the approval id the
// tool error names.
func (e *env) ask(t *testing.T, c tenant.Caller, amount string) string {
	t.Helper()
	res, err := e.svc.Call(context.Background(), c, connector.CallInput{Name: "pay__charge", Arguments: args(amount)})
	if err != nil || !res.IsError {
		t.Fatalf("Call = %+v, %v; want a tool error asking for approval", res, err)
	}
	id, _ := res.Meta[connector.ApprovalMetaKey].(string)
	if res.Meta[connector.ApprovalURLMetaKey] != connector.ApprovalURL(id) || id == "" {
		t.Fatalf("the result's _meta = %v; want the approval's id and url", res.Meta)
	}
	return id
}

// retry calls pay__charge again with the approval id.
func (e *env) retry(c tenant.Caller, amount, id string) (*mcp.CallToolResult, error) {
	return e.svc.Call(context.Background(), c, connector.CallInput{Name: "pay__charge", Arguments: args(amount), ApprovalID: id})
}

func args(amount string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"amount": amount})
	return b
}

// status returns approval id's status as alice's tenant holds it.
func (e *env) status(t *testing.T, id string) string {
	t.Helper()
	out, err := e.svc.ApprovalGet(context.Background(), e.alice, connector.ApprovalInput{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return out.Approval.Status
}
