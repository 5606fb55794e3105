package connector_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// A warm instance keeps what it decoded and opened, yet every change made
// through another instance reaches its next call: new credentials, a sync
// that lists other tools, a connector deleted and made again under the same
// name.
func TestAWarmInstanceSeesEveryChangeMadeElsewhere(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		warm, other := e.svc, e.instance(t, nil)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		whoami := func(t *testing.T) string {
			t.Helper()
			res, err := warm.Call(ctx, c, connector.CallInput{Name: "up__whoami", Arguments: json.RawMessage(`{}`)})
			if err != nil || res.IsError {
				t.Fatalf("Call = %q, %v", text(res), err)
			}
			return text(res)
		}
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable,
			Headers: map[string]string{"Authorization": "Bearer first"}})
		mustSync(t, e, c, "up")
		allow(t, e, c, "up", "whoami")
		if got := whoami(t); !strings.Contains(got, "Bearer first") {
			t.Fatalf("whoami = %q", got)
		}

		t.Run("new credentials are used at once", func(t *testing.T) {
			g, _ := other.Get(ctx, c, connector.NameInput{Name: "up"})
			if _, err := other.Update(ctx, c, connector.UpdateInput{Name: "up", Version: g.Connector.Version,
				Headers: map[string]string{"Authorization": "Bearer second"}}); err != nil {
				t.Fatal(err)
			}
			if got := whoami(t); !strings.Contains(got, "Bearer second") {
				t.Fatalf("whoami = %q, want the new credential", got)
			}
		})
		t.Run("a sync elsewhere that lists a new tool is seen", func(t *testing.T) {
			mcp.AddTool(up.srv, &mcp.Tool{Name: "late", Description: "Listed after the first sync."}, func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
			})
			if _, err := other.Sync(ctx, c, connector.NameInput{Name: "up"}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.PolicySet(ctx, c, connector.PolicySetInput{Connector: "up", Tool: "late", Policy: connector.PolicyAllow}); err != nil {
				t.Fatal(err)
			}
			res, err := warm.Call(ctx, c, connector.CallInput{Name: "up__late", Arguments: json.RawMessage(`{}`)})
			if err != nil || text(res) != "late" {
				t.Fatalf("Call = %q, %v; want the tool the other instance's sync listed", text(res), err)
			}
		})
		t.Run("a connector made again under the same name is a new one", func(t *testing.T) {
			if _, err := other.Delete(ctx, c, connector.DeleteInput{Name: "up"}); err != nil {
				t.Fatal(err)
			}
			again := newUpstream(t, connector.TransportStreamable, "")
			if _, err := other.Create(ctx, c, connector.CreateInput{Name: "up", BaseURL: again.url(), Transport: connector.TransportStreamable,
				Headers: map[string]string{"Authorization": "Bearer third"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Sync(ctx, c, connector.NameInput{Name: "up"}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.PolicySet(ctx, c, connector.PolicySetInput{Connector: "up", Tool: "whoami", Policy: connector.PolicyAllow}); err != nil {
				t.Fatal(err)
			}
			if got := whoami(t); !strings.Contains(got, "Bearer third") {
				t.Fatalf("whoami = %q, want the new connector's credential", got)
			}
			if _, err := warm.Call(ctx, c, connector.CallInput{Name: "up__late", Arguments: json.RawMessage(`{}`)}); err == nil {
				t.Fatal("the old connector's tool is still called")
			}
		})
	})
}
