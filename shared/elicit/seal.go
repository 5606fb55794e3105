package elicit

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Why a request state is refused. The gateway answers each with a JSON-RPC
// invalid-params error whose message is the wrapping error's, which says
// what to do.
var (
	// ErrTampered: the state is not one this server sealed, or was altered.
	ErrTampered = errors.New("requestState is not one this server issued, or it was altered")
	// ErrRetiredKey: the state was sealed with a key no longer in the ring.
	ErrRetiredKey = errors.New("requestState was sealed with a key this server no longer holds")
	// ErrForeign: the state was issued for another caller, tool or arguments.
	ErrForeign = errors.New("requestState was issued for another call")
	// ErrExpired: the state is past its expiry.
	ErrExpired = errors.New("requestState has expired")
	// ErrReplayed: a state meant to be used once was used before ([Spend]).
	ErrReplayed = errors.New("requestState was already used")
)

// MaxTokenBytes bounds the requestState a client may send back.
const MaxTokenBytes = 8192

// State is a request state as the next round receives it: opened, verified,
// and (if Once) spent.
type State struct {
	// ID identifies the state, for [Spend].
	ID string `json:"id"`
	// Expires is when the state stops being accepted.
	Expires time.Time `json:"expires"`
	// Once is [InputRequired.Once].
	Once bool `json:"once,omitempty"`
	// Data is [InputRequired.State].
	Data []byte `json:"data,omitempty"`
}

// Binding is the call a request state belongs to. A state opens only for the
// binding it was sealed with.
type Binding struct {
	// Caller is who called; a state opens only for the same tenant and principal.
	Caller tenant.Caller
	// Method is the MCP method, "tools/call" or "prompts/get"; Name the tool
	// or prompt.
	Method, Name string
	// Arguments are the call's arguments, as the client sent them. They are
	// compared by a digest of their canonical JSON, so a client may re-encode
	// them (another key order, other spacing) between rounds.
	Arguments json.RawMessage
}

// claims are what a sealed state holds: its binding (with the arguments'
// digest), expiry and payload.
type claims struct {
	Tenant    string `json:"t"`
	Principal string `json:"p"`
	Method    string `json:"m"`
	Name      string `json:"n"`
	Args      []byte `json:"a"`
	Expires   int64  `json:"e"` // Unix milliseconds
	ID        string `json:"i"`
	Once      bool   `json:"o,omitempty"`
	Data      []byte `json:"d,omitempty"`
}

// Keyring seals and opens request states. It holds one or more keys, each
// with an id (k1, k2, ...): it seals with the newest (the highest number) and
// opens with whichever sealed the state, so keys can be rotated without
// breaking the exchanges in flight: add a newer key, and retire the older one
// once [MaxTTL] (in practice the longest TTL the tools use) has passed. It is
// safe for concurrent use.
type Keyring struct {
	keys map[string]cipher.AEAD
	ids  []string // oldest first
}

// MinSecretBytes bounds the key material of one key from below.
const MinSecretBytes = keyfile.MinSecretBytes

// NewKeyring returns a keyring of secrets, by key id. Each secret is at least
// [MinSecretBytes] of high-entropy material (random bytes, or a long random
// string such as Secrets Manager generates); the AES-256 key is derived from
// it with HKDF-SHA256.
func NewKeyring(secrets map[string]string) (*Keyring, error) {
	if err := keyfile.Keys(secrets).Check(); err != nil {
		return nil, fmt.Errorf("elicit: %w", err)
	}
	k := &Keyring{keys: map[string]cipher.AEAD{}, ids: keyfile.Keys(secrets).IDs()}
	for id, secret := range secrets {
		block, err := aes.NewCipher(keyfile.Derive(secret, "switchboard request state", id))
		if err != nil {
			return nil, fmt.Errorf("elicit: key %s: %w", id, err)
		}
		if k.keys[id], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("elicit: key %s: %w", id, err)
		}
	}
	return k, nil
}

// IDs returns the ids of k's keys, oldest first.
func (k *Keyring) IDs() []string { return slices.Clone(k.ids) }

// newest returns the id of k's newest key, which seals.
func (k *Keyring) newest() string { return k.ids[len(k.ids)-1] }

// tokenVersion begins every sealed state; a change of format changes it.
const tokenVersion = "v1"

// aad is the additional data of a state sealed with key id: the format and
// the key, so that neither can be swapped.
func aad(id string) []byte { return []byte("switchboard request state " + tokenVersion + " " + id) }

// Seal returns the request state of s, bound to b: "v1.<key id>.<base64url
// nonce and ciphertext>". It gives s a random ID when it has none; s.Expires
// must be set.
func (k *Keyring) Seal(b Binding, s State) (string, error) {
	if s.Expires.IsZero() {
		return "", errors.New("elicit: sealing a state without an expiry")
	}
	if len(s.Data) > MaxStateBytes {
		return "", fmt.Errorf("elicit: state is %d bytes; at most %d are allowed", len(s.Data), MaxStateBytes)
	}
	if s.ID == "" {
		s.ID = randomID()
	}
	digest := ArgumentsDigest(b.Arguments)
	plain, err := json.Marshal(claims{
		Tenant: b.Caller.Tenant, Principal: b.Caller.Principal, Method: b.Method, Name: b.Name, Args: digest[:],
		Expires: s.Expires.UnixMilli(), ID: s.ID, Once: s.Once, Data: s.Data,
	})
	if err != nil {
		return "", fmt.Errorf("elicit: encoding state: %w", err)
	}
	aead := k.keys[k.newest()]
	sealed := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	rand.Read(sealed)
	sealed = aead.Seal(sealed, sealed, plain, aad(k.newest()))
	return tokenVersion + "." + k.newest() + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open returns the state token holds, after checking that k sealed it
// unaltered ([ErrTampered], [ErrRetiredKey]), for binding b ([ErrForeign])
// and that it has not expired at now ([ErrExpired]). It does not spend a
// state meant to be used once: [Spend] does.
func (k *Keyring) Open(token string, b Binding, now time.Time) (State, error) {
	if len(token) > MaxTokenBytes {
		return State{}, fmt.Errorf("%w: it is longer than any this server issues", ErrTampered)
	}
	version, rest, _ := strings.Cut(token, ".")
	id, payload, ok := strings.Cut(rest, ".")
	if version != tokenVersion || !ok {
		return State{}, ErrTampered
	}
	aead, ok := k.keys[id]
	if !ok {
		if keyfile.IsID(id) {
			return State{}, fmt.Errorf("%w (key %s was retired); call again without it to start over", ErrRetiredKey, id)
		}
		return State{}, ErrTampered
	}
	sealed, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || len(sealed) < aead.NonceSize()+aead.Overhead() {
		return State{}, ErrTampered
	}
	nonce, ciphertext := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ciphertext, aad(id))
	if err != nil {
		return State{}, ErrTampered
	}
	var c claims
	if err := json.Unmarshal(plain, &c); err != nil {
		return State{}, ErrTampered // sealed by us, so never: a format change without a version change
	}
	digest := ArgumentsDigest(b.Arguments)
	switch {
	case c.Tenant != b.Caller.Tenant || c.Principal != b.Caller.Principal:
		return State{}, fmt.Errorf("%w: it was issued to another caller", ErrForeign)
	case c.Method != b.Method || c.Name != b.Name:
		return State{}, fmt.Errorf("%w: it was issued for %s %s, not %s %s", ErrForeign, c.Method, c.Name, b.Method, b.Name)
	case subtle.ConstantTimeCompare(c.Args, digest[:]) != 1:
		return State{}, fmt.Errorf("%w: it was issued for other arguments; call again with the arguments of the call that asked, or without requestState to start over", ErrForeign)
	}
	expires := time.UnixMilli(c.Expires)
	if !now.Before(expires) {
		return State{}, fmt.Errorf("%w (at %s); call again without it to be asked again", ErrExpired, expires.UTC().Format(time.RFC3339))
	}
	return State{ID: c.ID, Expires: expires, Once: c.Once, Data: c.Data}, nil
}

// ArgumentsDigest returns the SHA-256 of args' canonical JSON: decoded and
// encoded again, which sorts object keys and drops insignificant space.
// Missing arguments are the empty object; arguments that are not JSON are
// digested as they are (the tool refuses them anyway). Tools that bind records
// of their own to a call's arguments (connector approvals) use it too, so that
// both bindings agree on what "the same arguments" means.
func ArgumentsDigest(args json.RawMessage) [32]byte {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var v any
	if json.Unmarshal(args, &v) == nil {
		if canonical, err := json.Marshal(v); err == nil {
			args = canonical
		}
	}
	return sha256.Sum256(args)
}

// randomID returns 128 random bits, base64url-encoded.
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
