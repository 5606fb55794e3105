package invoke

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// filled returns a Request with every field set, by reflection, so that a
// field added to Request and forgotten by Encode or Decode fails the tests.
func filled(t *testing.T, text string) *Request {
	t.Helper()
	req := &Request{}
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch {
		case v.Type() == reflect.TypeFor[*elicit.Round]():
			v.Set(reflect.ValueOf(&elicit.Round{Can: []string{elicit.MethodElicit, text},
				State: &elicit.State{ID: text, Expires: time.Unix(1e9, 0).UTC(), Data: []byte(text)}}))
		case v.Type() == reflect.TypeFor[*profile.Profile]():
			v.Set(reflect.ValueOf(&profile.Profile{Groups: []string{text}, Allow: []string{text, "b"}, Deny: []string{}}))
		case v.Type() == reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(` { "k" : [1, "` + text + `", {}] } `))
		case v.Kind() == reflect.Bool:
			v.SetBool(true)
		case v.Kind() == reflect.String:
			v.SetString(text)
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
			v.Set(reflect.ValueOf([]string{text, "b"}))
		case v.Kind() == reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		default:
			t.Fatalf("Request has a field of kind %s: teach Encode, Decode and this test about it", v.Kind())
		}
	}
	fill(reflect.ValueOf(req).Elem())
	return req
}

func TestEncodeWritesWhatMarshalWrites(t *testing.T) {
	for name, req := range map[string]*Request{
		"EveryField":              filled(t, "x"),
		"EscapesAndHTML":          filled(t, "<é \"q\" \\ \n \u2028 \x01 😀>&"),
		"InvalidUTF8":             filled(t, "a\xffb"),
		"Nothing":                 {},
		"AToolCall":               {Method: MethodCallTool, Tool: "memory_get_context", Arguments: json.RawMessage(`{"conversation_id":"c"}`), RequestID: "r", TraceID: "t"},
		"EmptyScopes":             {Method: "m", Caller: tenant.Caller{Tenant: "acme", Principal: "alice", Scopes: []string{}}},
		"ArgumentsThatAreNotJSON": {Method: "m", Arguments: json.RawMessage(`{"a":`)},
	} {
		t.Run(name, func(t *testing.T) {
			want, wantErr := Marshal(req)
			got, err := Encode(req)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("Encode error %v, Marshal error %v", err, wantErr)
			}
			if err != nil {
				if wantErr := "invoke: encoding request: " + wantErr.Error(); err.Error() != wantErr {
					t.Errorf("Encode error %q, want %q", err, wantErr)
				}
				return
			}
			if string(got) != string(want) {
				t.Errorf("Encode wrote\n%s\nMarshal writes\n%s", got, want)
			}
			back, err := Decode(got)
			if err != nil {
				t.Fatal(err)
			}
			var viaJSON Request
			if err := json.Unmarshal(got, &viaJSON); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(viaJSON, back); diff != "" {
				t.Errorf("Decode differs from json.Unmarshal (-json.Unmarshal +Decode):\n%s", diff)
			}
			if !decodeRequestQuickly(got, &Request{}) && name != "InvalidUTF8" { // raw in the arguments: left to json.Unmarshal
				t.Errorf("Decode did not read what Encode wrote quickly")
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range []string{
		`{"method":"tools/call","tool":"t","arguments":{"a":1},"caller":{"tenant":"acme","principal":"p","scopes":["s"]},"request_id":"r","trace_id":"t"}`,
		`{"method":"m","caller":{"tenant":"a","principal":"p","scopes":[]},"request_id":"","trace_id":""}`,
		`{"method":"m\u00e9","Method":"x"}`, `{"method":null}`, `{"arguments":null}`, `{"caller":null}`, `{"caller":{"scopes":null}}`,
		`{"method":"a","method":"b"}`, `{}`, `[]`, `{"method":"m"} x`, `{"method":"m","input":{"can":["elicitation/create"]}}`, `{"input":null}`, `{"method":"m","stream":true}`, `{"stream":false}`, `{"stream":null}`, `{"method":"m","profile":{"groups":[],"deny":["x*"]}}`, `{"profile":null}`,
		`{"method":"m","thread":"chat_1"}`, `{"thread":null}`, `{"thread":"\u0000chat"}`, `{"thread":"` + strings.Repeat("t", 1<<16) + `"}`,
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		var quick, want Request
		if !decodeRequestQuickly([]byte(payload), &quick) {
			return
		}
		if err := json.Unmarshal([]byte(payload), &want); err != nil {
			t.Fatalf("read %s quickly; json.Unmarshal fails: %v", payload, err)
		}
		if diff := cmp.Diff(want, quick); diff != "" {
			t.Errorf("reading %s quickly differs (-json.Unmarshal +quickly):\n%s", payload, diff)
		}
	})
}
