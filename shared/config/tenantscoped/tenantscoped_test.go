package tenantscoped_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds/ststest"
)

// signers is a reverse proxy in front of DynamoDB Local that records the
// access key and session token of each request it passes on.
type signers struct {
	mu   sync.Mutex
	seen []string // "<access key> <session token>"
}

func (s *signers) proxy(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	// Pass bodies as sent: a gzip the proxy undid would fail the SDK's CRC check.
	rp.Transport = &http.Transport{DisableCompression: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
		key, _, _ := strings.Cut(cred, "/")
		s.mu.Lock()
		s.seen = append(s.seen, key+" "+r.Header.Get("X-Amz-Security-Token"))
		s.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (s *signers) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// TestAToolFunctionSignsItsTableCallsAsTheCallersTenant opens a tool
// function (memory_get_or_create) as lambdafn.Start does, with the tenant role
// configured, against the STS stand-in and DynamoDB Local: every table call
// of a call for acme is signed with acme's session, of globex with globex's,
// and the function assumes the role once per tenant. DynamoDB Local checks no
// IAM, so what the session policies refuse is proven only on AWS.
func TestAToolFunctionSignsItsTableCallsAsTheCallersTenant(t *testing.T) {
	ddb := os.Getenv(storetest.DynamoDBEnv)
	if ddb == "" {
		t.Skipf("needs DynamoDB Local: set %s (scripts/test does)", storetest.DynamoDBEnv)
	}
	table := storetest.DynamoTable(t)
	sts := ststest.New(t)
	seen := &signers{}
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_STS": sts.URL, "AWS_ENDPOINT_URL_DYNAMODB": seen.proxy(t, ddb), "AWS_REGION": ststest.Region,
		"AWS_ACCESS_KEY_ID": ststest.FunctionCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": ststest.FunctionCreds.SecretAccessKey,
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	cfg := config.FromEnv(env{
		config.EnvTable: table, config.EnvTenantRoleARN: "arn:aws:iam::123456789012:role/switchboard-tenant",
		config.EnvTableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/" + table,
	}.get)
	ctx := context.Background()
	fn, _ := catalog.Default().Function(memoryfn.GetOrCreate.Path)
	p, err := tenantscoped.Open(ctx, &cfg, fn)
	if err != nil || p == nil {
		t.Fatalf("Open = %v, %v; want a provider", p, err)
	}
	cfg.ScopeStorage(p)
	d, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	h := memoryfn.GetOrCreate.Build(d)
	tool, _ := catalog.Default().Tool("memory_get_or_create")
	for _, id := range []string{"acme", "globex", "acme"} {
		req, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: tool.Example,
			Caller: tenant.Caller{Tenant: id, Principal: "alice"}})
		out, err := h.Invoke(ctx, req)
		if err != nil || strings.Contains(string(out), `"isError":true`) {
			t.Fatalf("call as %s: %s, %v", id, out, err)
		}
		sigs := seen.take()
		if len(sigs) == 0 {
			t.Fatalf("a call as %s made no table call", id)
		}
		for _, sig := range sigs {
			if want := ststest.KeyPrefix(tenantcreds.SessionName(id)); !strings.HasPrefix(sig, want) || !strings.Contains(sig, " token-tenant-"+id+"-") {
				t.Errorf("a table call of tenant %s was signed as %q, want its own session's key and token", id, sig)
			}
		}
	}
	// The operators' overrides, outside every tenant's keys, are read with
	// the function's own credentials.
	if d.OwnTable == nil {
		t.Fatal("no table client of the function's own")
	}
	if _, err := d.OwnTable.Get(ctx, "_limits", "quota#acme"); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if sigs := seen.take(); len(sigs) != 1 || !strings.HasPrefix(sigs[0], ststest.FunctionCreds.AccessKeyID+" ") {
		t.Errorf("the override read was signed as %q, want the function's own key", sigs)
	}
	if got := sts.CallCount(); got != 2 {
		t.Errorf("%d AssumeRole calls for two tenants, want 2", got)
	}
	// memory_get_or_create reads and writes but never deletes: its
	// catalog entry does not say Deletes, so neither does the session.
	if policy := sts.LastCall().Get("Policy"); !strings.Contains(policy, `"t#globex#*"`) || !strings.Contains(policy, "dynamodb:PutItem") ||
		strings.Contains(policy, "dynamodb:DeleteItem") != fn.Deletes {
		t.Errorf("globex's session policy %s: want its items only, with the catalog's read-write, DeleteItem only if the function deletes (%v)", policy, fn.Deletes)
	}
}

// TestOpenWithoutARoleKeepsTheFunctionsCredentials: no tenant role, no provider.
func TestOpenWithoutARoleKeepsTheFunctionsCredentials(t *testing.T) {
	cfg := config.FromEnv(env{config.EnvTable: "t"}.get)
	if p, err := tenantscoped.Open(context.Background(), &cfg, catalog.Function{Table: catalog.ReadWrite}); p != nil || err != nil {
		t.Errorf("Open = %v, %v; want nil, nil", p, err)
	}
}

type env map[string]string

func (e env) get(k string) string { return e[k] }

// TestTheSessionPolicyGrantsTheBucketsKeyOnlyToFunctionsWithObjects: with a
// customer-managed key on the bucket (KmsKeyArn), the AssumeRole a function
// with blob access sends grants the key's use through S3; a function without
// objects gets no key, whatever the configuration says.
func TestTheSessionPolicyGrantsTheBucketsKeyOnlyToFunctionsWithObjects(t *testing.T) {
	const key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, tc := range []struct {
		name, path string
		objects    bool
	}{
		{"an ingesting function may decrypt and generate data keys", "vector/document_ingest", true},
		{"a memory function gets no key", memoryfn.GetOrCreate.Path, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := ststest.New(t)
			for k, v := range map[string]string{
				"AWS_ENDPOINT_URL_STS": sts.URL, "AWS_REGION": ststest.Region,
				"AWS_ACCESS_KEY_ID": ststest.FunctionCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": ststest.FunctionCreds.SecretAccessKey,
				"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
			} {
				t.Setenv(k, v)
			}
			cfg := config.FromEnv(env{
				config.EnvTable: "t", config.EnvTenantRoleARN: "arn:aws:iam::123456789012:role/switchboard-tenant",
				config.EnvTableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/t", config.EnvBucket: "b",
				config.EnvBucketARN: "arn:aws:s3:::b", config.EnvBucketKeyARN: key,
			}.get)
			fn, ok := catalog.Default().Function(tc.path)
			if !ok || (fn.Blobs != catalog.NoAccess) != tc.objects {
				t.Fatalf("the catalog's %s has blob access %v, want objects %v", tc.path, fn.Blobs, tc.objects)
			}
			p, err := tenantscoped.Open(context.Background(), &cfg, fn)
			if err != nil || p == nil {
				t.Fatalf("Open = %v, %v; want a provider", p, err)
			}
			if _, err := p.Retrieve(tenantcreds.NewContext(context.Background(), "acme")); err != nil {
				t.Fatal(err)
			}
			var policy tenantcreds.Policy
			if err := json.Unmarshal([]byte(sts.LastCall().Get("Policy")), &policy); err != nil {
				t.Fatal(err)
			}
			var keyActions []string
			for _, st := range policy.Statement {
				if len(st.Resource) == 1 && st.Resource[0] == key {
					keyActions = st.Action
				}
			}
			want := []string(nil)
			if tc.objects {
				want = []string{"kms:Decrypt", "kms:GenerateDataKey"}
			}
			if diff := cmp.Diff(want, keyActions); diff != "" {
				t.Errorf("the session's use of the key mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
