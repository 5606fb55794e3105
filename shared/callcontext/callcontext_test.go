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

func TestACallCarriesTheXRayTraceOfItsInvocationOrOfItsClient(t *testing.T) {
	const lambdaHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	const w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
	//lint:ignore SA1029 the key aws-lambda-go puts the invocation's trace header under
	invocation := context.WithValue(context.Background(), "x-amzn-trace-id", lambdaHeader)
	tests := []struct {
		name    string
		ctx     context.Context
		traceID string
		want    string
	}{
		{"the call's header comes first", callcontext.NewContext(invocation, callcontext.Call{XRay: "Root=1-00000001-000000000000000000000001"}), w3c, "Root=1-00000001-000000000000000000000001"},
		{"then the Lambda invocation's", invocation, w3c, lambdaHeader},
		{"then the client's W3C trace, mapped", context.Background(), w3c, "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736"},
		{"and nothing for a trace id that is not W3C", context.Background(), "trace-1", ""},
		{"nor for an all-zero one", context.Background(), "00000000000000000000000000000000", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := callcontext.TraceHeader(tc.ctx, tc.traceID); got != tc.want {
				t.Errorf("TraceHeader = %q, want %q", got, tc.want)
			}
		})
	}
	for header, want := range map[string]string{
		lambdaHeader:                     "1-5759e988-bd862e3fe1be46a994272793",
		"Sampled=0; Root=1-a-b;Parent=c": "1-a-b",
		"Parent=c":                       "",
		"":                               "",
	} {
		if got := callcontext.XRayTraceID(header); got != want {
			t.Errorf("XRayTraceID(%q) = %q, want %q", header, got, want)
		}
	}
}
