package tenantcreds

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenantcreds/ststest"
)

// signatures records who signed each request that passes through it.
type signatures struct {
	mu   sync.Mutex
	seen []string // "<access key> <session token>"
}

func (s *signatures) RoundTrip(r *http.Request) (*http.Response, error) {
	auth := r.Header.Get("Authorization")
	_, cred, _ := strings.Cut(auth, "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	s.mu.Lock()
	s.seen = append(s.seen, key+" "+r.Header.Get("X-Amz-Security-Token"))
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (s *signatures) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// TestProviderSignsEachTenantsCallsToDynamoDBLocal runs the project's
// DynamoDB backend, on one configuration, with a Provider's credentials: each
// tenant's calls go out signed with its own session's keys and token, and
// a call naming no tenant never leaves. DynamoDB Local checks no signature
// and enforces no IAM policy, so what the session policies refuse is proven
// only by the policy tests and on AWS.
func TestProviderSignsEachTenantsCallsToDynamoDBLocal(t *testing.T) {
	name := storetest.DynamoTable(t)
	s := ststest.New(t)
	p := newProvider(t, s, Options{})
	seen := &signatures{}
	table := dynamo.New(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(os.Getenv(storetest.DynamoDBEnv)),
		Credentials:  p,
		HTTPClient:   &http.Client{Transport: seen},
	}, name)
	for _, id := range []string{"acme", "globex", "acme"} {
		ctx := NewContext(context.Background(), id)
		pk := "t#" + id + "#scoped-test"
		if err := table.Put(ctx, store.Item{PK: pk, SK: "x", Attrs: store.Attrs{"owner": id}}, store.Condition{}); err != nil {
			t.Fatalf("put as %s: %v", id, err)
		}
		it, err := table.Get(ctx, pk, "x")
		if err != nil || it.Attrs["owner"] != id {
			t.Fatalf("get as %s = %v, %v", id, it.Attrs, err)
		}
		for _, sig := range seen.take() {
			if want := ststest.KeyPrefix("tenant-" + id); !strings.HasPrefix(sig, want) || !strings.Contains(sig, " token-tenant-"+id+"-") {
				t.Errorf("a call of tenant %s was signed as %q, want its own session's key and token", id, sig)
			}
		}
	}
	if got := s.CallCount(); got != 2 {
		t.Errorf("%d AssumeRole calls for two tenants, want 2", got)
	}
	_, err := table.Get(context.Background(), "t#acme#scoped-test", "x")
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no tenant") {
		t.Errorf("get without a tenant = %v, want the provider's refusal", err)
	}
	if sigs := seen.take(); len(sigs) != 0 {
		t.Errorf("a call without a tenant reached DynamoDB signed as %q", sigs)
	}
}
