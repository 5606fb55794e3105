package tenantscoped_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
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

// useSTS points the AWS clients at the STS stand-in and, if dynamo is set,
// DynamoDB at it, signing as the function's own credentials, with nothing
// from the machine's AWS configuration.
func useSTS(t *testing.T, sts *ststest.Server, dynamo string) {
	t.Helper()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_STS": sts.URL, "AWS_ENDPOINT_URL_DYNAMODB": dynamo, "AWS_REGION": ststest.Region,
		"AWS_ACCESS_KEY_ID": ststest.FunctionCreds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": ststest.FunctionCreds.SecretAccessKey,
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
}

// standIns starts the STS stand-in and a recorder in front of DynamoDB
// Local, with a fresh table, and points the AWS clients at them; it skips
// the test without DynamoDB Local.
func standIns(t *testing.T) (table string, sts *ststest.Server, rec *recorder) {
	t.Helper()
	ddb := os.Getenv(storetest.DynamoDBEnv)
	if ddb == "" {
		t.Skipf("needs DynamoDB Local: set %s (scripts/test does)", storetest.DynamoDBEnv)
	}
	table, sts, rec = storetest.DynamoTable(t), ststest.New(t), &recorder{}
	useSTS(t, sts, rec.proxy(t, ddb))
	return table, sts, rec
}

// TestAToolFunctionSignsItsTableCallsAsTheCallersTenant opens a tool
// function (memory_get_or_create) as lambdafn.Start does, with the tenant role
// configured, against the STS stand-in and DynamoDB Local: every table call
// of a call for acme is signed with acme's session, of globex with globex's,
// and the function assumes the role once per tenant. DynamoDB Local checks no
// IAM, so what the session policies refuse is proven only on AWS.
func TestAToolFunctionSignsItsTableCallsAsTheCallersTenant(t *testing.T) {
	table, sts, seen := standIns(t)
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
		reqs := seen.take()
		if len(reqs) == 0 {
			t.Fatalf("a call as %s made no table call", id)
		}
		for _, r := range reqs {
			if want := ststest.KeyPrefix(tenantcreds.SessionName(id)); !strings.HasPrefix(r.key, want) || !strings.HasPrefix(r.token, "token-tenant-"+id+"-") {
				t.Errorf("a table call of tenant %s was signed as %q %q, want its own session's key and token", id, r.key, r.token)
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
	if reqs := seen.take(); len(reqs) != 1 || reqs[0].key != ststest.FunctionCreds.AccessKeyID || reqs[0].token != "" {
		t.Errorf("the override read was signed as %+v, want the function's own key", reqs)
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
			useSTS(t, sts, "")
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
