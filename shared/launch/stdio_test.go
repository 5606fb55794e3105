package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// gatewayEnv, when set, makes the test binary the gateway command
// (functions/gateway), run with the arguments it was started with, instead
// of running tests.
const gatewayEnv = "SWITCHBOARD_TEST_RUN_GATEWAY"

func TestMain(m *testing.M) {
	if os.Getenv(gatewayEnv) != "" {
		os.Exit(Gateway(os.Args[1:], Extras{}))
	}
	os.Exit(m.Run())
}

// TestOverStdioTheLocalServerServesADesktopHostAndKeepsTheLastCallsAuditEvent
// runs the local server as a desktop host does, as a command speaking MCP on
// its stdin and stdout, with the go-sdk's client: it initializes, lists
// Switchboard's tools, answers a memory tool, registers and calls a go-sdk
// upstream as a connector, and, when the host closes stdin right after that
// call's answer, exits cleanly having written the call's ToolCalled audit
// event, which is written after the answer.
func TestOverStdioTheLocalServerServesADesktopHostAndKeepsTheLastCallsAuditEvent(t *testing.T) {
	data := t.TempDir()
	cmd := exec.Command(os.Args[0], "--stdio", "--data", data, "--allow-connector-hosts", "127.0.0.1")
	// The embedded table in data, whatever the environment names.
	cmd.Env = append(os.Environ(), gatewayEnv+"=1", config.EnvTable+"=", config.EnvConnectorSyncInterval+"=0")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx := context.Background()
	// Close waits this long for the process to exit after stdin closes
	// before it signals it: generous, so that a loaded machine is not taken
	// for a server that does not exit.
	transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Minute}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("initialize over stdio: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != "switchboard" {
		t.Errorf("initialize answered server info %+v, want switchboard's", got)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"memory_get_or_create", "connector_create", "get_audit_trace"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lists %v, without %s", names, want)
		}
	}
	if out := callJSON(t, cs, "memory_get_or_create", map[string]any{"conversation_id": "desk"}, false); !strings.Contains(out, `"desk"`) {
		t.Errorf("memory_get_or_create answered %s, want the conversation", out)
	}

	callJSON(t, cs, "connector_create", map[string]any{"name": "up", "base_url": startUpstream(t, "streamable_http"),
		"transport": "streamable_http", "headers": map[string]string{"Authorization": upstreamToken}}, false)
	var synced struct{ Tools []string }
	json.Unmarshal([]byte(callJSON(t, cs, "connector_sync", map[string]any{"name": "up"}, false)), &synced)
	if !slices.Contains(synced.Tools, "up__echo") {
		t.Fatalf("connector_sync listed %v, want up__echo", synced.Tools)
	}
	callJSON(t, cs, "approval_policy_set", map[string]any{"connector": "up", "tool": "echo", "policy": "ALWAYS_ALLOW"}, false)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "last call"}})
	// The host closes stdin as soon as the answer is in, as a desktop host
	// quitting does, and Close waits for the process to exit.
	closeErr := cs.Close()
	if err != nil || res.IsError || textOf(res) != "last call" {
		t.Fatalf("up__echo answered %+v, %v\n%s", res, err, stderr.String())
	}
	if closeErr != nil || !cmd.ProcessState.Success() {
		t.Fatalf("the server did not exit cleanly once stdin closed: %v, %v\n%s", closeErr, cmd.ProcessState, stderr.String())
	}
	trace, _ := res.Meta[invoke.TraceMetaKey].(string)
	if trace == "" {
		t.Fatalf("up__echo's result carries no trace id in _meta: %+v", res.Meta)
	}

	// The process has exited: its table file is free to open.
	cfg := config.Local(data)
	tbl, closeTable, err := cfg.OpenTable(ctx, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeTable()
	events, _, err := audit.New(tbl, nil).Trace(ctx, tenant.Local, trace, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e audit.Event) bool {
		return e.Type == audit.ToolCalled && e.Tool == "up__echo" && e.Outcome == "ok"
	}) {
		t.Errorf("the trace of the last call holds %+v, without its ToolCalled event; the server said:\n%s", events, stderr.String())
	}
}
