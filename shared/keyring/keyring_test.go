package keyring_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/config/secrets/ssmtest"
	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/keyring"
)

const (
	stackID = "arn:aws:cloudformation:us-east-1:123456789012:stack/sb/00000000-0000-4000-8000-000000000000"
	name    = "/switchboard/sb/request-state-keys"
)

// cloudFormation is the receiving end of the pre-signed S3 URL a custom
// resource answers on: it records each answer's method, content type and
// body.
type cloudFormation struct {
	*httptest.Server
	mu      sync.Mutex
	answers []answer
}

type answer struct {
	Method, ContentType string
	Body                cfn.Response
}

func newCloudFormation(t *testing.T) *cloudFormation {
	c := &cloudFormation{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var resp cfn.Response
		if err := json.Unmarshal(b, &resp); err != nil {
			t.Errorf("the answer is not JSON: %s", b)
		}
		c.mu.Lock()
		c.answers = append(c.answers, answer{r.Method, r.Header.Get("Content-Type"), resp})
		c.mu.Unlock()
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *cloudFormation) last(t *testing.T) cfn.Response {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) == 0 {
		t.Fatal("no answer reached CloudFormation")
	}
	a := c.answers[len(c.answers)-1]
	if a.Method != http.MethodPut || a.ContentType != "" {
		t.Errorf("answered with %s and Content-Type %q, want PUT and none (the URL is signed without one)", a.Method, a.ContentType)
	}
	return a.Body
}

// setup returns the resource's handler wrapped as its function runs it,
// with SSM's stand-in and the URL the answers go to.
func setup(t *testing.T) (func(cfn.Event) cfn.Response, *ssmtest.Server, *config.Config) {
	ps := ssmtest.New(t)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SSM": ps.URL, "AWS_REGION": ssmtest.Region, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	cfg := config.FromEnv(os.Getenv)
	awsCfg, err := cfg.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cf := newCloudFormation(t)
	fn := cfn.LambdaWrap(keyring.Resource{AWS: awsCfg}.Handle)
	n := 0
	return func(e cfn.Event) cfn.Response {
		t.Helper()
		n++
		e.ResponseURL, e.StackID, e.LogicalResourceID, e.ResourceType = cf.URL+"/signed?X-Amz-Signature=x", stackID, "RequestStateKeysParameter", keyring.ResourceType
		e.RequestID = "req-" + strconv.Itoa(n)
		if _, err := fn(context.Background(), e); err != nil {
			t.Fatalf("sending the answer: %v", err)
		}
		r := cf.last(t)
		if r.RequestID != e.RequestID || r.StackID != stackID || r.LogicalResourceID != "RequestStateKeysParameter" {
			t.Errorf("the answer names request %q, stack %q, resource %q; want the request's", r.RequestID, r.StackID, r.LogicalResourceID)
		}
		return r
	}, ps, &cfg
}

// ring reads the ring the answer's Reference names as the functions do.
func ring(t *testing.T, cfg *config.Config, r cfn.Response) keyfile.Keys {
	t.Helper()
	ref, _ := r.Data[keyring.AttrReference].(string)
	v := ref
	if err := secrets.Resolve(context.Background(), cfg, "SWITCHBOARD_REQUEST_STATE_KEYS", &v); err != nil {
		t.Fatalf("reading %s: %v", ref, err)
	}
	k, err := keyfile.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func props(rotation string) map[string]any {
	return map[string]any{"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:sb-keyring", keyring.PropName: name, keyring.PropRotation: rotation}
}

func TestALifecycleCreatesKeepsRotatesAndDeletes(t *testing.T) {
	call, ps, cfg := setup(t)

	created := call(cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: props("")})
	if created.Status != cfn.StatusSuccess || created.PhysicalResourceID != name {
		t.Fatalf("Create answered %s %q (%s), want SUCCESS with the parameter's name", created.Status, created.PhysicalResourceID, created.Reason)
	}
	if want := ssmtest.ARN(name) + "#1"; created.Data[keyring.AttrReference] != want {
		t.Errorf("Reference = %v, want %s", created.Data[keyring.AttrReference], want)
	}
	first := ring(t, cfg, created)
	if len(first) != 1 || len(first["k1"]) < keyfile.MinSecretBytes {
		t.Fatalf("the created ring is %d keys, want k1 alone", len(first))
	}
	if p, _ := ps.Get(name); p.Type != "SecureString" || p.KeyID != "alias/aws/ssm" {
		t.Errorf("the parameter is a %s with key %s, want a SecureString with aws/ssm", p.Type, p.KeyID)
	}

	kept := call(cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: name, ResourceProperties: props(""), OldResourceProperties: props("")})
	if kept.Status != cfn.StatusSuccess || kept.Data[keyring.AttrReference] != created.Data[keyring.AttrReference] {
		t.Fatalf("an Update without rotation answered %s %v, want the same Reference %v", kept.Status, kept.Data, created.Data)
	}

	rotated := call(cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: name, ResourceProperties: props("2026-11"), OldResourceProperties: props("")})
	if rotated.Status != cfn.StatusSuccess || rotated.PhysicalResourceID != name {
		t.Fatalf("rotating answered %s %q (%s)", rotated.Status, rotated.PhysicalResourceID, rotated.Reason)
	}
	second := ring(t, cfg, rotated)
	if second["k1"] != first["k1"] || len(second["k2"]) < keyfile.MinSecretBytes || second.Newest() != "k2" {
		t.Fatalf("the rotated ring has ids %v, want k1 kept and a new k2", second.IDs())
	}
	if rotated.Data[keyring.AttrReference] != ssmtest.ARN(name)+"#2" {
		t.Errorf("the rotated Reference is %v, want version 2", rotated.Data[keyring.AttrReference])
	}

	deleted := call(cfn.Event{RequestType: cfn.RequestDelete, PhysicalResourceID: name, ResourceProperties: props("2026-11")})
	if deleted.Status != cfn.StatusSuccess {
		t.Fatalf("Delete answered %s (%s)", deleted.Status, deleted.Reason)
	}
	if _, ok := ps.Get(name); ok {
		t.Error("the parameter is still there after Delete")
	}
	if again := call(cfn.Event{RequestType: cfn.RequestDelete, PhysicalResourceID: name, ResourceProperties: props("")}); again.Status != cfn.StatusSuccess {
		t.Errorf("deleting again answered %s (%s), want SUCCESS: the parameter is gone", again.Status, again.Reason)
	}
}

func TestRequests(t *testing.T) {
	tests := []struct {
		name       string
		existing   string // a parameter there before the request
		event      cfn.Event
		wantStatus cfn.StatusType
		wantReason string
		wantParam  bool // whether name exists afterwards
	}{
		{name: "a create over a parameter not its own fails and leaves it", existing: `{"k1":"someone else's key, long enough to pass"}`,
			event: cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: props("")}, wantStatus: cfn.StatusFailed, wantReason: "exists already", wantParam: true},
		{name: "a name that is not a path fails, naming the property",
			event: cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: map[string]any{keyring.PropName: "flat"}}, wantStatus: cfn.StatusFailed, wantReason: "property Name"},
		{name: "a delete after a failed create deletes nothing", existing: `{"k1":"someone else's key, long enough to pass"}`,
			event: cfn.Event{RequestType: cfn.RequestDelete, PhysicalResourceID: "req-1", ResourceProperties: props("")}, wantStatus: cfn.StatusSuccess, wantParam: true},
		{name: "an update of a parameter deleted outside the stack writes a new ring",
			event: cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: name, ResourceProperties: props(""), OldResourceProperties: props("")}, wantStatus: cfn.StatusSuccess, wantParam: true},
		{name: "a rotation past a standard parameter's 4 KB fails, saying to retire keys", existing: bigRing(),
			event: cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: name, ResourceProperties: props("r"), OldResourceProperties: props("")}, wantStatus: cfn.StatusFailed, wantReason: "retire old keys", wantParam: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			call, ps, _ := setup(t)
			if tc.existing != "" {
				ps.Put(name, tc.existing)
			}
			got := call(tc.event)
			if got.Status != tc.wantStatus || !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("answered %s %q, want %s with %q", got.Status, got.Reason, tc.wantStatus, tc.wantReason)
			}
			if p, ok := ps.Get(name); ok != tc.wantParam {
				t.Errorf("the parameter exists: %v, want %v", ok, tc.wantParam)
			} else if ok && tc.existing != "" && p.Values[len(p.Values)-1] != tc.existing {
				t.Errorf("the parameter was changed")
			}
		})
	}
}

// bigRing is a ring one key short of a standard parameter's limit.
func bigRing() string {
	k := keyfile.Keys{}
	for i := 1; ; i++ {
		k["k"+strconv.Itoa(i)] = keyfile.NewSecret()
		if b, _ := json.Marshal(k); len(b) > keyring.MaxRingBytes-40 {
			delete(k, "k"+strconv.Itoa(i))
			b, _ := json.Marshal(k)
			return string(b)
		}
	}
}
