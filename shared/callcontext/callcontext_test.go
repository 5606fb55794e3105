package callcontext_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestAContextCarriesTheCallItWasGiven(t *testing.T) {
	want := callcontext.Call{Caller: tenant.Caller{Tenant: "acme", Principal: "alice"}, TraceID: "t1", RequestID: "r1"}
	got, ok := callcontext.FromContext(callcontext.NewContext(context.Background(), want))
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("FromContext: ok %v, mismatch (-want +got):\n%s", ok, diff)
	}
	if got, ok := callcontext.FromContext(context.Background()); ok {
		t.Errorf("a context without a call gave %+v", got)
	}
}
