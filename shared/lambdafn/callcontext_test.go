package lambdafn

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// seenCall invokes a handler of tool (which takes a conversation id)
// with args and the envelope's trace-1, and returns the call domain code saw
// and the trace the result's _meta names.
func seenCall(t *testing.T, tool *catalog.Tool, args string) (callcontext.Call, string) {
	t.Helper()
	var seen callcontext.Call
	h := Tool(tool, Deps{}, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
		seen, _ = callcontext.FromContext(ctx)
		return memory.SummaryOutput{}, nil
	})
	payload, _ := json.Marshal(invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(args),
		Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "trace-1", RequestID: "req-1"})
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			Meta map[string]string `json:"_meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return seen, resp.Result.Meta[invoke.TraceMetaKey]
}

func TestDomainCodeSeesTheCall(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	seen, meta := seenCall(t, tool, `{"conversation_id":"c"}`)
	want := callcontext.Call{Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "trace-1", RequestID: "req-1"}
	if seen.Caller.Tenant != want.Caller.Tenant || seen.TraceID != want.TraceID || seen.RequestID != want.RequestID || meta != "trace-1" {
		t.Errorf("domain code saw %+v, the result names trace %q; want %+v and trace-1", seen, meta, want)
	}
}

// A tool with TraceArgument runs under the trace_id its caller gives, when
// it is a valid trace id: the domain code, the audit events and the result
// all name it.
func TestATraceArgumentSetsTheTraceOfItsCall(t *testing.T) {
	base, _ := catalog.Default().Tool("memory_get_summary")
	tool := *base
	tool.TraceArgument = true
	tool.InputSchema = json.RawMessage(`{"type":"object","properties":{"conversation_id":{"type":"string"},"trace_id":{"type":"string","pattern":"^[0-9a-f]{32}$"}}}`)
	const valid = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, tc := range []struct {
		name, args, want string
	}{
		{"a valid trace id is the call's trace", `{"conversation_id":"c","trace_id":"` + valid + `"}`, valid},
		{"without one the envelope's trace stands", `{"conversation_id":"c"}`, "trace-1"},
		{"an invalid one is left for the schema to refuse", `{"conversation_id":"c","trace_id":"not a trace"}`, "trace-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen, meta := seenCall(t, &tool, tc.args)
			if meta != tc.want || (tc.want == valid && seen.TraceID != valid) {
				t.Errorf("domain code saw trace %q, the result names %q; want %q", seen.TraceID, meta, tc.want)
			}
		})
	}
	// A tool without it ignores the argument.
	seen, meta := seenCall(t, base, `{"conversation_id":"c","trace_id":"`+valid+`"}`)
	if seen.TraceID == valid || meta == valid {
		t.Errorf("a tool without TraceArgument ran under its argument's trace (%q, %q)", seen.TraceID, meta)
	}
}

// The thread an envelope names reaches domain code; an envelope naming a
// malformed one is refused before any domain code runs.
func TestDomainCodeSeesTheEnvelopesThread(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	for _, tc := range []struct {
		name, thread, wantErr string
	}{
		{"a thread id reaches it", "chat_1", ""},
		{"no thread is none", "", ""},
		{"a thread id with a space is refused", "chat 1", "envelope names no valid thread"},
		{"a thread id too long is refused", strings.Repeat("t", 129), "envelope names no valid thread"},
		{"a thread id of control characters is refused", "\x00", "envelope names no valid thread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			var seen callcontext.Call
			h := Tool(tool, Deps{}, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
				ran = true
				seen, _ = callcontext.FromContext(ctx)
				return memory.SummaryOutput{}, nil
			})
			payload, _ := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
				Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, Thread: tc.thread})
			_, err := h.Invoke(context.Background(), payload)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || ran {
					t.Errorf("Invoke: %v (domain code ran: %t), want an error containing %q", err, ran, tc.wantErr)
				}
				return
			}
			if err != nil || seen.Thread != tc.thread {
				t.Errorf("Invoke: %v; domain code saw thread %q, want %q", err, seen.Thread, tc.thread)
			}
		})
	}
}

// The tool profile an envelope carries reaches domain code; an envelope
// carrying an invalid one is refused before any domain code runs.
func TestDomainCodeSeesTheEnvelopesProfile(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	for _, tc := range []struct {
		name    string
		held    *profile.Profile
		wantErr string
	}{
		{"a profile reaches it", &profile.Profile{Groups: []string{catalog.GroupWebSearch}, Deny: []string{"github__*"}}, ""},
		{"no profile is the zero one", nil, ""},
		{"a profile naming no group is refused", &profile.Profile{Groups: []string{"Everything"}}, "envelope carries no valid profile"},
		{"a profile with a pattern of other characters is refused", &profile.Profile{Deny: []string{"a/b"}}, "envelope carries no valid profile"},
		{"a profile with too many patterns is refused", &profile.Profile{Allow: slices.Repeat([]string{"x"}, profile.MaxPatterns+1)}, "envelope carries no valid profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			var seen callcontext.Call
			h := Tool(tool, Deps{}, func(ctx context.Context, _ tenant.Caller, _ memory.ConversationInput) (memory.SummaryOutput, error) {
				ran = true
				seen, _ = callcontext.FromContext(ctx)
				return memory.SummaryOutput{}, nil
			})
			payload, _ := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
				Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, Profile: tc.held})
			_, err := h.Invoke(context.Background(), payload)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || ran {
					t.Errorf("Invoke: %v (domain code ran: %t), want an error containing %q", err, ran, tc.wantErr)
				}
				return
			}
			want := profile.Profile{}
			if tc.held != nil {
				want = *tc.held
			}
			if err != nil || !reflect.DeepEqual(seen.Profile, want) {
				t.Errorf("Invoke: %v; domain code saw profile %+v, want %+v", err, seen.Profile, want)
			}
		})
	}
}
