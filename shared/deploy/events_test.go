package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// openTable opens an embedded table at path, closed when the test ends.
func openTable(t *testing.T, path string) *embedded.Table {
	t.Helper()
	tbl, err := embedded.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// stack returns every function in process over table and blobs, as the
// local server runs them.
func stack(t *testing.T, table store.Table, blobs store.Blobs) *local.Stack {
	t.Helper()
	d := lambdafn.Deps{Table: table, Blobs: blobs, Summarizer: offline.Summarizer{}}
	cfg := config.Config{ConnectorKey: config.FilePrefix + filepath.Join(t.TempDir(), "connector-keys.json"), ConnectorAllowedHosts: SampleConnectorHost,
		WebSearch: sampleSearchConfig(t)}
	if err := connectors.Open(context.Background(), &cfg, &d); err != nil {
		t.Fatal(err)
	}
	if err := search.Open(context.Background(), &cfg, &d); err != nil {
		t.Fatal(err)
	}
	s, err := local.New(local.Options{Deps: d, Functions: handlers.All()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// handler returns the handler of the function at path in s.
func handler(t *testing.T, s *local.Stack, path string) lambda.Handler {
	t.Helper()
	h, ok := s.Handler(path)
	if !ok {
		t.Fatalf("handlers.All has no function %s", path)
	}
	return h
}

// openBlobs opens a local blob store in dir/blobs, where the bootstraps find it
// through [blobsEnv].
func openBlobs(t *testing.T, dir string) store.Blobs {
	t.Helper()
	b := localfs.New(filepath.Join(dir, "blobs"))
	t.Cleanup(func() { b.Close() })
	return b
}

// blobsEnv configures a bootstrap to use the blob store of [openBlobs].
func blobsEnv(dir string) string {
	return config.EnvBucket + "=" + config.FilePrefix + filepath.Join(dir, "blobs")
}

// readEvent reads the event file of ev from events/, as sam local invoke would.
func readEvent(t *testing.T, ev Event) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(ev.Path)))
	if err != nil {
		t.Fatalf("%v: run go run ./scripts/generate", err)
	}
	return b
}

// eventByPath returns the sample event at path.
func eventByPath(t *testing.T, path string) Event {
	t.Helper()
	evs, err := Events(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(evs, func(e Event) bool { return e.Path == path })
	if i < 0 {
		t.Fatalf("no sample event %s", path)
	}
	return evs[i]
}

// seed prepares table and blobs for the sample events ([Seed]).
func seed(t *testing.T, table store.Table, blobs store.Blobs) {
	t.Helper()
	if err := Seed(context.Background(), table, blobs); err != nil {
		t.Fatal(err)
	}
}

// upstreamEvents are the tools whose sample events reach the sample
// connector's upstream, which does not exist: they must answer that it is
// unavailable, naming the connector.
var upstreamEvents = map[string]bool{"connector_verify": true, "connector_sync": true,
	"connector_call": true, "connector_resource_read": true, "connector_prompt_get": true}

// approvalEvents are the approval page's tools, whose sample id names no
// approval (one exists only once a proxied call asked for it): they must
// answer that it does not exist, naming the field.
var approvalEvents = map[string]bool{"approval_get": true, "approval_approve": true, "approval_deny": true}

// toolResult is the part of an MCP CallToolResult the checks read.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type, Text string
	} `json:"content"`
	Meta map[string]any `json:"_meta"`
}

// checkAnswer checks a function's answer to ev: the gateway's is an API
// Gateway response carrying the JSON-RPC result in an SSE event; a tool's is
// an invoke.Response holding a successful CallToolResult; a resource
// function's holds the list or the resource read.
func checkAnswer(t *testing.T, ev Event, payload []byte) {
	t.Helper()
	if ev.Function == GatewayPath {
		checkGatewayAnswer(t, ev, payload)
		return
	}
	if ev.Method == MethodS3 {
		return // S3 discards what a function answers; the error, if any, is what counts
	}
	if ev.Method == MethodSchedule {
		// The sample connector's upstream does not exist: the run reaches
		// it, and reports it failed.
		var out connector.SyncDueOutput
		if err := json.Unmarshal(payload, &out); err != nil || out.Synced != 0 || out.Failed == 0 {
			t.Fatalf("%s: answered %s (%v), want a scheduled sync's report of the sample connector failed", ev.Path, payload, err)
		}
		return
	}
	var resp invoke.Response
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("%s: answer is not an invoke.Response: %v\n%s", ev.Path, err, payload)
	}
	if upstreamEvents[ev.Name] {
		if resp.Error == nil || string(resp.Error.Kind) != string(fault.KindUnavailable) || !strings.Contains(resp.Error.Message, SampleConnector) {
			t.Fatalf("%s: answered %+v, want the sample connector's upstream unavailable", ev.Path, resp.Error)
		}
		return
	}
	if approvalEvents[ev.Name] {
		if resp.Error == nil || string(resp.Error.Kind) != string(fault.KindNotFound) || resp.Error.Field != "approval_id" {
			t.Fatalf("%s: answered %+v, want approval_id not found", ev.Path, resp.Error)
		}
		return
	}
	if resp.Error != nil {
		t.Fatalf("%s: answered error %+v", ev.Path, resp.Error)
	}
	switch ev.Method {
	case invoke.MethodCallTool:
		var res toolResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatalf("%s: result is not a CallToolResult: %v", ev.Path, err)
		}
		if res.IsError || len(res.StructuredContent) == 0 || len(res.Content) == 0 {
			t.Fatalf("%s: want a successful result with structured content, got %s", ev.Path, resp.Result)
		}
		if got := res.Meta[invoke.TraceMetaKey]; got != SampleTraceID {
			t.Errorf("%s: result carries trace %v, want %s", ev.Path, got, SampleTraceID)
		}
		if ev.Name == "get_audit_trace" {
			var trace struct{ Events []json.RawMessage }
			json.Unmarshal(res.StructuredContent, &trace)
			if len(trace.Events) == 0 {
				t.Errorf("%s: the sample trace has no audit events, though the seeding calls were audited: %s", ev.Path, res.StructuredContent)
			}
		}
	case invoke.MethodListResources:
		var res struct{ Resources []struct{ URI string } }
		json.Unmarshal(resp.Result, &res)
		uri := "memory://conversation/" + SampleConversation
		if !slices.ContainsFunc(res.Resources, func(r struct{ URI string }) bool { return r.URI == uri }) {
			t.Errorf("%s: the list lacks %s: %s", ev.Path, uri, resp.Result)
		}
	case invoke.MethodReadResource:
		var res struct{ Contents []struct{ URI, Text string } }
		json.Unmarshal(resp.Result, &res)
		if len(res.Contents) != 1 || res.Contents[0].URI != ev.Name || res.Contents[0].Text == "" {
			t.Errorf("%s: want the contents of %s, got %s", ev.Path, ev.Name, resp.Result)
		}
	default:
		t.Fatalf("%s: unexpected method %s", ev.Path, ev.Method)
	}
}

func checkGatewayAnswer(t *testing.T, ev Event, payload []byte) {
	t.Helper()
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		t.Fatalf("%s: answer is not an API Gateway response: %v\n%s", ev.Path, err, payload)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Headers["Content-Type"], "text/event-stream") {
		t.Fatalf("%s: status %d, content type %q, want 200 and an SSE stream; body:\n%s", ev.Path, resp.StatusCode, resp.Headers["Content-Type"], resp.Body)
	}
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	sc := bufio.NewScanner(strings.NewReader(resp.Body))
	sc.Buffer(nil, 16<<20) // tools/list outgrew the default 64 KB line
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &msg); err != nil {
				t.Fatalf("%s: SSE data is not JSON-RPC: %v", ev.Path, err)
			}
		}
	}
	if msg.Result == nil || msg.Error != nil {
		t.Fatalf("%s: want a JSON-RPC result in the SSE body, got:\n%s", ev.Path, resp.Body)
	}
	switch ev.Method {
	case "initialize":
		var res struct {
			ProtocolVersion string
			ServerInfo      struct{ Name string }
		}
		json.Unmarshal(msg.Result, &res)
		if res.ServerInfo.Name != "switchboard" || res.ProtocolVersion != SampleProtocolVersion {
			t.Errorf("%s: initialize answered %s", ev.Path, msg.Result)
		}
	case "tools/list":
		var res struct{ Tools []struct{ Name string } }
		json.Unmarshal(msg.Result, &res)
		var got, want []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		for _, tl := range catalog.Default().Tools() {
			if tl.Visibility == catalog.Public {
				want = append(want, tl.Name)
			}
		}
		want = append(want, gateway.ToolSearchName) // the gateway's own
		sort.Strings(got)
		sort.Strings(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: tools/list mismatch (-catalog +answer):\n%s", ev.Path, diff)
		}
	case "tools/call":
		var res toolResult
		json.Unmarshal(msg.Result, &res)
		if res.IsError || len(res.StructuredContent) == 0 {
			t.Errorf("%s: tools/call answered %s", ev.Path, msg.Result)
		}
	}
}

// recordingTable is a store.Table that records the DynamoDB actions and the
// partitions its calls would need on AWS.
type recordingTable struct {
	store.Table
	mu         sync.Mutex
	actions    map[string]bool
	partitions map[string]bool
}

func newRecordingTable(t store.Table) *recordingTable {
	return &recordingTable{Table: t, actions: map[string]bool{}, partitions: map[string]bool{}}
}

func (r *recordingTable) record(action, pk string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions["dynamodb:"+action] = true
	r.partitions[pk] = true
}

func (r *recordingTable) Get(ctx context.Context, pk, sk string) (store.Item, error) {
	r.record("GetItem", pk)
	return r.Table.Get(ctx, pk, sk)
}

func (r *recordingTable) Put(ctx context.Context, it store.Item, c store.Condition) error {
	r.record("PutItem", it.PK)
	return r.Table.Put(ctx, it, c)
}

func (r *recordingTable) Delete(ctx context.Context, pk, sk string, c store.Condition) error {
	r.record("DeleteItem", pk)
	return r.Table.Delete(ctx, pk, sk, c)
}

func (r *recordingTable) Query(ctx context.Context, pk string, q store.Query) (store.Page, error) {
	r.record("Query", pk)
	return r.Table.Query(ctx, pk, q)
}

// Transact records what DynamoDB authorises each item of a TransactWriteItems call by.
func (r *recordingTable) Transact(ctx context.Context, writes ...store.Write) error {
	for _, w := range writes {
		action := map[store.WriteKind]string{store.WritePut: "PutItem", store.WriteDelete: "DeleteItem", store.WriteCheck: "ConditionCheckItem"}[w.Kind]
		r.record(action, w.Item.PK)
	}
	return r.Table.Transact(ctx, writes...)
}

func (r *recordingTable) recorded() (actions, partitions []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a := range r.actions {
		actions = append(actions, a)
	}
	for p := range r.partitions {
		partitions = append(partitions, p)
	}
	sort.Strings(actions)
	sort.Strings(partitions)
	return actions, partitions
}

// grantedTableActions returns the DynamoDB actions the template grants the
// function at path's own role with tenant isolation off (on, the tenant
// role's session policy grants the same, tenantscoped.Items).
func grantedTableActions(t *testing.T, p parsed, path string) []string {
	t.Helper()
	var granted []string
	policies, _ := props(p.resource(t, invoke.LogicalID(path)))["Policies"].([]any)
	for _, doc := range resolveIf(policies, map[string]bool{TenantIsolationOff: true}).([]any) {
		statements, ok := doc.(map[string]any)["Statement"].([]any)
		if !ok {
			continue
		}
		for _, s := range statements {
			actions, _ := s.(map[string]any)["Action"].([]any)
			for _, a := range actions {
				if strings.HasPrefix(a.(string), "dynamodb:") {
					granted = append(granted, a.(string))
				}
			}
		}
	}
	return granted
}

// localGateway returns the gateway's Lambda handler with every function in
// process, as launch runs it locally, acting for the sample tenant when a
// request has no API key.
func localGateway(t *testing.T, functions, keys store.Table, blobs store.Blobs) lambda.Handler {
	t.Helper()
	cat := catalog.Default()
	gw, err := gateway.New(gateway.Options{
		Catalog:   cat,
		Invoker:   stack(t, functions, blobs),
		Keys:      apikey.New(keys, nil),
		Anonymous: &tenant.Caller{Tenant: SampleTenant, Principal: SamplePrincipal},
	})
	if err != nil {
		t.Fatal(err)
	}
	return lambda.NewHandler(apigw.Handler(gw.Handler()))
}

// TestEveryEventReplaysThroughItsHandler replays each file of events/
// through its function's handler in process, on a fresh embedded store
// seeded with the sample conversation, and checks the answer and that the
// store calls it made are ones the template allows the function.
func TestEveryEventReplaysThroughItsHandler(t *testing.T) {
	p := readTemplate(t)
	evs, err := Events(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		t.Run(ev.Path, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tbl, blobs := openTable(t, filepath.Join(dir, "t.db")), openBlobs(t, dir)
			seed(t, tbl, blobs)
			rec := newRecordingTable(tbl)
			var h lambda.Handler
			if ev.Function == GatewayPath {
				h = localGateway(t, tbl, rec, blobs)
			} else {
				h = handler(t, stack(t, rec, blobs), ev.Function)
			}
			out, err := h.Invoke(context.Background(), readEvent(t, ev))
			if err != nil {
				t.Fatalf("function error: %v", err)
			}
			checkAnswer(t, ev, out)
			if ev.Function == GatewayPath {
				return // requests without an API key do not touch the gateway's table
			}
			actions, _ := rec.recorded()
			granted := grantedTableActions(t, p, ev.Function)
			t.Logf("store calls need %v; the template grants %v", actions, granted)
			for _, a := range actions {
				if !slices.Contains(granted, a) {
					t.Errorf("the call needs %s, which template.yaml does not grant %s (it grants %v)", a, ev.Function, granted)
				}
			}
		})
	}
}

// TestTheGatewayReadsOnlyApiKeysFromItsTable sends the sample tools/list
// request with an API key and checks the gateway's table calls against the
// template: only granted actions, only in the API key partition.
func TestTheGatewayReadsOnlyApiKeysFromItsTable(t *testing.T) {
	p := readTemplate(t)
	tbl := openTable(t, filepath.Join(t.TempDir(), "t.db"))
	key, _, err := apikey.New(tbl, nil).Create(context.Background(), "acme", "ci", nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecordingTable(tbl)
	h := localGateway(t, tbl, rec, nil)
	ev := eventByPath(t, "events/gateway/tools-list.json")
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(readEvent(t, ev), &req); err != nil {
		t.Fatal(err)
	}
	req.Headers["authorization"] = "Bearer " + key
	payload, _ := json.Marshal(req)
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, ev, out)
	actions, partitions := rec.recorded()
	if len(actions) == 0 {
		t.Fatalf("the gateway did not look the key up")
	}
	granted := grantedTableActions(t, p, GatewayPath)
	for _, a := range actions {
		if !slices.Contains(granted, a) {
			t.Errorf("the gateway needs %s, which template.yaml does not grant (it grants %v)", a, granted)
		}
	}
	if diff := cmp.Diff([]string{apikey.Partition}, partitions); diff != "" {
		t.Errorf("partitions the gateway touched mismatch (-granted +used):\n%s", diff)
	}
}

// TestEventsAreInTheShapesLambdaDelivers decodes each event file into the
// type its function's handler takes, refusing unknown fields.
func TestEventsAreInTheShapesLambdaDelivers(t *testing.T) {
	evs, err := Events(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		t.Run(ev.Path, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(string(readEvent(t, ev))))
			dec.DisallowUnknownFields()
			var err error
			var body, method string
			if ev.Function == GatewayPath {
				var e events.APIGatewayV2HTTPRequest
				err = dec.Decode(&e)
				body, method = e.Body, e.RequestContext.HTTP.Method+" "+e.RawPath
				if want := "POST /mcp"; method != want || e.Headers["content-type"] != "application/json" ||
					e.Headers["accept"] != "application/json, text/event-stream" || e.Headers["mcp-protocol-version"] != SampleProtocolVersion {
					t.Errorf("request %s with headers %v, want %s with the MCP headers", method, e.Headers, want)
				}
				var rpc struct{ Method string }
				json.Unmarshal([]byte(body), &rpc)
				if rpc.Method != ev.Method {
					t.Errorf("body carries %q, want %q", rpc.Method, ev.Method)
				}
			} else if ev.Method == MethodSchedule {
				var e struct{}
				err = dec.Decode(&e)
			} else if ev.Method == MethodS3 {
				var e events.S3Event
				err = dec.Decode(&e)
				if len(e.Records) != 1 || e.Records[0].S3.Object.Key != ev.Name {
					t.Errorf("S3 event %+v, want one record of %s", e, ev.Name)
				}
			} else {
				var r invoke.Request
				err = dec.Decode(&r)
				want := tenant.Caller{Tenant: SampleTenant, Principal: SamplePrincipal}
				if r.Method != ev.Method || r.Caller.Tenant != want.Tenant || r.TraceID != SampleTraceID || r.RequestID != SampleRequestID {
					t.Errorf("envelope %+v, want method %s for tenant %s with the sample ids", r, ev.Method, want.Tenant)
				}
				if r.Method == invoke.MethodCallTool {
					tl, ok := catalog.Default().Tool(r.Tool)
					if !ok || tl.Function != ev.Function {
						t.Errorf("envelope calls %q, which is not a tool of %s", r.Tool, ev.Function)
					} else if !jsonEqual(r.Arguments, tl.Example) {
						t.Errorf("arguments %s, want the catalog example %s", r.Arguments, tl.Example)
					}
				}
			}
			if err != nil {
				t.Errorf("does not decode as the handler's input: %v", err)
			}
		})
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}

func TestEveryFunctionHasASampleEvent(t *testing.T) {
	evs, err := Events(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]int{}
	for _, ev := range evs {
		have[ev.Function]++
	}
	for _, f := range Functions(catalog.Default()) {
		if have[f.Path] == 0 {
			t.Errorf("function %s has no sample event", f.Path)
		}
	}
	if got, want := have[GatewayPath], 3; got != want {
		t.Errorf("gateway has %d events, want %d (initialize, tools/list, tools/call)", got, want)
	}
}
