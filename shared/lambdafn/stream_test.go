package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

type stepsInput struct {
	Steps int    `json:"steps"`
	Panic string `json:"panic,omitempty"` // "first" or "later"
}

type stepsOutput struct {
	Done int `json:"done"`
	// Streaming is what [Streaming] said during the call.
	Streaming bool `json:"streaming"`
}

// stepsTool reports progress steps times; each report after the first
// waits for next, so that a test can see a notification before the next
// one is made.
func stepsTool(t *testing.T, next <-chan struct{}) lambda.Handler {
	t.Helper()
	schema, err := jsonschema.For[stepsInput](nil)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(schema)
	tool := &catalog.Tool{Name: "steps", Function: "test/steps", InputSchema: in}
	return Tool(tool, Deps{}, func(ctx context.Context, _ tenant.Caller, in stepsInput) (stepsOutput, error) {
		if in.Panic == "first" {
			panic("before any notification")
		}
		for i := 1; i <= in.Steps; i++ {
			if i > 1 {
				<-next
			}
			ReportProgress(ctx, float64(i), float64(in.Steps), "")
		}
		if in.Panic == "later" {
			panic("after a notification")
		}
		return stepsOutput{Done: in.Steps, Streaming: Streaming(ctx)}, nil
	})
}

func stepsPayload(args string, stream bool) []byte {
	b, _ := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: "steps", Arguments: json.RawMessage(args),
		Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, RequestID: "r", TraceID: "t", Stream: stream})
	return b
}

func TestAStreamedCallWritesEachNotificationAsItIsMade(t *testing.T) {
	next := make(chan struct{})
	h := stepsTool(t, next).(invoke.StreamHandler)
	r, err := h.InvokeStream(context.Background(), stepsPayload(`{"steps":3}`, true))
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	payload, err := invoke.ReadStream(r, func(n invoke.Notification) {
		got = append(got, *n.Progress)
		if *n.Progress < 3 {
			next <- struct{}{} // the tool makes the next one only now
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{1, 2, 3}, got); diff != "" {
		t.Errorf("progress mismatch (-want +got):\n%s", diff)
	}
	resp, err := invoke.DecodeResponse("test/steps", payload)
	if err != nil || len(resp.Notifications) != 0 || !strings.Contains(string(resp.Result), `"done":3,"streaming":true`) {
		t.Errorf("the response after the frames = %s, %v; want the result, streaming, without the notifications", payload, err)
	}
}

func TestCallsThatDoNotStreamAreAnsweredWhole(t *testing.T) {
	for _, tc := range []struct {
		name      string
		payload   []byte
		wantNotes int
		streaming bool
	}{
		{"A request that asks for no stream keeps its notifications in the response", stepsPayload(`{"steps":1}`, false), 1, false},
		{"A call that makes no notification answers its response alone", stepsPayload(`{"steps":0}`, true), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := stepsTool(t, nil).(invoke.StreamHandler).InvokeStream(context.Background(), tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.(*bytes.Reader); !ok {
				t.Errorf("the answer is a %T, want the whole response", r)
			}
			b, _ := io.ReadAll(r)
			resp, err := invoke.DecodeResponse("test/steps", b)
			if err != nil || len(resp.Notifications) != tc.wantNotes || !strings.Contains(string(resp.Result), fmt.Sprintf(`"streaming":%v`, tc.streaming)) {
				t.Errorf("answer %s, %v; want %d notifications in it, streaming %v", b, err, tc.wantNotes, tc.streaming)
			}
		})
	}
}

func TestAStreamedCallFailsAsTheFunctionWould(t *testing.T) {
	h := stepsTool(t, nil).(invoke.StreamHandler)
	t.Run("An envelope it does not serve is the handler's error", func(t *testing.T) {
		payload, _ := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: "other", Stream: true})
		if _, err := h.InvokeStream(context.Background(), payload); err == nil || !strings.Contains(err.Error(), "serves steps") {
			t.Errorf("InvokeStream error = %v, want the handler's", err)
		}
	})
	t.Run("A panic before any notification is the handler's panic", func(t *testing.T) {
		defer func() {
			if v := recover(); v != "before any notification" {
				t.Errorf("recovered %v, want the tool's panic", v)
			}
		}()
		h.InvokeStream(context.Background(), stepsPayload(`{"steps":1,"panic":"first"}`, true))
	})
	t.Run("A panic after a notification fails the stream", func(t *testing.T) {
		r, err := h.InvokeStream(context.Background(), stepsPayload(`{"steps":1,"panic":"later"}`, true))
		if err != nil {
			t.Fatal(err)
		}
		_, err = invoke.ReadStream(r, func(invoke.Notification) {})
		if err == nil || !strings.Contains(err.Error(), "after a notification") {
			t.Errorf("ReadStream error = %v, want the panic", err)
		}
	})
}

// aws-lambda-go sends the reader Serve answers, not its JSON: what
// lambda.NewHandler's Invoke reads of it is the streamed answer.
func TestAwsLambdaGoSendsTheStreamItself(t *testing.T) {
	next := make(chan struct{}, 1)
	next <- struct{}{}
	out, err := lambda.NewHandler(streamed{stepsTool(t, next)}.Serve).Invoke(context.Background(), stepsPayload(`{"steps":2}`, true))
	if err != nil {
		t.Fatal(err)
	}
	var notes int
	payload, err := invoke.ReadStream(bytes.NewReader(out), func(invoke.Notification) { notes++ })
	if err != nil || notes != 2 || !bytes.HasPrefix(payload, []byte(`{"result":`)) {
		t.Errorf("aws-lambda-go sent %s (%v); want two frames and the response", out, err)
	}
}
