package tenantcreds

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds/ststest"
)

const testRole = "arn:aws:iam::123456789012:role/switchboard-tenant"

var testGrant = Grant{Items: ReadWrite, Objects: Read}

func newProvider(t *testing.T, s *ststest.Server, opts Options) *Provider {
	t.Helper()
	if opts.RoleARN == "" {
		opts.RoleARN = testRole
	}
	if opts.Resources == (Resources{}) {
		opts.Resources = testResources
	}
	if opts.Grant.Items == NoAccess && opts.Grant.Objects == NoAccess {
		opts.Grant = testGrant
	}
	p, err := New(s.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func retrieve(t *testing.T, p *Provider, id string) aws.Credentials {
	t.Helper()
	c, err := p.Retrieve(NewContext(context.Background(), id))
	if err != nil {
		t.Fatalf("credentials of %s: %v", id, err)
	}
	return c
}

func TestProviderAssumesTheRoleWithTheTenantsSessionPolicy(t *testing.T) {
	tests := []struct {
		name      string
		duration  time.Duration
		seconds   string
		resources Resources
	}{
		{"the default duration is STS's minimum", 0, "900", testResources},
		{"a configured duration is sent", 2 * time.Hour, "7200", testResources},
		{"a bucket's customer-managed key is granted through S3", 0, "900", testKeyed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ststest.New(t)
			p := newProvider(t, s, Options{Duration: tt.duration, Resources: tt.resources})
			c := retrieve(t, p, "acme")
			if c.AccessKeyID != ststest.KeyOf("tenant-acme", 1) || c.SecretAccessKey != "secret-tenant-acme-1" || c.SessionToken != "token-tenant-acme-1" ||
				!c.CanExpire || c.AccountID != "123456789012" {
				t.Errorf("credentials %+v, want those STS issued for session tenant-acme", c)
			}
			policy, err := SessionPolicy("acme", tt.resources, testGrant)
			if err != nil {
				t.Fatal(err)
			}
			form := s.LastCall()
			if keyed := strings.Contains(form.Get("Policy"), `"kms:Decrypt"`); keyed != (tt.resources.KeyARN != "") {
				t.Errorf("the session policy grants the key: %v, want %v", keyed, tt.resources.KeyARN != "")
			}
			want := map[string]string{
				"RoleArn": testRole, "RoleSessionName": "tenant-acme", "DurationSeconds": tt.seconds,
				"Policy": policy.JSON(), "Tags.member.1.Key": "tenant", "Tags.member.1.Value": "acme",
			}
			got := map[string]string{}
			for k := range want {
				got[k] = form.Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("AssumeRole request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderKeepsCredentialsUntilShortlyBeforeTheyExpire(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		calls    int
	}{
		{"credentials valid past the refresh window are reused", RefreshBefore + time.Minute, 1},
		{"credentials inside the refresh window are replaced", RefreshBefore - time.Minute, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ststest.New(t)
			s.SetLifetime(tt.lifetime)
			p := newProvider(t, s, Options{})
			var keys []string
			for range 3 {
				keys = append(keys, retrieve(t, p, "acme").AccessKeyID)
			}
			if got := s.CallCount(); got != tt.calls {
				t.Errorf("%d AssumeRole calls for 3 retrievals, want %d (keys %q)", got, tt.calls, keys)
			}
			if got := keys[2]; got != ststest.KeyOf("tenant-acme", tt.calls) {
				t.Errorf("last key %q, want the newest STS issued", got)
			}
		})
	}
}

func TestProviderKeepsEachTenantsCredentialsApart(t *testing.T) {
	s := ststest.New(t)
	p := newProvider(t, s, Options{})
	for range 2 {
		for _, id := range []string{"acme", "globex", "acme-corp"} {
			c := retrieve(t, p, id)
			if want := ststest.KeyPrefix("tenant-" + id); !strings.HasPrefix(c.AccessKeyID, want) {
				t.Errorf("tenant %s got key %q, want one issued to its own session (%s...)", id, c.AccessKeyID, want)
			}
		}
	}
	if got := s.CallCount(); got != 3 {
		t.Errorf("%d AssumeRole calls for 3 tenants retrieved twice each, want 3", got)
	}
}

func TestProviderMakesOneCallForConcurrentRequestsOfATenant(t *testing.T) {
	s := ststest.New(t)
	gate := make(chan struct{})
	s.SetGate(gate)
	p := newProvider(t, s, Options{})
	const callers = 32
	var started, done sync.WaitGroup
	keys := make([]string, callers)
	for i := range callers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			id := []string{"acme", "globex"}[i%2]
			started.Done()
			c, err := p.Retrieve(NewContext(context.Background(), id))
			if err != nil {
				t.Error(err)
			}
			keys[i] = c.AccessKeyID
		}()
	}
	started.Wait()
	// Every caller is in Retrieve or about to be; the first call of each
	// tenant is held at the server meanwhile, so a second call would be seen.
	time.Sleep(100 * time.Millisecond)
	close(gate)
	done.Wait()
	if got := s.CallCount(); got != 2 {
		t.Errorf("%d AssumeRole calls for %d concurrent requests of 2 tenants, want 2", got, callers)
	}
	for i, k := range keys {
		if id := []string{"acme", "globex"}[i%2]; !strings.HasPrefix(k, ststest.KeyPrefix("tenant-"+id)) {
			t.Errorf("caller %d of tenant %s got key %q", i, id, k)
		}
	}
}

func TestProviderDropsTheLeastRecentlyUsedTenantPastItsBound(t *testing.T) {
	s := ststest.New(t)
	p := newProvider(t, s, Options{MaxTenants: 2})
	for _, id := range []string{"a1", "b2", "a1", "c3"} { // b2 is now the least recently used
		retrieve(t, p, id)
	}
	if got := s.CallCount(); got != 3 {
		t.Fatalf("%d calls, want 3", got)
	}
	retrieve(t, p, "a1")
	retrieve(t, p, "c3")
	if got := s.CallCount(); got != 3 {
		t.Errorf("%d calls after retrieving the two kept tenants, want still 3", got)
	}
	retrieve(t, p, "b2")
	if got := s.CallCount(); got != 4 {
		t.Errorf("%d calls after retrieving the dropped tenant, want 4", got)
	}
	if n := p.order.Len(); n != 2 || len(p.tenants) != 2 {
		t.Errorf("%d tenants kept (%d in the index), want 2", n, len(p.tenants))
	}
}

func TestProviderRefusalNamesTheTenantAndTheRole(t *testing.T) {
	for _, code := range []string{"AccessDenied", "ExpiredToken"} {
		t.Run(code, func(t *testing.T) {
			s := ststest.New(t)
			s.SetRefuse(code)
			p := newProvider(t, s, Options{})
			_, err := p.Retrieve(NewContext(context.Background(), "acme"))
			if err == nil {
				t.Fatal("Retrieve succeeded, want STS's refusal")
			}
			for _, want := range []string{"tenant acme", testRole, code} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			// A refusal is not kept: the next call asks STS again.
			s.SetRefuse("")
			if c := retrieve(t, p, "acme"); c.AccessKeyID != ststest.KeyOf("tenant-acme", 2) {
				t.Errorf("after the refusal got key %q, want a second call's", c.AccessKeyID)
			}
		})
	}
}

func TestProviderRefusesCallsWithoutAValidTenant(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"a context without a tenant", context.Background(), "no tenant"},
		{"a wildcard tenant", NewContext(context.Background(), "*"), "tenant id"},
		{"an empty tenant", NewContext(context.Background(), ""), "tenant id"},
		{"a tenant with a key separator", NewContext(context.Background(), "acme#x"), "tenant id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ststest.New(t)
			p := newProvider(t, s, Options{})
			_, err := p.Retrieve(tt.ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Retrieve = %v, want an error containing %q", err, tt.want)
			}
			if n := s.CallCount(); n != 0 {
				t.Errorf("%d AssumeRole calls, want none", n)
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	s := ststest.New(t)
	good := Options{RoleARN: testRole, Resources: testResources, Grant: testGrant}
	tests := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"a role ARN with a wildcard", func(o *Options) { o.RoleARN = "arn:aws:iam::123456789012:role/*" }, "role ARN"},
		{"a role ARN of a user", func(o *Options) { o.RoleARN = "arn:aws:iam::123456789012:user/u" }, "role ARN"},
		{"a role ARN with a region", func(o *Options) { o.RoleARN = "arn:aws:iam:eu-west-1:123456789012:role/r" }, "role ARN"},
		{"a missing role ARN", func(o *Options) { o.RoleARN = "" }, "role ARN"},
		{"a duration under STS's minimum", func(o *Options) { o.Duration = 10 * time.Minute }, "duration"},
		{"a duration over the longest session", func(o *Options) { o.Duration = 13 * time.Hour }, "duration"},
		{"a negative bound", func(o *Options) { o.MaxTenants = -1 }, "max tenants"},
		{"a bad table ARN", func(o *Options) { o.Resources.TableARN = "table" }, "table ARN"},
		{"no grant", func(o *Options) { o.Grant = Grant{} }, "no access"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.change(&o)
			if _, err := New(s.Config(), o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := New(aws.Config{}, good); err == nil {
		t.Error("New without credentials succeeded")
	}
	if _, err := New(s.Config(), good); err != nil {
		t.Errorf("New with good options: %v", err)
	}
}

func TestSessionNameFitsSTSPatternAndKeepsTenantsApart(t *testing.T) {
	long := strings.Repeat("a", 62)
	tests := []struct {
		id, want string
	}{
		{"acme", "tenant-acme"},
		{"acme-corp", "tenant-acme-corp"},
		{strings.Repeat("a", 57), "tenant-" + strings.Repeat("a", 57)},
	}
	for _, tt := range tests {
		if got := SessionName(tt.id); got != tt.want {
			t.Errorf("SessionName(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
	seen := map[string]string{}
	for _, id := range []string{long + "b", long + "c", strings.Repeat("z", 63), "a b", "a_b", "a\x00b", "é", strings.Repeat("é", 100)} {
		name := SessionName(id)
		if len(name) < 2 || len(name) > 64 {
			t.Errorf("SessionName(%q) = %q: %d characters, want 2-64", id, name, len(name))
		}
		for i := 0; i < len(name); i++ {
			if !isSessionByte(name[i]) {
				t.Errorf("SessionName(%q) = %q holds %q, outside [\\w+=,.@-]", id, name, name[i])
			}
		}
		if other, ok := seen[name]; ok {
			t.Errorf("tenants %q and %q share the session name %q", other, id, name)
		}
		seen[name] = id
	}
}

// TestProviderActsForTheCallersTenant checks the context lambdafn gives every
// call: without NewContext, the call's caller names the tenant.
func TestProviderActsForTheCallersTenant(t *testing.T) {
	s := ststest.New(t)
	p := newProvider(t, s, Options{})
	ctx := callcontext.NewContext(context.Background(), callcontext.Call{Caller: tenant.Caller{Tenant: "globex", Principal: "bob"}})
	c, err := p.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := ststest.KeyPrefix("tenant-globex"); !strings.HasPrefix(c.AccessKeyID, want) {
		t.Errorf("the caller's call got key %q, want one of its tenant's session (%s...)", c.AccessKeyID, want)
	}
	if id, _ := FromContext(NewContext(ctx, "acme")); id != "acme" {
		t.Errorf("NewContext over a call gave tenant %q, want acme", id)
	}
}
