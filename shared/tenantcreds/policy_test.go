package tenantcreds

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var update = flag.Bool("update", false, "rewrite the golden policies in testdata/")

var testResources = Resources{
	TableARN:  "arn:aws:dynamodb:eu-west-1:123456789012:table/switchboard-Table-1ABC",
	BucketARN: "arn:aws:s3:::switchboard-5f0c7c1e-0d7a-11ef-9a1b-0a1b2c3d4e5f",
}

// testShared is a partition outside every tenant's keys (the connectors'
// sync index).
const testShared = "_conn#sync"

// testKeyed are testResources with the bucket under a customer-managed key.
var testKeyed = Resources{TableARN: testResources.TableARN, BucketARN: testResources.BucketARN,
	KeyARN: "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"}

// golden compares p, indented, with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, p Policy) {
	t.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, []byte(p.JSON()), "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestSessionPoliciesMatchTheirGoldenFiles(t *testing.T) {
	tests := []struct {
		file      string
		resources Resources
		grant     Grant
	}{
		{"session-items-read.json", testResources, Grant{Items: Read}},
		{"session-items-read-put.json", testResources, Grant{Items: ReadPut}},
		{"session-items-read-write.json", testResources, Grant{Items: ReadWrite}},
		{"session-items-read-write-delete.json", testResources, Grant{Items: ReadWriteDelete}},
		{"session-objects-read.json", testResources, Grant{Objects: Read}},
		{"session-items-read-write-objects-read-write.json", testResources, Grant{Items: ReadWrite, Objects: ReadWrite}},
		{"session-all.json", testResources, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete}},
		// A customer-managed key: decrypt to read, generate data keys to
		// write, only through S3; items need no key.
		{"session-keyed-items-read.json", testKeyed, Grant{Items: Read}},
		{"session-keyed-objects-read.json", testKeyed, Grant{Objects: Read}},
		{"session-keyed-all.json", testKeyed, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete}},
		// A shared partition: blind puts, and deletes for a function that
		// deletes; never a read.
		{"session-shared-items-read-put.json", testResources, Grant{Items: ReadPut, Shared: []string{testShared}}},
		{"session-shared-items-read-write-delete.json", testResources, Grant{Items: ReadWriteDelete, Shared: []string{testShared}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := SessionPolicy("acme", tt.resources, tt.grant)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, p)
			checkScopedTo(t, p, "acme", tt.resources)
		})
	}
}

func TestRolePoliciesMatchTheirGoldenFiles(t *testing.T) {
	golden(t, "role-policy.json", RolePolicy(testResources))
	golden(t, "role-boundary.json", Boundary(testResources))
	golden(t, "role-keyed-policy.json", RolePolicy(testKeyed))
	golden(t, "role-keyed-boundary.json", Boundary(testKeyed))
	golden(t, "role-trust.json", TrustPolicy("arn:aws:iam::123456789012:root",
		[]string{"arn:aws:iam::123456789012:role/switchboard-MemoryAddMessageRole-*", "arn:aws:iam::123456789012:role/switchboard-VectorIngestRole-*"}))
}

// checkScopedTo checks that every statement of p allows only what tenant id
// owns: the table under a leading-key condition naming t#<id>#*, objects
// under tenants/<id>/, and listing only with that prefix.
func checkScopedTo(t *testing.T, p Policy, id string, r Resources) {
	t.Helper()
	if p.Version != "2012-10-17" {
		t.Errorf("version %q, want 2012-10-17 (policy variables and conditions need it)", p.Version)
	}
	if len(p.Statement) == 0 {
		t.Fatal("policy has no statements")
	}
	for _, s := range p.Statement {
		if s.Effect != "Allow" || s.Principal != nil || len(s.Resource) != 1 || len(s.Action) == 0 {
			t.Errorf("statement %s: effect %q, principal %v, resources %v, actions %v; want Allow, none, one, some", s.Sid, s.Effect, s.Principal, s.Resource, s.Action)
			continue
		}
		var want map[string]map[string][]string
		var service string
		switch res := s.Resource[0]; {
		case s.Sid == "SharedWrites" && res == r.TableARN:
			service = "dynamodb:"
			want = map[string]map[string][]string{"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": {testShared}}}
			for _, a := range s.Action {
				if a != "dynamodb:PutItem" && a != "dynamodb:DeleteItem" {
					t.Errorf("statement %s allows %s on the shared partitions, want blind writes only", s.Sid, a)
				}
			}
		case res == r.TableARN:
			service = "dynamodb:"
			want = map[string]map[string][]string{
				"ForAllValues:StringLike": {"dynamodb:LeadingKeys": {"t#" + id + "#*"}},
				"Null":                    {"dynamodb:LeadingKeys": {"false"}},
			}
		case res == r.BucketARN:
			service = "s3:"
			want = map[string]map[string][]string{"StringLike": {"s3:prefix": {"tenants/" + id + "/*"}}}
			if !slices.Equal(s.Action, []string{"s3:ListBucket"}) {
				t.Errorf("statement %s allows %v on the bucket, want only s3:ListBucket", s.Sid, s.Action)
			}
		case res == r.BucketARN+"/tenants/"+id+"/*":
			service = "s3:"
		case res == r.KeyARN:
			service = "kms:"
			want = map[string]map[string][]string{"StringLike": {"kms:ViaService": {"s3.*.amazonaws.com"}}}
		default:
			t.Errorf("statement %s names resource %q, which is not the tenant's", s.Sid, res)
		}
		if diff := cmp.Diff(want, s.Condition); diff != "" {
			t.Errorf("statement %s condition mismatch (-want +got):\n%s", s.Sid, diff)
		}
		for _, a := range s.Action {
			if !strings.HasPrefix(a, service) || strings.ContainsAny(a, "*?") || strings.Contains(a, "Scan") || strings.Contains(a, "Batch") {
				t.Errorf("statement %s allows %q; want named %s actions addressed by key", s.Sid, a, service)
			}
		}
	}
}

func TestSessionPolicyPatternsMatchOnlyTheTenantsKeys(t *testing.T) {
	p, err := SessionPolicy("acme", testResources, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete})
	if err != nil {
		t.Fatal(err)
	}
	var items, objects, prefixes []string
	for _, s := range p.Statement {
		items = append(items, s.Condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]...)
		prefixes = append(prefixes, s.Condition["StringLike"]["s3:prefix"]...)
		if s.Sid == "TenantObjects" {
			objects = append(objects, s.Resource...)
		}
	}
	tests := []struct {
		name     string
		patterns []string
		value    string
		match    bool
	}{
		{"the tenant's conversation partition", items, "t#acme#conv#c1", true},
		{"the tenant's index partition", items, "t#acme#convs", true},
		{"a tenant whose id extends this one", items, "t#acme-corp#conv#c1", false},
		{"a tenant whose id this one extends", items, "t#acm#conv#c1", false},
		{"the api key partition", items, "_apikeys", false},
		{"another tenant's partition", items, "t#other#vs", false},
		{"the tenant's shard", objects, testResources.BucketARN + "/tenants/acme/vector/kb/shards/0000000000000000.seg", true},
		{"the tenant's resume", objects, testResources.BucketARN + "/tenants/acme/resumes/r1/canonical.md", true},
		{"a tenant's object whose id extends this one", objects, testResources.BucketARN + "/tenants/acme-corp/resumes/r1/canonical.md", false},
		{"an object outside tenants/", objects, testResources.BucketARN + "/acme/x", false},
		{"an object of another bucket", objects, "arn:aws:s3:::other/tenants/acme/x", false},
		{"a listing of the tenant's shards", prefixes, "tenants/acme/vector/kb/shards/", true},
		{"a listing of the tenant's folder", prefixes, "tenants/acme/", true},
		{"a listing of every tenant", prefixes, "tenants/", false},
		{"a listing of the whole bucket", prefixes, "", false},
		{"a listing of a tenant whose id extends this one", prefixes, "tenants/acme-corp/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.patterns) == 0 {
				t.Fatal("no patterns found in the policy")
			}
			got := slices.ContainsFunc(tt.patterns, func(p string) bool { return stringLike(p, tt.value) })
			if got != tt.match {
				t.Errorf("patterns %q match %q: %v, want %v", tt.patterns, tt.value, got, tt.match)
			}
		})
	}
}

// stringLike reports whether value matches pattern as IAM's StringLike and
// resource ARNs match: '*' any run of characters, '/' included; '?' one.
func stringLike(pattern, value string) bool {
	if pattern == "" {
		return value == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(value); i++ {
			if stringLike(pattern[1:], value[i:]) {
				return true
			}
		}
		return false
	case '?':
		return value != "" && stringLike(pattern[1:], value[1:])
	}
	return value != "" && value[0] == pattern[0] && stringLike(pattern[1:], value[1:])
}

func TestSessionPolicyRefusesTenantIdsThatWouldWidenIt(t *testing.T) {
	hostile := []string{
		"*", "a*", "acme*", "acme#*", "acme/*", "?", "acm?", "${aws:username}", "$", "{", "acme}", "a b",
		"acme/../other", "../other", "acme#other", "ACME", "", "-acme", "acme\x00", "acme\n", "acmé",
		strings.Repeat("a", 64),
	}
	for _, id := range hostile {
		p, err := SessionPolicy(id, testResources, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete})
		if err == nil {
			t.Errorf("SessionPolicy(%q) = %s, want an error", id, p.JSON())
		}
	}
}

// FuzzSessionPolicy checks that whatever the tenant id, the policy is
// refused or names that tenant only, with no wildcard but the three that
// end its patterns.
func FuzzSessionPolicy(f *testing.F) {
	for _, s := range []string{"acme", "a", "acme-corp", "*", "a*b", "a?b", "${x}", "a{b", "t#x#", "x/../y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, err := SessionPolicy(id, testResources, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete})
		if err != nil {
			return
		}
		if tenant.Validate(id) != nil {
			t.Fatalf("SessionPolicy accepted the invalid tenant id %q", id)
		}
		checkScopedTo(t, p, id, testResources)
		if doc := p.JSON(); strings.Count(doc, "*") != 3 || strings.ContainsAny(doc, "?$") {
			t.Errorf("policy for %q has wildcards or variables beyond its three patterns: %s", id, doc)
		}
	})
}

func TestSessionPolicyOfTheLongestTenantAndARNsFitsSTSLimit(t *testing.T) {
	r := Resources{
		// DynamoDB table names reach 255 characters, S3 bucket names 63.
		TableARN:  "arn:aws-iso-b:dynamodb:us-isob-east-1:123456789012:table/" + strings.Repeat("T", 255),
		BucketARN: "arn:aws-iso-b:s3:::" + strings.Repeat("b", 63),
		KeyARN:    "arn:aws-iso-b:kms:us-isob-east-1:123456789012:key/mrk-" + strings.Repeat("0", 32),
	}
	id := strings.Repeat("z", 63)
	if err := tenant.Validate(id); err != nil {
		t.Fatalf("the test's tenant id is not the longest valid one: %v", err)
	}
	p, err := SessionPolicy(id, r, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete, Shared: []string{testShared}})
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.JSON())
	t.Logf("the largest session policy is %d bytes of STS's %d", n, MaxSessionPolicyBytes)
	if n > MaxSessionPolicyBytes {
		t.Errorf("policy is %d bytes, more than %d", n, MaxSessionPolicyBytes)
	}
	checkScopedTo(t, p, id, r)
}

func TestSessionPolicyRefusesBadResourcesAndGrants(t *testing.T) {
	all := Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete}
	tests := []struct {
		name  string
		r     Resources
		grant Grant
		want  string
	}{
		{"a table ARN with a wildcard", Resources{TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/*", BucketARN: testResources.BucketARN}, all, "table ARN"},
		{"a table ARN with a variable", Resources{TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/${aws:username}", BucketARN: testResources.BucketARN}, all, "table ARN"},
		{"a table ARN without a region", Resources{TableARN: "arn:aws:dynamodb::123456789012:table/t", BucketARN: testResources.BucketARN}, all, "must name a region"},
		{"a table ARN of another service", Resources{TableARN: "arn:aws:s3:::t", BucketARN: testResources.BucketARN}, all, "table ARN"},
		{"a table ARN naming an index", Resources{TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:index/t", BucketARN: testResources.BucketARN}, all, "table/<name>"},
		{"a missing table ARN", Resources{BucketARN: testResources.BucketARN}, all, "table ARN"},
		{"a bucket ARN with a wildcard", Resources{TableARN: testResources.TableARN, BucketARN: "arn:aws:s3:::*"}, all, "bucket ARN"},
		{"a bucket ARN naming objects", Resources{TableARN: testResources.TableARN, BucketARN: "arn:aws:s3:::b/tenants"}, Grant{Objects: Read}, "bucket ARN"},
		{"a bucket ARN with a question mark", Resources{TableARN: testResources.TableARN, BucketARN: "arn:aws:s3:::b?"}, all, "bucket ARN"},
		{"a table name too long for STS's limit", Resources{TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/" + strings.Repeat("t", 1800), BucketARN: testResources.BucketARN}, all, "more than STS accepts"},
		{"a key ARN with a wildcard", Resources{BucketARN: testResources.BucketARN, KeyARN: "arn:aws:kms:eu-west-1:123456789012:key/*"}, Grant{Objects: Read}, "key ARN"},
		{"a key's alias", Resources{BucketARN: testResources.BucketARN, KeyARN: "arn:aws:kms:eu-west-1:123456789012:alias/s"}, Grant{Objects: Read}, "key/<name>"},
		{"a key ARN of another service", Resources{BucketARN: testResources.BucketARN, KeyARN: testResources.BucketARN}, Grant{Objects: Read}, "key ARN"},
		{"no access at all", testResources, Grant{}, "grants no access"},
		{"a shared partition with a wildcard", testResources, Grant{Items: ReadWrite, Shared: []string{"_conn*"}}, "grant shared"},
		{"a tenant's partition as a shared one", testResources, Grant{Items: ReadWrite, Shared: []string{"t#globex#conn"}}, "grant shared"},
		{"an empty shared partition", testResources, Grant{Items: ReadWrite, Shared: []string{""}}, "grant shared"},
		{"a shared partition for a reader", testResources, Grant{Items: Read, Shared: []string{testShared}}, "grant shared"},
		{"read-put on objects", testResources, Grant{Objects: ReadPut}, "item access only"},
		{"an unknown level", testResources, Grant{Items: ReadWriteDelete + 1}, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SessionPolicy("acme", tt.r, tt.grant)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SessionPolicy = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestSessionPolicyNeedsOnlyTheARNsItsGrantUses(t *testing.T) {
	if _, err := SessionPolicy("acme", Resources{TableARN: testResources.TableARN}, Grant{Items: Read}); err != nil {
		t.Errorf("items only, no bucket: %v", err)
	}
	if _, err := SessionPolicy("acme", Resources{BucketARN: testResources.BucketARN}, Grant{Objects: Read}); err != nil {
		t.Errorf("objects only, no table: %v", err)
	}
}

func TestBoundaryCoversEverySessionPolicyAndLeavesOutTheRest(t *testing.T) {
	b := Boundary(testKeyed, testShared)
	p, err := SessionPolicy("acme", testKeyed, Grant{Items: ReadWriteDelete, Objects: ReadWriteDelete, Shared: []string{testShared}})
	if err != nil {
		t.Fatal(err)
	}
	// Every session statement has a boundary statement with the same Sid
	// whose actions include its actions and whose patterns match its
	// patterns' values.
	for _, s := range p.Statement {
		i := slices.IndexFunc(b.Statement, func(bs Statement) bool { return bs.Sid == s.Sid })
		if i < 0 {
			t.Errorf("boundary has no statement %s", s.Sid)
			continue
		}
		bs := b.Statement[i]
		for _, a := range s.Action {
			if !slices.Contains(bs.Action, a) {
				t.Errorf("boundary statement %s lacks %s", s.Sid, a)
			}
		}
		if !stringLike(bs.Resource[0], s.Resource[0]) {
			t.Errorf("boundary statement %s resource %q does not cover %q", s.Sid, bs.Resource[0], s.Resource[0])
		}
	}
	items := b.Statement[0].Condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
	if slices.ContainsFunc(items, func(p string) bool { return stringLike(p, "_apikeys") }) {
		t.Errorf("boundary's leading keys %q reach the api key partition", items)
	}
	objects := b.Statement[1].Resource[0]
	if stringLike(objects, testResources.BucketARN+"/other/x") {
		t.Errorf("boundary's objects %q reach outside tenants/", objects)
	}
}
