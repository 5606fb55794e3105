package invoke_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/invoke"
)

func frame(t *testing.T, n invoke.Notification) string {
	t.Helper()
	b, err := invoke.AppendFrame(nil, n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func progressNote(p float64) invoke.Notification {
	return invoke.Notification{Progress: &p, Total: 2, Message: "step\nwith a newline"}
}

func TestReadStreamHandsOverEachNotificationThenTheResponse(t *testing.T) {
	logNote := invoke.Notification{Level: "info", Logger: "l", Data: "a <log> & more"}
	for _, tc := range []struct {
		name    string
		stream  string
		notes   []invoke.Notification
		payload string
		err     string
	}{
		{name: "Frames then the response", stream: frame(t, progressNote(1)) + frame(t, logNote) + `{"result":{"a":1}}`,
			notes: []invoke.Notification{progressNote(1), logNote}, payload: `{"result":{"a":1}}`},
		{name: "The response alone", stream: `{"result":{}}`, payload: `{"result":{}}`},
		{name: "A response that is not JSON is left to its reader", stream: frame(t, logNote) + "x", notes: []invoke.Notification{logNote}, payload: "x"},
		{name: "A stream that ends inside a frame fails", stream: strings.TrimSuffix(frame(t, logNote), "\n"), err: "the stream ended inside a notification frame"},
		{name: "An undecodable frame fails", stream: `{"notification":[1]}` + "\n", err: "undecodable notification frame"},
		{name: "A frame past the limit fails", stream: `{"notification":{"data":"` + strings.Repeat("x", invoke.MaxFrameBytes) + `"}}` + "\n", err: "larger than"},
		{name: "A response past the limit fails", stream: `{"result":"` + strings.Repeat("x", invoke.MaxResponseBytes) + `"}`, err: "larger than Lambda's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notes []invoke.Notification
			payload, err := invoke.ReadStream(strings.NewReader(tc.stream), func(n invoke.Notification) { notes = append(notes, n) })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ReadStream error = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(payload) != tc.payload {
				t.Errorf("payload = %s, want %s", payload, tc.payload)
			}
			// Data decodes as any: a string stays a string.
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notifications mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadStreamReturnsTheReadersError(t *testing.T) {
	failed := errors.New("the connection broke")
	_, err := invoke.ReadStream(io.MultiReader(strings.NewReader(frame(t, progressNote(1))), errReader{failed}), func(invoke.Notification) {})
	if !errors.Is(err, failed) {
		t.Errorf("ReadStream error = %v, want the reader's", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// pacedHandler streams a notification, then waits for proceed before it
// answers; it fails with fail, if set, instead.
type pacedHandler struct {
	proceed chan struct{}
	fail    error
}

func (p *pacedHandler) Invoke(context.Context, []byte) ([]byte, error) {
	return []byte(`{"result":{}}`), nil
}

func (p *pacedHandler) InvokeStream(ctx context.Context, payload []byte) (io.Reader, error) {
	if !strings.Contains(string(payload), `"stream":true`) {
		return nil, errors.New("the request did not ask for a stream")
	}
	r, w := io.Pipe()
	go func() {
		p1 := 1.0
		b, _ := invoke.AppendFrame(nil, invoke.Notification{Progress: &p1})
		w.Write(b)
		<-p.proceed
		if p.fail != nil {
			w.CloseWithError(p.fail)
			return
		}
		w.Write([]byte(`{"result":{"done":true}}`))
		w.Close()
	}()
	return r, nil
}

func TestTheLocalInvokerHandsOverNotificationsBeforeTheFunctionEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     error
		wantType string
	}{
		{name: "A call that answers"},
		{name: "A call that fails midway", fail: messages.InvokeResponse_Error{Type: "Runtime.Panic", Message: "boom"}, wantType: "Runtime.Panic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &pacedHandler{proceed: make(chan struct{}), fail: tc.fail}
			l := invoke.NewLocal(map[string]lambda.Handler{"f": h}, nil)
			out, err := l.InvokeStream(context.Background(), "f", sampleRequest(), func(n invoke.Notification) {
				if n.Progress != nil && *n.Progress == 1 {
					close(h.proceed) // the function goes on only once this one has arrived
				}
			})
			var fe *invoke.FunctionError
			switch {
			case tc.wantType != "":
				if !errors.As(err, &fe) || fe.Type != tc.wantType {
					t.Fatalf("InvokeStream error = %v, want a function error of type %s", err, tc.wantType)
				}
			case err != nil:
				t.Fatal(err)
			case string(out) != `{"result":{"done":true}}`:
				t.Errorf("payload = %s", out)
			}
		})
	}
}

func TestTheLocalInvokerStreamsOnlyFromHandlersThatCan(t *testing.T) {
	r := &recorder{answer: func([]byte) ([]byte, error) { return []byte(`{"result":{},"notifications":[{"level":"info"}]}`), nil }}
	l := invoke.NewLocal(map[string]lambda.Handler{"f": r}, nil)
	called := false
	out, err := l.InvokeStream(context.Background(), "f", sampleRequest(), func(invoke.Notification) { called = true })
	if err != nil {
		t.Fatal(err)
	}
	if called || string(out) != `{"result":{},"notifications":[{"level":"info"}]}` {
		t.Errorf("a handler that cannot stream answered %s (notified: %v); want its answer whole", out, called)
	}
}

// A function that streams and then runs on past its deadline, heeding no
// context, times out as Lambda would stop it.
func TestTheLocalInvokerStopsReadingAStreamAtTheDeadline(t *testing.T) {
	h := &pacedHandler{proceed: make(chan struct{})}
	t.Cleanup(func() { close(h.proceed) })
	l := invoke.NewLocal(map[string]lambda.Handler{"f": h}, &invoke.LocalOptions{Timeout: func(string) time.Duration { return 10 * time.Millisecond }})
	_, err := l.InvokeStream(context.Background(), "f", sampleRequest(), func(invoke.Notification) {})
	var fe *invoke.FunctionError
	if !errors.As(err, &fe) || fe.Type != "Sandbox.Timedout" {
		t.Errorf("InvokeStream: %v; want Sandbox.Timedout", err)
	}
}
