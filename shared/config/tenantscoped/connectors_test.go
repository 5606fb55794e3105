package tenantscoped_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds/ststest"
)

// tableRequest is one DynamoDB request the recorder passed on: its action,
// who signed it, and the partition keys it names, each read or written.
type tableRequest struct {
	action, key, token string
	reads, writes      []string
	writeActions       []string // PutItem, DeleteItem or ConditionCheckItem, per written key
	readsAnyPartition  bool
}

// recorder is a reverse proxy in front of DynamoDB Local that records each
// request's signer (access key and session token) and the partition keys it
// names.
type recorder struct {
	mu   sync.Mutex
	reqs []tableRequest
}

func (rec *recorder) proxy(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{DisableCompression: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
		key, _, _ := strings.Cut(cred, "/")
		req := tableRequest{action: strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), key: key, token: r.Header.Get("X-Amz-Security-Token")}
		req.parse(t, body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, req)
		rec.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (rec *recorder) take() []tableRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.reqs
	rec.reqs = nil
	return out
}

// parse reads the partition keys of a DynamoDB request, as IAM's
// dynamodb:LeadingKeys sees them: the key of GetItem, PutItem and DeleteItem,
// each item's of TransactWriteItems, the key condition's value of Query.
func (req *tableRequest) parse(t *testing.T, body []byte) {
	type key map[string]struct{ S string }
	var in struct {
		Key, Item                 key
		ExpressionAttributeValues key
		TransactItems             []map[string]struct {
			Key, Item key
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Errorf("a %s request that is not JSON: %v", req.action, err)
		return
	}
	switch req.action {
	case "GetItem":
		req.reads = append(req.reads, in.Key[store.AttrPK].S)
	case "Query":
		req.reads = append(req.reads, in.ExpressionAttributeValues[":pk"].S)
		req.readsAnyPartition = in.ExpressionAttributeValues[":pk"].S == ""
	case "PutItem":
		req.writes, req.writeActions = append(req.writes, in.Item[store.AttrPK].S), append(req.writeActions, "PutItem")
	case "DeleteItem":
		req.writes, req.writeActions = append(req.writes, in.Key[store.AttrPK].S), append(req.writeActions, "DeleteItem")
	case "TransactWriteItems":
		for _, ti := range in.TransactItems {
			for op, v := range ti {
				pk := v.Key[store.AttrPK].S
				if op == "Put" {
					pk = v.Item[store.AttrPK].S
				}
				req.writes, req.writeActions = append(req.writes, pk), append(req.writeActions, map[string]string{"Put": "PutItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem", "Update": "UpdateItem"}[op])
			}
		}
	default:
		t.Errorf("an unexpected %s request", req.action)
	}
}

// allowedAs reports whether tenant id's session policy of grant lets req
// through, by its leading keys as IAM evaluates them: the tenant's own
// partitions for every action, the shared ones for blind writes only.
func (req tableRequest) allowedAs(id string, shared []string) bool {
	if req.readsAnyPartition {
		return false
	}
	for _, pk := range req.reads {
		if !strings.HasPrefix(pk, tenant.Key(id)) {
			return false
		}
	}
	for i, pk := range req.writes {
		own := strings.HasPrefix(pk, tenant.Key(id))
		blind := slices.Contains(shared, pk) && (req.writeActions[i] == "PutItem" || req.writeActions[i] == "DeleteItem")
		if !own && !blind {
			return false
		}
	}
	return true
}

// TestTheConnectorFunctionsActAsTheirTenantUnderIsolation opens connector
// functions as lambdafn.Start does with the tenant role configured, against
// the STS stand-in and DynamoDB Local behind a recorder. Creating a
// connector signs every table request, the sync index's entry written in
// the same transaction included, with the caller's tenant's session, within
// what that session's policy allows by leading keys; the scheduled sync
// reads the index with the function's own key and syncs each connector as
// its tenant. DynamoDB Local checks no IAM: the policy is applied here to
// the requests the functions made, and only AWS can show that IAM applies
// it the same way.
func TestTheConnectorFunctionsActAsTheirTenantUnderIsolation(t *testing.T) {
	table, sts, rec := standIns(t)
	// An upstream that refuses everything: the scheduled sync fails fast and records it.
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) }))
	t.Cleanup(upstream.Close)
	keyFile := config.FilePrefix + filepath.Join(t.TempDir(), "connector-keys.json")
	open := func(path string) (lambdafn.Deps, catalog.Function) {
		t.Helper()
		cfg := config.FromEnv(env{
			config.EnvTable: table, config.EnvTenantRoleARN: "arn:aws:iam::123456789012:role/switchboard-tenant",
			config.EnvTableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/" + table, config.EnvConnectorKey: keyFile,
			config.EnvConnectorAllowedHosts: "127.0.0.1", config.EnvConnectorCacheTTL: "1s",
		}.get)
		cfg.ConnectorHTTP = true
		fn, ok := catalog.Default().Function(path)
		if !ok {
			t.Fatalf("the catalog has no %s", path)
		}
		p, err := tenantscoped.Open(context.Background(), &cfg, fn)
		if err != nil || p == nil {
			t.Fatalf("Open(%s) = %v, %v; want a provider", path, p, err)
		}
		cfg.ScopeStorage(p)
		d, closeFn, err := lambdafn.Open(context.Background(), &cfg, lambdafn.Openers{Connectors: connectors.Open}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeFn() })
		return d, fn
	}
	ctx := context.Background()
	d, createFn := open(connectorfn.Create.Path)
	create := connectorfn.Create.Build(d)
	shared := tenantscoped.Shared(createFn)
	tenants := []string{"acme", "globex"}
	for _, id := range tenants {
		args, _ := json.Marshal(map[string]any{"name": "docs", "base_url": upstream.URL + "/mcp", "transport": "streamable_http"})
		req, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: "connector_create", Arguments: args,
			Caller: tenant.Caller{Tenant: id, Principal: "alice"}})
		out, err := create.Invoke(ctx, req)
		if err != nil || strings.Contains(string(out), `"isError":true`) {
			t.Fatalf("connector_create as %s: %s, %v", id, out, err)
		}
		wroteIndex := false
		for _, r := range rec.take() {
			if !strings.HasPrefix(r.key, ststest.KeyPrefix(tenantcreds.SessionName(id))) {
				t.Errorf("connector_create as %s: %s signed with %s, want %s's session", id, r.action, r.key, id)
			}
			if !r.allowedAs(id, shared) {
				t.Errorf("connector_create as %s: %s of %v / %v is outside %s's session policy", id, r.action, r.reads, r.writes, id)
			}
			wroteIndex = wroteIndex || slices.Contains(r.writes, connector.SyncIndexPartition)
		}
		if !wroteIndex {
			t.Errorf("connector_create as %s wrote no entry of the sync index", id)
		}
	}
	if policy := sts.LastCall().Get("Policy"); !strings.Contains(policy, `"SharedWrites"`) || !strings.Contains(policy, connector.SyncIndexPartition) {
		t.Errorf("connector_create's session policy %s grants no blind writes to the sync index", policy)
	}

	time.Sleep(1100 * time.Millisecond) // past the cache TTL: both connectors are due
	sd, _ := open(connectorfn.ScheduledSync.Path)
	sweep := connectorfn.ScheduledSync.Build(sd)
	deadline, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := sweep.Invoke(deadline, []byte(`{}`))
	if err != nil {
		t.Fatalf("the scheduled sync: %v", err)
	}
	var got connector.SyncDueOutput
	if err := json.Unmarshal(out, &got); err != nil || got.Synced+got.Failed != len(tenants) {
		t.Fatalf("the scheduled sync answered %s (%v), want both connectors tried", out, err)
	}
	asTenant := map[string]int{}
	for _, r := range rec.take() {
		switch {
		case r.key == ststest.FunctionCreds.AccessKeyID:
			// As itself: the sync index alone, read or cleaned.
			for _, pk := range append(slices.Clone(r.reads), r.writes...) {
				if pk != connector.SyncIndexPartition {
					t.Errorf("the scheduled sync's own key made a %s of %s", r.action, pk)
				}
			}
		default:
			id := ""
			for _, c := range tenants {
				if strings.HasPrefix(r.key, ststest.KeyPrefix(tenantcreds.SessionName(c))) {
					id = c
				}
			}
			if id == "" || !r.allowedAs(id, shared) {
				t.Errorf("the scheduled sync's %s of %v / %v signed with %s is outside the session policy of any tenant", r.action, r.reads, r.writes, r.key)
			}
			asTenant[id]++
		}
	}
	for _, id := range tenants {
		if asTenant[id] == 0 {
			t.Errorf("the scheduled sync made no table request as %s", id)
		}
	}
}
