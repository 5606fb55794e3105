package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// vouchedOutput is a tool output with a string and, if valid, raw JSON,
// which encoding/json copies as it is (escapes, line separators, invalid
// UTF-8 and all).
type vouchedOutput struct {
	Text string          `json:"text"`
	Raw  json.RawMessage `json:"raw,omitempty"`
}

// vouchedAnswer returns a function that returns the result lambdafn
// answers for an output, and whether it vouches for it
// (invoke.Response.Canonical).
func vouchedAnswer(t testing.TB) func(vouchedOutput) ([]byte, bool, error) {
	tool, _ := catalog.Default().Tool("memory_get_summary")
	var out vouchedOutput
	h := lambdafn.Tool(tool, lambdafn.Deps{}, func(context.Context, tenant.Caller, memory.ConversationInput) (vouchedOutput, error) {
		return out, nil
	})
	env, err := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: json.RawMessage(`{"conversation_id":"c"}`),
		Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	return func(o vouchedOutput) ([]byte, bool, error) {
		out = o
		payload, err := h.Invoke(context.Background(), env)
		result, vouched := invoke.CanonicalResult(payload)
		return result, vouched, err
	}
}

func FuzzEscapeToolResultWritesWhatTranscodingWrites(f *testing.F) {
	for _, s := range []string{"plain", "a <b> & c", "line\u2028sep\u2029", "é — ☕ 𝄞", "ctl \x01\n\t", "bad \xff utf-8", `"quoted" \ back`,
		`{"a":"<\u003c>"}`, "[\"\u2028\",1e3,true,null]", "{\"x\":\"\xff\"}", `"\/\u00e9"`} {
		f.Add(s)
	}
	info, _ := json.Marshal(&implementation)
	answer := vouchedAnswer(f)
	f.Fuzz(func(t *testing.T, s string) {
		out := vouchedOutput{Text: s}
		if json.Valid([]byte(s)) {
			out.Raw = json.RawMessage(s)
		}
		result, vouched, err := answer(out)
		if err != nil {
			t.Fatal(err)
		}
		if !vouched {
			if out.Raw == nil || utf8.Valid(out.Raw) {
				t.Fatalf("lambdafn does not vouch for its answer to %+v", out)
			}
			return // structured content with invalid UTF-8: transcoded
		}
		for _, sessionless := range []bool{false, true} {
			want, n, ok := transcodeToolResult(nil, result, sessionless, info)
			if !ok || n != len(result) {
				t.Fatalf("transcoding refuses what lambdafn vouches for: %s", result)
			}
			if got := escapeToolResult(nil, result, sessionless, info); string(got) != string(want) {
				t.Errorf("sessionless %v: escaping %s\ngives %s\nwant  %s", sessionless, result, got, want)
			}
		}
	})
}
