package launch

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	bolt "go.etcd.io/bbolt"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/awsjson"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// leakSecret returns a credential no run could hold by chance, with
// characters that JSON, URL and form encodings each change.
func leakSecret(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:]) + "+/&="
}

// encodings returns the forms in which s could appear in a log line, a
// body or an item: as it is, JSON-escaped, URL- and form-encoded, hex, and
// base64 (standard and URL alphabets) at each of the three alignments it
// could start at within a longer encoded text, kept to the characters that
// depend on s alone.
func encodings(s string) []string {
	j, _ := json.Marshal(s)
	out := []string{s, string(j[1 : len(j)-1]), url.QueryEscape(s), url.PathEscape(s), hex.EncodeToString([]byte(s))}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for pad := range 3 {
			e := enc.EncodeToString(append(make([]byte, pad), s...))
			out = append(out, e[(pad*8+5)/6:(pad+len(s))*8/6])
		}
	}
	return out
}

// recorder is an HTTP transport that signs requests with an API key and
// keeps every response's status line, headers and body as the client reads
// them (event streams included), each whole in a buffer of its own, so that
// concurrent responses never interleave within one another.
type recorder struct {
	key string
	log *responseLog
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.key)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	seen := r.log.add()
	fmt.Fprintf(seen, "\n%s %s -> %s\n", req.Method, req.URL, resp.Status)
	resp.Header.Write(seen)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, seen), resp.Body}
	return resp, nil
}

// responseLog holds what the clients read, a buffer per response.
type responseLog struct {
	mu     sync.Mutex
	bodies []*syncBuffer
}

func (l *responseLog) add() *syncBuffer {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &syncBuffer{}
	l.bodies = append(l.bodies, b)
	return b
}

func (l *responseLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out strings.Builder
	for _, b := range l.bodies {
		out.WriteString(b.String())
	}
	return out.String()
}

// leakyUpstream serves a go-sdk MCP server (echo, and charge, which asks
// for approval by default) that accepts only the bearer tokens in good, a
// token endpoint issuing token to the client secret clientSecret, and an
// endpoint that answers every request 500 with the headers it received.
// Every refusal echoes what it was sent, as careless servers do.
type leakyUpstream struct {
	mcpURL, tokenURL, echoURL string
	// echoed counts the answers that sent a credential back.
	echoed *atomic.Int64
}

func startLeakyUpstream(t *testing.T, good []string, clientSecret, token string) leakyUpstream {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "charges"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged " + a.Text}}}, nil, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	echoed := &atomic.Int64{}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		for _, g := range good {
			if got == "Bearer "+g {
				mcpHandler.ServeHTTP(w, r)
				return
			}
		}
		echoed.Add(1)
		http.Error(w, "unauthorized: you sent "+got, http.StatusUnauthorized)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, sec, ok := r.BasicAuth()
		if ok { // form-encoded before base64 (RFC 6749 2.3.1)
			id, _ = url.QueryUnescape(id)
			sec, _ = url.QueryUnescape(sec)
		} else {
			id, sec = r.FormValue("client_id"), r.FormValue("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if sec != clientSecret {
			echoed.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": "client " + id + " sent secret " + sec})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		r.Header.Write(&b)
		echoed.Add(1)
		http.Error(w, "upstream exploded; you sent:\n"+b.String(), http.StatusInternalServerError)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return leakyUpstream{mcpURL: ts.URL + "/mcp", tokenURL: ts.URL + "/token", echoURL: ts.URL + "/echo", echoed: echoed}
}

// TestNoSecretLeavesAWholeRun runs the local server, the assembly the
// command, the tests and the benchmarks start, through a whole connector
// lifecycle with distinctive credentials, upstream failures that echo them
// included, and then looks for each credential, in every encoding it could
// take, in every log line (every level), every response the clients read
// (tool outputs, the approval page) and every byte the store holds: the
// data folder's files, bbolt's buckets, and with DynamoDB Local the whole
// table (issue 12 item 2).
func TestNoSecretLeavesAWholeRun(t *testing.T) {
	for _, backend := range []string{"embedded", "dynamo"} {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			var keys [2]string
			var dump func(w io.Writer)
			switch backend {
			case "embedded":
				path := filepath.Join(data, "switchboard.db")
				tbl, err := embedded.Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				keys = createKeys(t, tbl)
				tbl.Close()
				dump = func(w io.Writer) { dumpBolt(t, path, w) }
			case "dynamo":
				cfg := storetest.DynamoConfig(t)
				var b [6]byte
				rand.Read(b[:])
				name := "switchboard-leak-" + hex.EncodeToString(b[:])
				if err := dynamo.CreateTable(context.Background(), cfg, name); err != nil {
					t.Fatal(err)
				}
				t.Setenv(config.EnvTable, name)
				t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", os.Getenv(storetest.DynamoDBEnv))
				t.Setenv("AWS_REGION", "us-east-1")
				t.Setenv("AWS_ACCESS_KEY_ID", "test")
				t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
				keys = createKeys(t, dynamo.New(cfg, name))
				dump = func(w io.Writer) { dumpDynamo(t, cfg, name, w) }
			}
			secrets, logs, seen := runScenario(t, data, keys)
			var hay strings.Builder
			hay.WriteString(logs)
			hay.WriteString(seen)
			// Every file of the data folder, as bytes: the table's file,
			// the blobs, the key files.
			filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					b, _ := os.ReadFile(path)
					hay.Write(b)
				}
				return nil
			})
			dump(&hay)
			all := hay.String()
			for _, want := range []string{"ConnectorCreated", "ApprovalGranted", "X-Api-Key", "scheduled sync", "Approve", "charged"} {
				if !strings.Contains(all, want) {
					t.Fatalf("nothing in the run says %q: the search would prove nothing", want)
				}
			}
			for what, s := range secrets {
				for _, form := range encodings(s) {
					if i := strings.Index(all, form); i >= 0 {
						t.Errorf("%s found (as %q): ...%s...", what, form, all[max(0, i-300):min(len(all), i+len(form)+100)])
					}
				}
			}
		})
	}
}

// createKeys creates the API keys of alice and bob, of one tenant.
func createKeys(t *testing.T, tbl store.Table) [2]string {
	t.Helper()
	var keys [2]string
	for i, who := range []string{"alice", "bob"} {
		key, _, err := apikey.New(tbl, nil).Create(context.Background(), "acme", who, nil, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = key
	}
	return keys
}

// dumpBolt writes every key and value of every bucket of the bbolt file at
// path, nested buckets included.
func dumpBolt(t *testing.T, path string, w io.Writer) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			w.Write(k)
			w.Write(v)
			if v == nil {
				return walk(b.Bucket(k))
			}
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			w.Write(name)
			return walk(b)
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// dumpDynamo writes every item of table name, scanned whole.
func dumpDynamo(t *testing.T, cfg aws.Config, name string, w io.Writer) {
	t.Helper()
	in := map[string]any{"TableName": name}
	items := 0
	for {
		var page struct {
			Items            []map[string]any
			LastEvaluatedKey map[string]any
		}
		if _, err := awsjson.Call(context.Background(), &cfg, awsjson.DynamoDB, "Scan", in, &page, 16<<20); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			items++
			writeAttr(w, map[string]any{"M": it})
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in["ExclusiveStartKey"] = page.LastEvaluatedKey
	}
	if items == 0 {
		t.Fatalf("table %s is empty: the run wrote elsewhere", name)
	}
}

// writeAttr writes the text of an attribute value in DynamoDB's JSON:
// strings and numbers as they are, binary values as bytes and in base64.
func writeAttr(w io.Writer, av map[string]any) {
	for typ, v := range av {
		switch typ {
		case "S", "N":
			io.WriteString(w, fmt.Sprint(v)+"\n")
		case "B":
			b, _ := base64.StdEncoding.DecodeString(fmt.Sprint(v))
			w.Write(b)
			io.WriteString(w, "\n"+fmt.Sprint(v)+"\n")
		case "SS", "NS", "L":
			for _, e := range v.([]any) {
				if m, ok := e.(map[string]any); ok {
					writeAttr(w, m)
				} else {
					io.WriteString(w, fmt.Sprint(e)+"\n")
				}
			}
		case "M":
			for k, e := range v.(map[string]any) {
				io.WriteString(w, k+"=")
				writeAttr(w, e.(map[string]any))
			}
		default:
			fmt.Fprintf(w, "%v\n", v)
		}
	}
}

// scheduledSync matches the log line of a scheduled sync that synced a connector.
var scheduledSync = regexp.MustCompile(`msg="scheduled sync" .*synced=[1-9]`)

var approvalPageLink = regexp.MustCompile(`/approvals/([0-9a-f]{32})`)

// runScenario runs the local server on data, with keys, alice's and bob's,
// through the connector lifecycle, stops it, and returns the credentials
// used, every log line and every response the clients read.
func runScenario(t *testing.T, data string, keys [2]string) (secrets map[string]string, logs, seen string) {
	secrets = map[string]string{
		"alice's header secret":         leakSecret("hdr-"),
		"an API key header's secret":    leakSecret("apikey-"),
		"bob's own header secret":       leakSecret("bob-"),
		"the OAuth client secret":       leakSecret("cs-"),
		"a wrong OAuth client secret":   leakSecret("wrongcs-"),
		"the OAuth access token":        leakSecret("tok-"),
		"the echoing upstream's secret": leakSecret("echo-"),
	}
	up := startLeakyUpstream(t, []string{secrets["alice's header secret"], secrets["bob's own header secret"], secrets["the OAuth access token"]},
		secrets["the OAuth client secret"], secrets["the OAuth access token"])

	// Every level, from the server's logger and from anything that logs
	// through slog's default.
	t.Setenv(config.EnvLogLevel, "debug")
	t.Setenv(config.EnvConnectorSyncInterval, "1s")
	t.Setenv(config.EnvConnectorCacheTTL, "1s")
	defaults := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(defaults, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	base, stderr, stop := runLocal(t, data, "127.0.0.1")
	responses := &responseLog{}
	aliceHTTP := &http.Client{Transport: recorder{keys[0], responses}}
	aliceHTTP.Jar, _ = cookiejar.New(nil)
	connect := func(h *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: base, HTTPClient: h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := connect(aliceHTTP, nil)
	bob := connect(&http.Client{Transport: recorder{keys[1], responses}}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}})
	var traces []string
	call := func(cs *mcp.ClientSession, tool string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
		if err != nil {
			fmt.Fprintf(responses.add(), "%s: %v\n", tool, err)
			return &mcp.CallToolResult{IsError: true}
		}
		if tr, ok := res.Meta[invoke.TraceMetaKey].(string); ok && cs == alice {
			traces = append(traces, tr)
		}
		return res
	}
	structured := func(res *mcp.CallToolResult, v any) {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, v)
	}

	call(alice, "connector_create", map[string]any{"name": "up", "base_url": up.mcpURL, "transport": "streamable_http",
		"headers": map[string]string{"Authorization": "Bearer " + secrets["alice's header secret"], "X-Api-Key": secrets["an API key header's secret"]}}, nil)
	call(alice, "connector_create", map[string]any{"name": "oa", "base_url": up.mcpURL, "transport": "streamable_http",
		"oauth": map[string]any{"token_url": up.tokenURL, "client_id": "switchboard", "client_secret": secrets["the OAuth client secret"], "scopes": []string{"read"}}}, nil)
	call(alice, "connector_create", map[string]any{"name": "badoa", "base_url": up.mcpURL, "transport": "streamable_http",
		"oauth": map[string]any{"token_url": up.tokenURL, "client_id": "switchboard", "client_secret": secrets["a wrong OAuth client secret"]}}, nil)
	call(alice, "connector_create", map[string]any{"name": "echo", "base_url": up.echoURL, "transport": "streamable_http",
		"headers": map[string]string{"Authorization": "Bearer " + secrets["the echoing upstream's secret"]}}, nil)
	for _, name := range []string{"up", "oa", "badoa", "echo"} {
		call(alice, "connector_verify", map[string]any{"name": name}, nil)
		call(alice, "connector_sync", map[string]any{"name": name}, nil)
		call(alice, "connector_get", map[string]any{"name": name}, nil)
	}
	var got struct {
		Connector struct {
			Version int64 `json:"version"`
		} `json:"connector"`
	}
	structured(call(bob, "connector_get", map[string]any{"name": "up"}, nil), &got)
	call(bob, "connector_update", map[string]any{"name": "up", "version": got.Connector.Version, "principal_scoped": true,
		"headers": map[string]string{"Authorization": "Bearer " + secrets["bob's own header secret"]}}, nil)
	for _, tool := range []string{"echo"} {
		call(alice, "approval_policy_set", map[string]any{"connector": "up", "tool": tool, "policy": "ALWAYS_ALLOW"}, nil)
		call(alice, "approval_policy_set", map[string]any{"connector": "oa", "tool": tool, "policy": "ALWAYS_ALLOW"}, nil)
	}
	call(alice, "approval_policy_list", map[string]any{"connector": "up"}, nil)
	for _, cs := range []*mcp.ClientSession{alice, bob} {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"up__echo", "oa__echo", "badoa__echo", "echo__echo"} {
			call(cs, tool, map[string]any{"text": "hello"}, nil)
		}
	}
	if res := call(bob, "up__echo", map[string]any{"text": "bob"}, nil); res.IsError {
		t.Fatalf("bob's call with his own credentials failed: %s", textOf(res))
	}
	if res := call(alice, "oa__echo", map[string]any{"text": "oauth"}, nil); res.IsError {
		t.Fatalf("the call with an OAuth token failed: %s\n%s", textOf(res), stderr.String())
	}

	// An ASK_USER call approved on the page, and one by elicitation.
	first := call(alice, "up__charge", map[string]any{"text": "10 EUR"}, nil)
	m := approvalPageLink.FindStringSubmatch(fmt.Sprint(first.Meta[connector.ApprovalURLMetaKey]))
	if m == nil {
		t.Fatalf("the ASK_USER call links no approval page: %+v", first)
	}
	page := strings.TrimSuffix(base, "/mcp") + "/approvals/" + m[1]
	opened, err := aliceHTTP.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(opened.Body)
	opened.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(body)
	if csrf == nil {
		t.Fatalf("the approval page has no form: %s", body)
	}
	decided, err := aliceHTTP.PostForm(page, url.Values{"decision": {"approve"}, "csrf": {html.UnescapeString(string(csrf[1]))}})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(decided.Body)
	decided.Body.Close()
	if res := call(alice, "up__charge", map[string]any{"text": "10 EUR"}, mcp.Meta{connector.ApprovalMetaKey: m[1]}); res.IsError {
		t.Fatalf("the approved call failed: %s", textOf(res))
	}
	call(bob, "up__charge", map[string]any{"text": "5 EUR"}, nil)

	call(alice, "connector_list", map[string]any{}, nil)
	call(alice, "connector_tools_openai", map[string]any{"include_switchboard": true}, nil)
	// The scheduled sync, every second here, reaches each connector.
	for deadline := time.Now().Add(30 * time.Second); !scheduledSync.MatchString(stderr.String()); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no scheduled sync ran:\n%s", stderr.String())
		}
	}
	call(alice, "connector_health", map[string]any{}, nil)
	for _, tr := range traces {
		call(alice, "get_audit_trace", map[string]any{"trace_id": tr}, nil)
	}
	call(alice, "connector_delete", map[string]any{"name": "badoa"}, nil)
	// The sessions end before the server, whose shutdown waits for their
	// connections.
	alice.Close()
	bob.Close()
	stop()
	if up.echoed.Load() == 0 {
		t.Fatal("no upstream sent a credential back: the failures the search covers did not happen")
	}
	seen = responses.String()
	return secrets, stderr.String() + defaults.String(), seen
}
