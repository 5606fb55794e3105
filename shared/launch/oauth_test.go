package launch

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/oauth"
)

// tsSDK returns the TypeScript MCP SDK that scripts/test installs (as the
// conformance suite's dependency, pinned by its lock file), or skips.
func tsSDK(t *testing.T, node string) (dir, version string) {
	t.Helper()
	sdk := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(node))), "@modelcontextprotocol", "sdk")
	b, err := os.ReadFile(filepath.Join(sdk, "package.json"))
	if err != nil {
		t.Skipf("no TypeScript MCP SDK in %s: scripts/test installs the Node tools", sdk)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	return sdk, pkg.Version
}

// TestTheTypeScriptSDKSignsInWithOAuth runs scripts/oauth/client.mjs, a host
// on the TypeScript SDK's OAuth client, against the local server with the
// authorization-server facade on, in front of a real OpenID provider
// (zitadel's op with its example users) in this process: from the first 401
// through discovery, dynamic registration, consent, the provider's login,
// the callback and the token request, to an authorized tools/list and
// tools/call. The flow's time is logged (go test -v).
func TestTheTypeScriptSDKSignsInWithOAuth(t *testing.T) {
	node, _ := nodeTools(t)
	sdk, version := tsSDK(t, node)

	// The server's address first: the provider must know its callback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	origin := "http://" + addr

	pmux := http.NewServeMux()
	provider := httptest.NewServer(pmux)
	t.Cleanup(provider.Close)
	clients := map[string]*storage.Client{"switchboard": storage.WebClient("switchboard", "provider-secret", origin+oauth.PathCallback)}
	pmux.Handle("/", exampleop.SetupServer(provider.URL, storage.NewStorageWithClients(storage.NewUserStore(provider.URL), clients), slog.New(slog.DiscardHandler), false))

	for k, v := range map[string]string{
		config.EnvOAuthResource: origin + "/mcp", config.EnvOAuthFacade: "on",
		config.EnvOAuthProviderIssuer: provider.URL, config.EnvOAuthProviderClientID: "switchboard",
		config.EnvOAuthProviderClientSecret: "provider-secret", config.EnvOAuthDefaultTenant: "acme",
		config.EnvOAuthSigningKeys: `{"fk1":"` + elicit.NewSecret() + `"}`,
	} {
		t.Setenv(k, v)
	}
	// With an API key in the table, requests without a credential are refused.
	data, _ := dataWithKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- localGateway(ctx, addr, data, false, "", Extras{}, stdout, stderr) }()
	defer func() { cancel(); <-done }()
	awaitBanner(t, stdout, stderr)

	cmd := exec.Command(node, filepath.Join("..", "..", "scripts", "oauth", "client.mjs"))
	cmd.Env = append(os.Environ(), "MCP_URL="+origin+"/mcp", "MCP_SDK="+sdk,
		"LOGIN_USERNAME=test-user@127.0.0.1", "LOGIN_PASSWORD=verysecure",
		"TOOL=memory_get_or_create", `TOOL_ARGS={"conversation_id":"ts-oauth"}`)
	out, err := cmd.Output()
	if err != nil {
		var stderrText string
		if ee, ok := err.(*exec.ExitError); ok {
			stderrText = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s\n%s\nserver: %s", cmd, err, out, stderrText, stderr.String())
	}
	var got struct {
		Tools  []string
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
		OAuthRequests   []string `json:"oauthRequests"`
		BrowserSteps    []string `json:"browserSteps"`
		Phases          map[string]float64
		MCPRequests     []string `json:"mcpRequests"`
		FlowMs          float64  `json:"flowMs"`
		Scope           string
		HasRefreshToken bool `json:"hasRefreshToken"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the script printed %s: %v", out, err)
	}
	if !slices.Contains(got.Tools, "memory_get_or_create") || got.Result.IsError {
		t.Errorf("tools %v, result %+v; want the memory tools listed and the call answered", got.Tools, got.Result)
	}
	// Discovery, registration and the token request, in that order (the
	// authorization request went through the browser).
	want := []string{"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-authorization-server", "POST /oauth/register", "POST /oauth/token"}
	var steps []string
	for _, r := range got.OAuthRequests {
		if slices.Contains(want, r) && !slices.Contains(steps, r) {
			steps = append(steps, r)
		}
	}
	if !slices.Equal(steps, want) {
		t.Errorf("the SDK's OAuth requests were %v; want %v in that order", got.OAuthRequests, want)
	}
	if !got.HasRefreshToken {
		t.Errorf("no refresh token was issued")
	}
	t.Logf("OAuth flow, TypeScript SDK %s: first request to the access token %.1f ms, to the tool's answer %.1f ms (phases %v; MCP requests %v; scope %q; OAuth requests %v; browser:\n%s)",
		version, got.Phases["token"], got.FlowMs, got.Phases, got.MCPRequests, got.Scope, got.OAuthRequests, strings.Join(got.BrowserSteps, "\n"))
}
