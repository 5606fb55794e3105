package elicit_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var (
	alice  = tenant.Caller{Tenant: "acme", Principal: "alice"}
	now    = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	secret = strings.Repeat("s", elicit.MinSecretBytes)
)

func keyring(t *testing.T, secrets map[string]string) *elicit.Keyring {
	t.Helper()
	k, err := elicit.NewKeyring(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func deleteCall(args string) elicit.Binding {
	return elicit.Binding{Caller: alice, Method: "tools/call", Name: "memory_delete", Arguments: json.RawMessage(args)}
}

func TestOpenReturnsWhatWasSealedForTheSameCall(t *testing.T) {
	k := keyring(t, map[string]string{"k1": secret})
	want := elicit.State{Expires: now.Add(time.Minute), Once: true, Data: []byte(`{"step":2}`)}
	token, err := k.Seal(deleteCall(`{"conversation_id":"c1","confirm":false}`), want)
	if err != nil {
		t.Fatal(err)
	}
	// The client may re-encode the arguments: other key order, other spacing.
	got, err := k.Open(token, deleteCall(`{ "confirm": false, "conversation_id": "c1" }`), now)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == "" {
		t.Error("the opened state has no id")
	}
	want.ID = got.ID
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestOpenRefuses(t *testing.T) {
	k := keyring(t, map[string]string{"k1": secret})
	call := deleteCall(`{"conversation_id":"c1"}`)
	token, err := k.Seal(call, elicit.State{Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	version, rest, _ := strings.Cut(token, ".")
	id, payload, _ := strings.Cut(rest, ".")
	sealed, _ := base64.RawURLEncoding.DecodeString(payload)
	flipped := append([]byte(nil), sealed...)
	flipped[len(flipped)/2] ^= 1
	other := keyring(t, map[string]string{"k1": strings.Repeat("o", elicit.MinSecretBytes)})
	foreignToken, err := other.Seal(call, elicit.State{Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		token string
		call  elicit.Binding
		at    time.Time
		want  error
	}{
		{"a state with text appended", token + "-TAMPERED", call, now, elicit.ErrTampered},
		{"a state with one bit flipped", version + "." + id + "." + base64.RawURLEncoding.EncodeToString(flipped), call, now, elicit.ErrTampered},
		{"a state sealed under another key id", version + ".k2." + payload, call, now, elicit.ErrRetiredKey},
		{"a state sealed by another server", foreignToken, call, now, elicit.ErrTampered},
		{"a state of another format version", "v2." + rest, call, now, elicit.ErrTampered},
		{"an empty state", "", call, now, elicit.ErrTampered},
		{"a huge state", strings.Repeat("A", elicit.MaxTokenBytes+1), call, now, elicit.ErrTampered},
		{"another tenant's state", token, elicit.Binding{Caller: tenant.Caller{Tenant: "other", Principal: "alice"}, Method: call.Method, Name: call.Name, Arguments: call.Arguments}, now, elicit.ErrForeign},
		{"another principal's state", token, elicit.Binding{Caller: tenant.Caller{Tenant: "acme", Principal: "bob"}, Method: call.Method, Name: call.Name, Arguments: call.Arguments}, now, elicit.ErrForeign},
		{"another tool's state", token, elicit.Binding{Caller: alice, Method: call.Method, Name: "memory_clear", Arguments: call.Arguments}, now, elicit.ErrForeign},
		{"a prompt's state on a tool", token, elicit.Binding{Caller: alice, Method: "prompts/get", Name: call.Name, Arguments: call.Arguments}, now, elicit.ErrForeign},
		{"a state for other arguments", token, deleteCall(`{"conversation_id":"c2"}`), now, elicit.ErrForeign},
		{"a state at its expiry", token, call, now.Add(time.Minute), elicit.ErrExpired},
		{"a state past its expiry", token, call, now.Add(time.Hour), elicit.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Open(tt.token, tt.call, tt.at)
			if !errors.Is(err, tt.want) {
				t.Errorf("Open: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestARotatedKeyringSealsWithTheNewestKeyAndOpensWithAny(t *testing.T) {
	call := deleteCall(`{}`)
	old := keyring(t, map[string]string{"k1": secret})
	before, err := old.Seal(call, elicit.State{Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	rotated := keyring(t, map[string]string{"k1": secret, "k9": strings.Repeat("9", 40), "k10": strings.Repeat("t", 40)})
	if got, want := rotated.IDs(), []string{"k1", "k9", "k10"}; !cmp.Equal(got, want) {
		t.Errorf("IDs() = %v, want %v", got, want)
	}
	after, err := rotated.Seal(call, elicit.State{Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(after, "v1.k10.") {
		t.Errorf("sealed %q, want the newest key, k10", after[:8])
	}
	for _, token := range []string{before, after} {
		if _, err := rotated.Open(token, call, now); err != nil {
			t.Errorf("Open(%.8s...): %v", token, err)
		}
	}
	retired := keyring(t, map[string]string{"k10": strings.Repeat("t", 40)})
	if _, err := retired.Open(before, call, now); !errors.Is(err, elicit.ErrRetiredKey) {
		t.Errorf("Open after k1 was retired: %v, want ErrRetiredKey", err)
	}
}

func TestNewKeyringRefusesWeakOrMisnamedKeys(t *testing.T) {
	tests := []struct {
		name    string
		secrets map[string]string
	}{
		{"no keys", nil},
		{"a short secret", map[string]string{"k1": "short"}},
		{"an id that is not k and a number", map[string]string{"primary": secret}},
		{"an id numbered zero", map[string]string{"k0": secret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := elicit.NewKeyring(tt.secrets); err == nil {
				t.Error("NewKeyring succeeded")
			}
		})
	}
}

func TestSealRefusesAStateTooLargeOrWithoutExpiry(t *testing.T) {
	k := keyring(t, map[string]string{"k1": secret})
	if _, err := k.Seal(deleteCall(`{}`), elicit.State{Expires: now, Data: make([]byte, elicit.MaxStateBytes+1)}); err == nil {
		t.Error("sealed a state over MaxStateBytes")
	}
	if _, err := k.Seal(deleteCall(`{}`), elicit.State{}); err == nil {
		t.Error("sealed a state without an expiry")
	}
}
