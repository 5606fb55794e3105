package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// gateway does what the gateway does around a 2026-07-28 call: it seals the
// request state a tool's InputRequired carries, bound to the call, and opens
// the one a retry brings back.
type gateway struct {
	keys *elicit.Keyring
	now  func() time.Time
}

func (g gateway) ask(t *testing.T, err error, c tenant.Caller, name string, args json.RawMessage) (string, *elicit.InputRequired) {
	t.Helper()
	var ask *elicit.InputRequired
	if !errors.As(err, &ask) {
		t.Fatalf("error = %v, want an InputRequired", err)
	}
	if ask.TTL != connector.DefaultApprovalTTL || !ask.Once {
		t.Fatalf("the approval's state lives %v, once %v; want %v, once", ask.TTL, ask.Once, connector.DefaultApprovalTTL)
	}
	token, err := g.keys.Seal(elicit.Binding{Caller: c, Method: "tools/call", Name: name, Arguments: args}, ask.StateAt(g.now()))
	if err != nil {
		t.Fatal(err)
	}
	return token, ask
}

func (g gateway) retry(token string, c tenant.Caller, name string, args json.RawMessage, action string) (context.Context, error) {
	st, err := g.keys.Open(token, elicit.Binding{Caller: c, Method: "tools/call", Name: name, Arguments: args}, g.now())
	if err != nil {
		return nil, err
	}
	answer := mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: action, Content: map[string]any{"confirm": action == "accept"}}}
	return elicit.NewContext(context.Background(), &elicit.Round{Can: []string{elicit.MethodElicit}, Responses: answer, State: &st}), nil
}

func TestApprovalByElicitation(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		e := newEnv(t, tbl, nil)
		keys, _ := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
		gw := gateway{keys: keys, now: e.now.Now}
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportStreamable, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
		mustSync(t, e, c, "up")
		args := json.RawMessage(`{"text":"10 EUR"}`)
		first := elicit.NewContext(context.Background(), &elicit.Round{Can: []string{elicit.MethodElicit}})
		askFor := func(t *testing.T) string {
			_, err := e.svc.Call(first, c, connector.CallInput{Name: "up__charge", Arguments: args})
			token, ask := gw.ask(t, err, c, "up__charge", args)
			msg := ask.Requests["approve"].(*mcp.ElicitParams).Message
			if !strings.Contains(msg, "charge") || !strings.Contains(msg, "connector up") || !strings.Contains(msg, "10 EUR") {
				t.Fatalf("the form says %q; want the connector, the tool and the arguments", msg)
			}
			return token
		}

		t.Run("accepting runs the call exactly once", func(t *testing.T) {
			token := askFor(t)
			ctx, err := gw.retry(token, c, "up__charge", args, "accept")
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			if err != nil || !strings.Contains(text(res), "charged 10 EUR (call 1)") {
				t.Fatalf("Call = %q, %v", text(res), err)
			}
			_, err = e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
			if up.calls.Load() != 1 {
				t.Fatalf("the upstream ran %d times", up.calls.Load())
			}
		})
		t.Run("declining runs nothing", func(t *testing.T) {
			ctx, _ := gw.retry(askFor(t), c, "up__charge", args, "decline")
			_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("changed arguments are refused, by the gateway and by the connector", func(t *testing.T) {
			token := askFor(t)
			other := json.RawMessage(`{"text":"9999 EUR"}`)
			if _, err := gw.retry(token, c, "up__charge", other, "accept"); !errors.Is(err, elicit.ErrForeign) {
				t.Fatalf("gateway open = %v, want ErrForeign", err)
			}
			ctx, _ := gw.retry(token, c, "up__charge", args, "accept")
			_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: other})
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("another principal's approval is refused", func(t *testing.T) {
			token := askFor(t)
			bob := tenant.Caller{Tenant: c.Tenant, Principal: "bob"}
			if _, err := gw.retry(token, bob, "up__charge", args, "accept"); !errors.Is(err, elicit.ErrForeign) {
				t.Fatalf("gateway open = %v, want ErrForeign", err)
			}
			ctx, _ := gw.retry(token, c, "up__charge", args, "accept")
			_, err := e.svc.Call(ctx, bob, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("a tampered state is refused", func(t *testing.T) {
			token := askFor(t)
			if _, err := gw.retry(token[:len(token)-2]+"AA", c, "up__charge", args, "accept"); !errors.Is(err, elicit.ErrTampered) {
				t.Fatalf("gateway open = %v, want ErrTampered", err)
			}
			// A state of another tool's making (no approval in it) is refused too.
			st := elicit.State{ID: "x", Expires: e.now.Now().Add(time.Minute), Data: []byte("not ours")}
			ctx := elicit.NewContext(context.Background(), &elicit.Round{Can: []string{elicit.MethodElicit}, State: &st,
				Responses: mcp.InputResponseMap{"approve": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}})
			_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("an approval under an older policy version is refused", func(t *testing.T) {
			token := askFor(t)
			e.svc.PolicySet(context.Background(), c, connector.PolicySetInput{Connector: "up", Tool: "charge", Policy: connector.PolicyDeny})
			e.svc.PolicySet(context.Background(), c, connector.PolicySetInput{Connector: "up", Tool: "charge", Policy: connector.PolicyAsk})
			ctx, _ := gw.retry(token, c, "up__charge", args, "accept")
			_, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("an expired approval is refused", func(t *testing.T) {
			token := askFor(t)
			e.now.Advance(61 * time.Second)
			if _, err := gw.retry(token, c, "up__charge", args, "accept"); !errors.Is(err, elicit.ErrExpired) {
				t.Fatalf("gateway open = %v, want ErrExpired", err)
			}
		})
		if up.calls.Load() != 1 {
			t.Fatalf("the upstream ran %d times; only the accepted call should have", up.calls.Load())
		}
	})
}

func TestApprovalByPage(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		records := &syncBuffer{}
		e := newEnv(t, tbl, func(o *connector.Options) { o.Metrics = metrics.New(records) })
		c := newCaller(t, "alice")
		up := newUpstream(t, connector.TransportSSE, "")
		mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportSSE})
		mustSync(t, e, c, "up")
		args := json.RawMessage(`{"text":"10 EUR"}`)
		request := func(t *testing.T) string {
			res, err := e.svc.Call(ctx, c, connector.CallInput{Name: "up__charge", Arguments: args})
			if err != nil || !res.IsError || !strings.Contains(text(res), "/approvals/") {
				t.Fatalf("Call = %q, %v; want a tool error with the approval's link", text(res), err)
			}
			return res.Meta[connector.ApprovalMetaKey].(string)
		}
		call := func(id string, a json.RawMessage, who tenant.Caller) (*mcp.CallToolResult, error) {
			return e.svc.Call(ctx, who, connector.CallInput{Name: "up__charge", Arguments: a, ApprovalID: id})
		}

		t.Run("an approved call runs exactly once", func(t *testing.T) {
			id := request(t)
			_, err := call(id, args, c)
			wantKind(t, err, fault.KindInvalid, "approval") // still pending
			if _, err := e.svc.Approve(ctx, c, connector.ApprovalInput{ID: id}); err != nil {
				t.Fatal(err)
			}
			if res, err := call(id, args, c); err != nil || !strings.Contains(text(res), "(call 1)") {
				t.Fatalf("retry = %q, %v", text(res), err)
			}
			_, err = call(id, args, c)
			wantKind(t, err, fault.KindInvalid, "approval")
		})
		t.Run("a denied call never runs", func(t *testing.T) {
			id := request(t)
			if _, err := e.svc.Deny(ctx, c, connector.ApprovalInput{ID: id}); err != nil {
				t.Fatal(err)
			}
			_, err := call(id, args, c)
			wantKind(t, err, fault.KindInvalid, "approval")
			_, err = e.svc.Approve(ctx, c, connector.ApprovalInput{ID: id})
			wantKind(t, err, fault.KindConflict, "")
		})
		t.Run("changed arguments and other principals are refused", func(t *testing.T) {
			id := request(t)
			bob := tenant.Caller{Tenant: c.Tenant, Principal: "bob"}
			_, err := e.svc.Approve(ctx, bob, connector.ApprovalInput{ID: id})
			wantKind(t, err, fault.KindInvalid, "approval")
			e.svc.Approve(ctx, c, connector.ApprovalInput{ID: id})
			_, err = call(id, json.RawMessage(`{"text":"9999 EUR"}`), c)
			wantKind(t, err, fault.KindInvalid, "approval")
			_, err = call(id, args, bob)
			wantKind(t, err, fault.KindInvalid, "approval")
			other := newCaller(t, "alice")
			_, err = e.svc.ApprovalGet(ctx, other, connector.ApprovalInput{ID: id})
			wantKind(t, err, fault.KindNotFound, "approval_id")
		})
		t.Run("an expired approval is refused and recorded", func(t *testing.T) {
			id := request(t)
			e.svc.Approve(ctx, c, connector.ApprovalInput{ID: id})
			e.now.Advance(connector.DefaultPageApprovalTTL + time.Second)
			_, err := call(id, args, c)
			wantKind(t, err, fault.KindInvalid, "approval")
			got, _ := e.svc.ApprovalGet(ctx, c, connector.ApprovalInput{ID: id})
			if got.Approval.Status != connector.ApprovalExpired {
				t.Fatalf("status = %s", got.Approval.Status)
			}
		})
		if up.calls.Load() != 1 {
			t.Fatalf("the upstream ran %d times; only the approved call should have", up.calls.Load())
		}
		h, _ := e.svc.Health(ctx, c, connector.HealthInput{})
		if a := h.Connectors[0].Approvals; a.Requested != 4 || a.Granted != 3 || a.Denied != 1 || a.Expired != 1 {
			t.Fatalf("approval counts = %+v", a)
		}
		// The same figures, as metric records of the connector.
		got := map[string]int64{}
		for _, line := range strings.Split(records.String(), "\n") {
			for _, m := range []string{metrics.ConnectorCalls, metrics.ConnectorErrors, metrics.CacheHits, metrics.CacheMisses,
				metrics.ApprovalsRequested, metrics.ApprovalsGranted, metrics.ApprovalsDenied, metrics.ApprovalsExpired} {
				if strings.Contains(line, `"`+m+`":1`) && strings.Contains(line, `"tenant":"`+c.Tenant+`","connector":"up"`) {
					got[m]++
				}
			}
		}
		ch := h.Connectors[0]
		want := map[string]int64{metrics.ConnectorCalls: ch.Calls, metrics.ConnectorErrors: ch.Errors, metrics.CacheHits: ch.CacheHits, metrics.CacheMisses: ch.CacheMiss,
			metrics.ApprovalsRequested: 4, metrics.ApprovalsGranted: 3, metrics.ApprovalsDenied: 1, metrics.ApprovalsExpired: 1}
		for m, n := range want {
			if got[m] != n {
				t.Errorf("%d records of %s, connector_health says %d", got[m], m, n)
			}
		}
	})
}

// A warm instance keeps the policies it read by the connector's version,
// which every policy change bumps: a change made through another instance
// applies to the next call at once, and a connector deleted and made again
// under its name starts from the default policy.
func TestAPolicyChangeIsSeenAtOnceByEveryInstance(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		e := newEnv(t, tbl, nil)
		other := e.instance(t, nil) // another warm instance of the proxy function
		up := newUpstream(t, connector.TransportStreamable, "")
		c := newCaller(t, "alice")
		create := func() {
			mustCreate(t, e, c, connector.CreateInput{Name: "up", BaseURL: up.url(), Transport: connector.TransportStreamable})
			mustSync(t, e, c, "up")
		}
		create()
		set := func(policy string) {
			t.Helper()
			if _, err := e.svc.PolicySet(ctx, c, connector.PolicySetInput{Connector: "up", Tool: "echo", Policy: policy}); err != nil {
				t.Fatal(err)
			}
		}
		// outcome calls echo on the other instance: "ran", "denied" or "asks".
		outcome := func() string {
			t.Helper()
			res, err := other.Call(ctx, c, connector.CallInput{Name: "up__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
			switch {
			case err != nil && strings.Contains(err.Error(), "ALWAYS_DENY"):
				return "denied"
			case err != nil:
				t.Fatal(err)
			case res.IsError:
				return "asks"
			}
			return "ran"
		}
		for _, step := range []struct {
			name string
			act  func()
			want string
		}{
			{"allowed", func() { set(connector.PolicyAllow) }, "ran"},
			{"denied", func() { set(connector.PolicyDeny) }, "denied"},
			{"asked", func() { set(connector.PolicyAsk) }, "asks"},
			{"allowed again", func() { set(connector.PolicyAllow) }, "ran"},
			{"deleted and made again", func() {
				if _, err := e.svc.Delete(ctx, c, connector.DeleteInput{Name: "up"}); err != nil {
					t.Fatal(err)
				}
				create()
			}, "asks"},
		} {
			step.act()
			for range 2 { // the second call is served from what the first read
				if got := outcome(); got != step.want {
					t.Fatalf("%s: the other instance's call %s, want %s", step.name, got, step.want)
				}
			}
		}
	})
}
