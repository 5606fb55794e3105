package lambdafn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// decisions is a service of two tools of the connectors' proxy function.
type decisions struct{ built, closed int }

type approvalID struct {
	ID string `json:"id"`
}

type decided struct {
	Decision string `json:"decision"`
	ID       string `json:"id"`
}

func (d *decisions) get(_ context.Context, _ tenant.Caller, in approvalID) (decided, error) {
	return decided{"get", in.ID}, nil
}

func (d *decisions) deny(_ context.Context, _ tenant.Caller, in approvalID) (decided, error) {
	return decided{"deny", in.ID}, nil
}

// call is what a passed-through tool answers: an MCP result as it is.
func (d *decisions) call(_ context.Context, _ tenant.Caller, _ struct {
	Name string `json:"name"`
}) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream said no"}}}, nil
}

func (d *decisions) Close() error {
	d.closed++
	return nil
}

// A Methods function serves each of its tools with its own method of one
// service, built once; refuses a tool it does not serve; answers an MCP
// result as it is, isError included; and closes the service with its
// handler.
func TestAMethodsFunctionServesEachToolOverOneService(t *testing.T) {
	svc := &decisions{}
	f := Methods(func(Deps) *decisions { svc.built++; return svc },
		Bind(catalog.ApprovalGetTool, (*decisions).get),
		Bind(catalog.ApprovalDenyTool, (*decisions).deny),
		Bind(catalog.ConnectorCallTool, (*decisions).call))
	if f.Path != catalog.ConnectorProxyFunction {
		t.Fatalf("the function is %s, want %s", f.Path, catalog.ConnectorProxyFunction)
	}
	h := f.Build(Deps{Table: storetest.OpenEmbedded(t)})
	inv := invoke.NewLocal(map[string]lambda.Handler{f.Path: h}, nil)
	ask := func(tool, args string) (*invoke.Response, error) {
		return inv.Invoke(context.Background(), f.Path, &invoke.Request{Method: invoke.MethodCallTool, Tool: tool,
			Arguments: json.RawMessage(args), Caller: tenant.Caller{Tenant: "acme", Principal: "alice"}, RequestID: "r", TraceID: "0af7651916cd43dd8448eb211c80319c"})
	}
	for tool, want := range map[string]string{catalog.ApprovalGetTool: `"decision":"get"`, catalog.ApprovalDenyTool: `"decision":"deny"`} {
		resp, err := ask(tool, `{"id":"abc"}`)
		if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), want) {
			t.Errorf("%s answered %s, %+v, %v; want %s", tool, resp.Result, resp.Error, err, want)
		}
	}
	resp, err := ask(catalog.ConnectorCallTool, `{"name":"up__x"}`)
	if err != nil || resp.Error != nil || !strings.Contains(string(resp.Result), `"isError":true`) ||
		!strings.Contains(string(resp.Result), `"text":"upstream said no"`) || strings.Contains(string(resp.Result), "structuredContent") {
		t.Errorf("connector_call answered %s, %v; want the MCP result as it is", resp.Result, err)
	}
	if _, err := ask(catalog.ApprovalApproveTool, `{"id":"abc"}`); err == nil {
		t.Errorf("a tool the function does not serve was answered")
	}
	if err := h.(interface{ Close() error }).Close(); err != nil || svc.closed != 1 || svc.built != 1 {
		t.Errorf("Close = %v; the service was built %d times and closed %d times, want once each", err, svc.built, svc.closed)
	}
}
