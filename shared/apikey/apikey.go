// Package apikey issues and checks the bearer API keys that map a caller to a
// tenant. Only a key's SHA-256 is stored; the key itself is shown once, when
// it is created. Keys are random 256-bit strings, so a plain hash is as strong
// as a slow one would be.
//
//	_apikeys  <sha256 hex>  tenant, principal, scopes, profile (JSON), created_at  (expires_at as TTL)
//
//	keys := apikey.New(table, nil)
//	secret, _, _ := keys.Create(ctx, "acme", "ci-bot", nil, time.Time{})
//	key, err := keys.Verify(ctx, secret) // key.Caller().Tenant == "acme"
//
// A key's profile (package profile) limits the tools its caller sees and
// calls; [Keys.SetProfile] sets it, and the zero profile allows every tool.
//
// A key's expiry is kept to the second, as DynamoDB's TTL keeps it: the key
// stops working at the start of that second.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Prefix begins every key, so that a leaked one is recognisable.
const Prefix = "sb_"

// Partition holds every key. It is the one partition not under a tenant:
// a key is looked up before its tenant is known.
const Partition = "_apikeys"

// ErrInvalidKey reports a key that does not exist, was revoked or has expired.
var ErrInvalidKey = errors.New("invalid API key")

// Key describes an issued key. It never holds the key itself.
type Key struct {
	Hash      string   `json:"hash"`
	Tenant    string   `json:"tenant"`
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes,omitempty"`
	// Profile limits the tools the key's caller sees and calls.
	Profile profile.Profile `json:"profile,omitzero"`
	Created time.Time       `json:"created_at"`
	// ExpiresAt is when the key stops working; zero means never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Caller returns the caller the key stands for.
func (k Key) Caller() tenant.Caller {
	return tenant.Caller{Tenant: k.Tenant, Principal: k.Principal, Scopes: k.Scopes}
}

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
}

// Keys stores API keys in a [store.Table]. It is safe for concurrent use.
type Keys struct {
	table store.Table
	now   func() time.Time
}

// New returns Keys kept in table.
func New(table store.Table, opts *Options) *Keys {
	k := &Keys{table: table, now: time.Now}
	if opts != nil && opts.Now != nil {
		k.now = opts.Now
	}
	return k
}

// Hash returns the stored form of key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Create issues a key for principal in tenant t and returns it; it is not
// stored and cannot be shown again. A zero expires means the key never
// expires; otherwise expires, cut to the second, must be in the future.
func (k *Keys) Create(ctx context.Context, t, principal string, scopes []string, expires time.Time) (string, Key, error) {
	if err := tenant.Validate(t); err != nil {
		return "", Key{}, invalid(err)
	}
	if err := tenant.ValidatePrincipal(principal); err != nil {
		return "", Key{}, invalid(err)
	}
	now := k.now().UTC()
	if !expires.IsZero() {
		expires = expires.UTC().Truncate(time.Second)
		if !expires.After(now) {
			return "", Key{}, fault.Invalid("expires", "%s is not in the future (it is %s now): a key must expire later, or never", expires.Format(time.RFC3339), now.Format(time.RFC3339))
		}
	}
	var b [32]byte
	rand.Read(b[:])
	secret := Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	key := Key{Hash: Hash(secret), Tenant: t, Principal: principal, Scopes: scopes, Created: now, ExpiresAt: expires}
	err := k.table.Put(ctx, store.Item{
		PK: Partition, SK: key.Hash,
		Attrs: store.Attrs{
			"tenant": t, "principal": principal, "scopes": strings.Join(scopes, " "),
			"created_at": key.Created.Format(time.RFC3339),
		},
		ExpiresAt: expires,
	}, store.IfAbsent())
	if err != nil {
		return "", Key{}, fmt.Errorf("apikey: storing key: %w", err)
	}
	return secret, key, nil
}

// Verify returns the key secret is, or [ErrInvalidKey] for a key that does
// not exist, was revoked or has expired. A key whose stored tenant or
// principal no longer passes validation (written before it was checked) is
// refused too, so that neither reaches an audit event.
func (k *Keys) Verify(ctx context.Context, secret string) (Key, error) {
	if !strings.HasPrefix(secret, Prefix) || len(secret) > 128 {
		return Key{}, ErrInvalidKey
	}
	it, err := k.table.Get(ctx, Partition, Hash(secret))
	if errors.Is(err, store.ErrNotFound) {
		return Key{}, ErrInvalidKey
	}
	if err != nil {
		return Key{}, fmt.Errorf("apikey: looking up key: %w", err)
	}
	if it.Expired(k.now()) {
		return Key{}, ErrInvalidKey
	}
	key := fromItem(it)
	if tenant.Validate(key.Tenant) != nil || tenant.ValidatePrincipal(key.Principal) != nil {
		return Key{}, fmt.Errorf("%w: its stored tenant or principal is not valid (apikey list shows it)", ErrInvalidKey)
	}
	return key, nil
}

// fromItem returns the key an item of [Partition] describes. A profile
// that no longer decodes or validates (a group since renamed) allows
// nothing, rather than everything.
func fromItem(it store.Item) Key {
	created, _ := time.Parse(time.RFC3339, it.String("created_at"))
	k := Key{Hash: it.SK, Tenant: it.String("tenant"), Principal: it.String("principal"),
		Scopes: strings.Fields(it.String("scopes")), Created: created, ExpiresAt: it.ExpiresAt}
	if raw := it.String("profile"); raw != "" {
		if json.Unmarshal([]byte(raw), &k.Profile) != nil || k.Profile.Validate() != nil {
			k.Profile = profile.Profile{Groups: []string{}, Allow: []string{denyAll}}
		}
	}
	return k
}

// denyAll is the allow list of a stored profile that cannot be read: no tool
// has this name.
const denyAll = "-"

// SetProfile sets the profile of the key whose hash is hash, replacing the
// one it had; the zero profile allows every tool. A gateway that caches
// verified keys applies it within its cache's lifetime.
func (k *Keys) SetProfile(ctx context.Context, hash string, p profile.Profile) (Key, error) {
	if !isHash(hash) {
		return Key{}, fault.Invalid("hash", "%q is not a key's hash: 64 lowercase hexadecimal digits, as apikey list shows them", hash)
	}
	if err := p.Validate(); err != nil {
		return Key{}, err
	}
	it, err := k.table.Get(ctx, Partition, hash)
	if errors.Is(err, store.ErrNotFound) || err == nil && it.Expired(k.now()) {
		return Key{}, fault.NotFound("no key has the hash %s (apikey list shows the live keys)", hash)
	}
	if err != nil {
		return Key{}, fmt.Errorf("apikey: looking up key: %w", err)
	}
	delete(it.Attrs, "profile")
	if !p.IsZero() {
		raw, _ := json.Marshal(p) // strings only
		it.Attrs["profile"] = string(raw)
	}
	// Conditional on the key still existing: a revocation in between wins.
	if err := k.table.Put(ctx, it, store.IfExists()); errors.Is(err, store.ErrConditionFailed) {
		return Key{}, fault.NotFound("no key has the hash %s (apikey list shows the live keys)", hash)
	} else if err != nil {
		return Key{}, fmt.Errorf("apikey: storing the profile: %w", err)
	}
	return fromItem(it), nil
}

// Any reports whether at least one live key exists.
func (k *Keys) Any(ctx context.Context) (bool, error) {
	page, err := k.table.Query(ctx, Partition, store.Query{Limit: 1})
	if err != nil {
		return false, fmt.Errorf("apikey: listing keys: %w", err)
	}
	return len(page.Items) > 0, nil
}

// List returns every live key.
func (k *Keys) List(ctx context.Context) ([]Key, error) {
	var keys []Key
	q := store.Query{Limit: store.MaxQueryLimit}
	for {
		page, err := k.table.Query(ctx, Partition, q)
		if err != nil {
			return nil, fmt.Errorf("apikey: listing keys: %w", err)
		}
		for _, it := range page.Items {
			if !it.Expired(k.now()) {
				keys = append(keys, fromItem(it))
			}
		}
		if page.Next == "" {
			return keys, nil
		}
		q.Cursor = page.Next
	}
}

// Revoke deletes the key whose hash is hash. Revoking a missing key is an error,
// so that a typo does not look like success.
func (k *Keys) Revoke(ctx context.Context, hash string) error {
	if !isHash(hash) {
		return fault.Invalid("hash", "%q is not a key's hash: 64 lowercase hexadecimal digits, as apikey list shows them", hash)
	}
	err := k.table.Delete(ctx, Partition, hash, store.IfExists())
	if errors.Is(err, store.ErrConditionFailed) {
		return fault.NotFound("no key has the hash %s (apikey list shows the live keys)", hash)
	}
	if err != nil {
		return fmt.Errorf("apikey: revoking key: %w", err)
	}
	return nil
}

// invalid classifies err, whose message names the field, as the caller's mistake.
func invalid(err error) error {
	return &fault.Error{Kind: fault.KindInvalid, Message: err.Error(), Err: err}
}

// isHash reports whether s looks like what [Hash] returns.
func isHash(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
