package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// apikeyCmd runs the command with args and returns what it printed.
func apikeyCmd(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// withTable opens the table of data folder dir for fn, and closes it after:
// the command cannot open the folder meanwhile.
func withTable(t *testing.T, dir string, fn func(tbl store.Table)) {
	t.Helper()
	cfg := config.Local(dir)
	tbl, closeFn, err := cfg.OpenTable(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	fn(tbl)
}

func TestCreateListAndRevokeAKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out, errOut, err := apikeyCmd("create", "--data", dir, "--tenant", "acme", "--principal", "ci", "--expires", "720h")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, errOut)
	}
	secret := strings.TrimSpace(out)
	withTable(t, dir, func(tbl store.Table) {
		k, err := apikey.New(tbl, nil).Verify(ctx, secret)
		if err != nil || k.Tenant != "acme" || k.Principal != "ci" || time.Until(k.ExpiresAt) < 719*time.Hour {
			t.Fatalf("the printed key verifies as %+v, %v", k, err)
		}
	})
	hash := apikey.Hash(secret)
	if out, _, err := apikeyCmd("list", "--data", dir); err != nil || !strings.Contains(out, hash) || strings.Contains(out, secret) {
		t.Fatalf("list = %q, %v; want the hash, never the key", out, err)
	}
	if out, errOut, err := apikeyCmd("profile", "--data", dir, "--groups", "Vector Search", "--deny", "memory_delete,github__*", hash); err != nil || !strings.Contains(out, `groups="Vector Search" deny=memory_delete,github__*`) {
		t.Fatalf("profile = %q, %v\n%s", out, err, errOut)
	}
	withTable(t, dir, func(tbl store.Table) {
		k, err := apikey.New(tbl, nil).Verify(ctx, secret)
		if err != nil || k.Profile.Allows("memory_delete", "") || k.Profile.EnablesGroup("Connectors") || !k.Profile.Allows("optimizer_vs-retriever", "Vector Search") {
			t.Fatalf("the key's profile reads %+v, %v", k.Profile, err)
		}
	})
	if out, _, err := apikeyCmd("list", "--data", dir); err != nil || !strings.Contains(out, `deny=memory_delete`) {
		t.Errorf("list = %q, %v; want the profile", out, err)
	}
	if _, _, err := apikeyCmd("profile", "--data", dir, "--groups", "NL2SQL", hash); err == nil || !strings.Contains(err.Error(), "profile.groups") {
		t.Errorf("profile with an unknown group: %v", err)
	}
	if _, errOut, err := apikeyCmd("revoke", "--data", dir, hash); err != nil || !strings.Contains(errOut, "Revoked") {
		t.Fatalf("revoke: %v, %q", err, errOut)
	}
	if out, _, err := apikeyCmd("list", "--data", dir); err != nil || strings.Contains(out, hash) {
		t.Errorf("list after revoke = %q, %v", out, err)
	}
	for _, bad := range [][]string{{}, {"fly"}, {"revoke", "--data", dir}, {"revoke", "--data", dir, hash}} {
		if _, _, err := apikeyCmd(bad...); err == nil {
			t.Errorf("apikey %q succeeded", bad)
		}
	}
}

func TestCreateRefusesWhatWouldBeStoredWrongly(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantText string
	}{
		{"a negative expiry", []string{"--expires", "-5m"}, "--expires -5m0s: give a positive duration"},
		{"a zero expiry", []string{"--expires", "0s"}, "--expires 0s: give a positive duration"},
		{"a principal with an escape sequence", []string{"--principal", "eve\x1b[2J\x1b[31m"}, "principal"},
		{"a principal that sets the terminal's title", []string{"--principal", "eve\x1b]0;owned\x07"}, "principal"},
		{"a principal with a right-to-left override", []string{"--principal", "eve\u202egnp.exe"}, "principal"},
		{"a principal with a tab", []string{"--principal", "eve\tadmin"}, "principal"},
		{"a tenant with an escape sequence", []string{"--tenant", "acme\x1b[2J"}, "tenant id"},
		{"an uppercase tenant", []string{"--tenant", "Acme"}, "tenant id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"create", "--data", dir, "--tenant", "acme", "--principal", "eve"}, tt.args...)
			out, _, err := apikeyCmd(args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("create = %q, %v; want an error containing %q", out, err, tt.wantText)
			}
		})
	}
	withTable(t, dir, func(tbl store.Table) {
		if keys, err := apikey.New(tbl, nil).List(context.Background()); err != nil || len(keys) != 0 {
			t.Errorf("refused creations left %+v, %v", keys, err)
		}
	})
}

// TestListQuotesWhatWouldMisprintOnATerminal lists keys as a table written
// before tenants and principals were checked may hold them.
func TestListQuotesWhatWouldMisprintOnATerminal(t *testing.T) {
	tests := []struct {
		name      string
		tenant    string
		principal string
		want      string // the row's tenant and principal, as printed
	}{
		{"a plain principal prints as it is", "acme", "alice", "acme  alice"},
		{"a principal with words prints as it is", "acme", "Zoë Müller", "acme  Zoë Müller"},
		{"an escape sequence is quoted", "acme", "mallory\x1b[2J\x1b]0;owned\x07", `acme  "mallory\x1b[2J\x1b]0;owned\a"`},
		{"a right-to-left override is quoted", "acme", "bob\u202egnp.exe", `acme  "bob\u202egnp.exe"`},
		{"a tenant with a tab is quoted", "acme\tx", "carol", `"acme\tx"  carol`},
		{"a principal with a trailing space is quoted", "acme", "dave ", `acme  "dave "`},
	}
	dir := t.TempDir()
	withTable(t, dir, func(tbl store.Table) {
		for i, tt := range tests {
			err := tbl.Put(context.Background(), store.Item{PK: apikey.Partition, SK: apikey.Hash(string(rune('a' + i))), Attrs: store.Attrs{
				"tenant": tt.tenant, "principal": tt.principal, "scopes": "", "created_at": "2026-01-02T03:04:05Z",
			}}, store.IfAbsent())
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	out, _, err := apikeyCmd("list", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexFunc(out, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f || r == '\u202e' }); i >= 0 {
		t.Errorf("list wrote the control character %U to the terminal:\n%s", []rune(out[i:])[0], out)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := regexp.MustCompile(apikey.Hash(string(rune('a'+i))) + `  (.*?)\s+2026-01-02T03:04:05Z`).FindStringSubmatch(out)
			if row == nil || strings.Join(strings.Fields(row[1]), "  ") != strings.Join(strings.Fields(tt.want), "  ") {
				t.Errorf("row %q, want %q, in:\n%s", row, tt.want, out)
			}
		})
	}
}

func TestTheFirstKeySaysWhatHappensToRequestsWithoutOne(t *testing.T) {
	tests := []struct {
		name     string
		before   string // tenant of a key created first, if any
		tenant   string
		want     []string
		wantNone []string
	}{
		{"the first key for another tenant says how to keep working on tenant local", "", "acme",
			[]string{"first key", `acted for tenant "local", are refused from now on`, `sees nothing created without a key, which belongs to tenant "local"`, "--tenant local --principal 'Zoë M'"}, nil},
		{"the first key for tenant local says only that keys are now required", "", "local",
			[]string{"first key", "refused from now on"}, []string{"--tenant local"}},
		{"a second key adds no note", "acme", "beta", nil, []string{"Note:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.before != "" {
				if _, _, err := apikeyCmd("create", "--data", dir, "--tenant", tt.before, "--principal", "first"); err != nil {
					t.Fatal(err)
				}
			}
			_, errOut, err := apikeyCmd("create", "--data", dir, "--tenant", tt.tenant, "--principal", "Zoë M")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("create does not say %q:\n%s", w, errOut)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(errOut, w) {
					t.Errorf("create says %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestKeysAreManagedWhileTheServerRuns builds the gateway, runs it as a
// user does on a data folder, and manages keys on that folder with the
// command meanwhile: the first key ends anonymous access and a revoked key
// is refused at once, as the README says.
func TestKeysAreManagedWhileTheServerRuns(t *testing.T) {
	dir := t.TempDir()
	url := startServer(t, dir)
	if got := initialize(t, url, ""); got != http.StatusOK {
		t.Fatalf("without keys, a request without one: %d, want 200", got)
	}

	out, errOut, err := apikeyCmd("create", "--data", dir, "--tenant", "acme", "--principal", "alice")
	if err != nil {
		t.Fatalf("create while the server runs: %v\n%s", err, errOut)
	}
	secret := strings.TrimSpace(out)
	if !strings.Contains(errOut, "--tenant local") {
		t.Errorf("the first key for tenant acme does not say how to keep working on tenant local:\n%s", errOut)
	}
	steps := []struct {
		name string
		key  string
		want int
	}{
		{"the new key is served", secret, http.StatusOK},
		{"a request without a key is refused once a key exists", "", http.StatusUnauthorized},
	}
	for _, s := range steps {
		if got := initialize(t, url, s.key); got != s.want {
			t.Errorf("%s: %d, want %d", s.name, got, s.want)
		}
	}

	out, _, err = apikeyCmd("list", "--data", dir)
	if err != nil || !strings.Contains(out, apikey.Hash(secret)) || !strings.Contains(out, "alice") {
		t.Fatalf("list while the server runs = %q, %v", out, err)
	}
	if _, errOut, err := apikeyCmd("revoke", "--data", dir, apikey.Hash(secret)); err != nil || !strings.Contains(errOut, "refuses the key from now on") {
		t.Fatalf("revoke while the server runs: %v, %q", err, errOut)
	}
	if got := initialize(t, url, secret); got != http.StatusUnauthorized {
		t.Errorf("the revoked key, at once: %d, want 401", got)
	}
}

// startServer builds functions/gateway and runs it on dir and a free port
// until the test ends; it returns the MCP URL the server printed.
func startServer(t *testing.T, dir string) string {
	t.Helper()
	gocmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Fatalf("the go command is needed to build the server: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "switchboard")
	if out, err := exec.Command(gocmd, "build", "-o", bin, "github.com/switchboard-dev/switchboard/functions/gateway").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := exec.Command(bin, "--addr", "127.0.0.1:0", "--data", dir)
	var stderr bytes.Buffer
	srv.Stderr = &stderr
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`serving MCP at (http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		if err := srv.Wait(); err != nil {
			t.Errorf("the server: %v\n%s", err, stderr.String())
		}
	})
	select {
	case url := <-urls:
		return url
	case <-time.After(30 * time.Second):
		t.Fatalf("the server printed no URL; stderr:\n%s", stderr.String())
		return ""
	}
}

// initialize sends an MCP initialize request with key, if any, and returns
// the status.
func initialize(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
