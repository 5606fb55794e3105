package launch

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/apikey/admin"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/gateway"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlLine = regexp.MustCompile(`serving MCP at (http://\S+/mcp)`)

// serveLocal runs the local server on a free port until the test ends and
// returns its MCP URL and what it wrote to stderr.
func serveLocal(t *testing.T, data string) (string, *syncBuffer) {
	t.Helper()
	return serveLocalAllowing(t, data, "")
}

// serveLocalAllowing is [serveLocal] with --allow-connector-hosts hosts.
func serveLocalAllowing(t *testing.T, data, hosts string) (string, *syncBuffer) {
	t.Helper()
	url, stderr, _ := runLocal(t, data, hosts)
	return url, stderr
}

// runLocal runs the local server with --allow-connector-hosts hosts on a
// free port until the test ends and returns its MCP URL, what it writes to
// stderr, and the function that stops it sooner and waits until it has.
func runLocal(t *testing.T, data, hosts string) (string, *syncBuffer, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- localGateway(ctx, "127.0.0.1:0", data, false, hosts, Extras{}, stdout, stderr) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("localGateway: %v", err)
		}
	})
	t.Cleanup(stop)
	out := awaitBanner(t, stdout, stderr)
	m := urlLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no URL in the banner:\n%s", out)
	}
	if !strings.Contains(out, "claude mcp add --transport http switchboard "+m[1]) || !strings.Contains(out, "inspector@"+gateway.InspectorVersion+" --cli "+m[1]) {
		t.Errorf("the banner does not say how to connect:\n%s", out)
	}
	return m[1], stderr, stop
}

// bannerEnd is the last line of the banner the local server prints once it
// listens.
const bannerEnd = "Press Ctrl-C to stop.\n"

// awaitBanner waits for the local server to have printed its whole banner
// to stdout and returns what it printed: the banner is written a line at a
// time, so a test that read it once its first line was there could find it
// half-written.
func awaitBanner(t *testing.T, stdout, stderr *syncBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if out := stdout.String(); strings.Contains(out, bannerEnd) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server printed no whole banner; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	}
}

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

func TestWithoutKeysTheLocalServerActsForTenantLocalAndSaysSo(t *testing.T) {
	url, stderr := serveLocal(t, t.TempDir())
	if got := initialize(t, url, ""); got != 200 {
		t.Errorf("initialize without a key: %d, want 200", got)
	}
	if !strings.Contains(stderr.String(), `WARNING: no API key is configured: every request acts for tenant "local"`) {
		t.Errorf("no WARNING line about the local tenant in:\n%s", stderr.String())
	}
}

// dataWithKey returns a data folder holding one API key, and the key.
func dataWithKey(t *testing.T) (data, key string) {
	t.Helper()
	data = t.TempDir()
	cfg := config.Local(data)
	tbl, closeFn, err := cfg.OpenTable(context.Background(), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	key, _, err = apikey.New(tbl, nil).Create(context.Background(), "acme", "alice", nil, time.Time{})
	closeFn()
	if err != nil {
		t.Fatal(err)
	}
	return data, key
}

func TestOnceAKeyExistsTheLocalServerRequiresOne(t *testing.T) {
	data, key := dataWithKey(t)
	url, stderr := serveLocal(t, data)
	if got := initialize(t, url, ""); got != http.StatusUnauthorized {
		t.Errorf("initialize without a key: %d, want 401", got)
	}
	if got := initialize(t, url, key); got != 200 {
		t.Errorf("initialize with the key: %d, want 200", got)
	}
	if strings.Contains(stderr.String(), "tenant \"local\"") {
		t.Errorf("the server announces the local tenant although keys are required:\n%s", stderr.String())
	}
}

func TestASecondServerOnTheSameDataFolderSaysWhyItCannotStart(t *testing.T) {
	data := t.TempDir()
	serveLocal(t, data)
	err := localGateway(context.Background(), "127.0.0.1:0", data, false, "", Extras{}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "another process holds it") {
		t.Errorf("second server: error = %v, want one saying the folder is in use", err)
	}
}

func TestKeysManagedThroughTheSocketTakeEffectAtOnce(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	url, _ := serveLocal(t, data)
	keys, err := admin.Dial(ctx, data)
	if err != nil {
		t.Fatalf("the running server offers no key socket: %v", err)
	}
	secret, key, err := keys.Create(ctx, "acme", "alice", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		before func() error
		key    string
		want   int
	}{
		{"the new key is served", nil, secret, 200},
		{"a request without a key is refused once one exists", nil, "", http.StatusUnauthorized},
		{"a revoked key is refused at once", func() error { return keys.Revoke(ctx, key.Hash) }, secret, http.StatusUnauthorized},
	}
	for _, s := range steps {
		if s.before != nil {
			if err := s.before(); err != nil {
				t.Fatal(err)
			}
		}
		if got := initialize(t, url, s.key); got != s.want {
			t.Errorf("%s: %d, want %d", s.name, got, s.want)
		}
	}
}
