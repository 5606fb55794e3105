package connector_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// TestUpstreamFaults: every way an upstream fails ends the call with an
// error naming the connector and what failed, within the deadline.
func TestUpstreamFaults(t *testing.T) {
	for _, transport := range []string{connector.TransportStreamable, connector.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			cases := []struct {
				name string
				// hook makes the upstream misbehave on calls whose arguments say "fault".
				hook func(w http.ResponseWriter, r *http.Request, body []byte) bool
				tool string
				ctx  time.Duration
				want string
			}{
				{name: "an upstream that hangs is given up at the call timeout", tool: "hang", want: "did not answer within"},
				{name: "an upstream that hangs is given up at the caller's deadline", tool: "hang", ctx: 300 * time.Millisecond, want: "ran out of time"},
				{name: "an answer of 20 MB fails the call", tool: "big", want: `connector "up"`},
				{name: "an upstream answering 500 fails the call", tool: "echo", want: `connector "up"`,
					hook: func(w http.ResponseWriter, r *http.Request, body []byte) bool {
						if bytes.Contains(body, []byte(`"fault"`)) {
							http.Error(w, "boom", http.StatusInternalServerError)
							return true
						}
						return false
					}},
				{name: "malformed JSON fails the call", tool: "echo", want: `connector "up"`,
					hook: func(w http.ResponseWriter, r *http.Request, body []byte) bool {
						if bytes.Contains(body, []byte(`"fault"`)) {
							w.Header().Set("Content-Type", "application/json")
							w.Write([]byte(`{"jsonrpc":"2.0","id":`))
							return true
						}
						return false
					}},
				{name: "an upstream closing mid-stream fails the call", tool: "echo", want: `connector "up"`,
					hook: func(w http.ResponseWriter, r *http.Request, body []byte) bool {
						if !bytes.Contains(body, []byte(`"fault"`)) {
							return false
						}
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
						w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"res"))
						w.(http.Flusher).Flush()
						conn, _, err := http.NewResponseController(w).Hijack()
						if err == nil {
							conn.Close()
						}
						return true
					}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					// Setup runs within the harness's generous call timeout;
					// the faulty call and the call after it run on a second
					// instance whose timeout of 700 ms is under test, once its
					// session is up, as initialising one under load can take
					// longer. The upstream starts first so that it stops last,
					// once the instances have closed their sessions.
					up := newUpstream(t, transport, "")
					e := newEnv(t, storetest.OpenEmbedded(t), nil)
					c := newCaller(t, "alice")
					mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: transport})
					mustSync(t, e, c, "up")
					allow(t, e, c, "up", tc.tool)
					allow(t, e, c, "up", "echo")
					svc := e.instance(t, func(o *connector.Options) { o.CallTimeout, o.InitTimeout = 700*time.Millisecond, time.Minute })
					mustEcho(t, svc, c)
					if tc.hook != nil {
						up.setHook(tc.hook)
					}
					// A call the timeouts do not end fails at this deadline
					// rather than hanging the test.
					ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(tc.ctx, time.Minute))
					defer cancel()
					res, err := svc.Call(ctx, c, connector.CallInput{Name: "up__" + tc.tool, Arguments: json.RawMessage(`{"text":"fault"}`)})
					if err == nil {
						t.Fatalf("Call = %q, want an error", text(res))
					}
					wantKind(t, err, fault.KindUnavailable, "")
					if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `connector "up"`) {
						t.Fatalf("error %q does not say %q and name the connector", err, tc.want)
					}
					// The connector still serves a healthy call afterwards.
					up.setHook(func(http.ResponseWriter, *http.Request, []byte) bool { return false })
					mustEcho(t, svc, c)
				})
			}
		})
	}
}

// mustEcho calls up__echo on svc until it answers, failing on any error but
// svc's call timeout, which under load can end a call before a session
// (still initialising for the next call) is up, or before it answers.
func mustEcho(t *testing.T, svc *connector.Service, c tenant.Caller) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := svc.Call(context.Background(), c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"ok"}`)})
		switch {
		case err == nil && text(res) == "echo: ok":
			return
		case err == nil || !strings.Contains(err.Error(), "did not answer within") || time.Now().After(deadline):
			t.Fatalf("a healthy call = %q, %v", text(res), err)
		}
	}
}

func TestSlowInitialisation(t *testing.T) {
	e := newEnv(t, storetest.OpenEmbedded(t), func(o *connector.Options) { o.InitTimeout = 200 * time.Millisecond })
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportStreamable, "")
	up.setHook(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"initialize"`)) || bytes.Contains(body, []byte(`"server/discover"`)) {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}
		return false
	})
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
	_, err := e.svc.Sync(context.Background(), c, connector.NameInput{Name: "up"})
	if err == nil || !strings.Contains(err.Error(), "initialisation took longer than 200ms") {
		t.Fatalf("Sync = %v, want the initialisation timeout", err)
	}
	g, _ := e.svc.Get(context.Background(), c, connector.NameInput{Name: "up"})
	if g.Connector.Status != connector.StatusError || g.Connector.SyncStatus != connector.SyncFailed {
		t.Fatalf("after a failed initialisation: %+v", g.Connector)
	}
}

func TestUpstreamGoneBetweenSyncAndCall(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, storetest.OpenEmbedded(t), nil)
	c := newCaller(t, "alice")
	up := newUpstream(t, connector.TransportSSE, "")
	mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportSSE})
	mustSync(t, e, c, "up")
	allow(t, e, c, "up", "echo")
	up.http.CloseClientConnections()
	up.http.Close()
	_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{}`)})
	wantKind(t, err, fault.KindUnavailable, "")
	if !strings.Contains(err.Error(), `connector "up"`) {
		t.Fatalf("error %q does not name the connector", err)
	}
	h, _ := e.svc.Health(ctx, c, connector.HealthInput{})
	if h.Status != "down" || h.Connectors[0].Status != connector.StatusError {
		t.Fatalf("health with the only connector gone = %+v", h)
	}
	// The cache survives the failure.
	g, _ := e.svc.Get(ctx, c, connector.NameInput{Name: "up"})
	if g.Connector.LastSyncedAt == nil {
		t.Fatal("the last good sync was forgotten")
	}
}

// TestResponsesAreCappedPerEventOnStreamsAndWholeOtherwise: the legacy SSE
// transport carries a session's every answer on one response, which must
// not end after 6 MiB of small events; one event over the cap is refused
// with an error saying so, as is a 20 MB body that is no event stream.
func TestResponsesAreCappedPerEventOnStreamsAndWholeOtherwise(t *testing.T) {
	const limit = netguard.DefaultMaxResponseBytes
	// 20 MB answers take seconds to make and read under the race detector.
	withCap := func(o *connector.Options) { o.HTTPClient, o.CallTimeout = guardedClient(limit), 30*time.Second }
	ctx := context.Background()
	t.Run("an SSE session lasts past the cap in small events", func(t *testing.T) {
		e := newEnv(t, storetest.OpenEmbedded(t), withCap)
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportSSE, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportSSE})
		mustSync(t, e, c, "up")
		allow(t, e, c, "up", "echo")
		chunk := strings.Repeat("x", 256<<10)
		args, _ := json.Marshal(map[string]string{"text": chunk})
		for i := range 2 * limit / len(chunk) { // 12 MiB of answers on one stream
			res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: args})
			if err != nil || len(text(res)) != len(chunk)+len("echo: ") {
				t.Fatalf("call %d: %d bytes, %v", i, len(text(res)), err)
			}
		}
		if h, _ := e.svc.Health(ctx, c, connector.HealthInput{}); h.Connectors[0].Sessions[connector.SessionActive] != 1 {
			t.Errorf("sessions = %v, want the one session still active", h.Connectors[0].Sessions)
		}
	})
	for _, tc := range []struct{ name, transport, want string }{
		{"one SSE event over the cap is refused", connector.TransportSSE, "an event of more than 6291456 bytes"},
		{"one Streamable HTTP event over the cap is refused", connector.TransportStreamable, "an event of more than 6291456 bytes"},
		{"a 20 MB body that is no event stream is refused", jsonResponses, "more than 6291456 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, storetest.OpenEmbedded(t), withCap)
			c := newCaller(t, "alice")
			up := newUpstream(t, tc.transport, "")
			transport := tc.transport
			if transport == jsonResponses {
				transport = connector.TransportStreamable
			}
			mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: transport})
			mustSync(t, e, c, "up")
			allow(t, e, c, "up", "big")
			_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__big", Arguments: json.RawMessage(`{}`)})
			wantKind(t, err, fault.KindUnavailable, "")
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `connector "up"`) {
				t.Fatalf("error %q does not say %q and name the connector", err, tc.want)
			}
		})
	}
}
