// Package apikey issues and checks the bearer API keys that map a caller to a
// tenant. Only a key's SHA-256 is stored; the key itself is shown once, when
// it is created. Keys are random 256-bit strings, so a plain hash is as strong
// as a slow one would be.
//
//	_apikeys  <sha256 hex>  tenant, principal, scopes, created_at  (expires_at as TTL)
//
//	keys := apikey.New(table, nil)
//	secret, _, _ := keys.Create(ctx, "acme", "ci-bot", time.Time{})
//	caller, err := keys.Verify(ctx, secret) // caller.Tenant == "acme"
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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
	Hash      string
	Tenant    string
	Principal string
	Scopes    []string
	Created   time.Time
	ExpiresAt time.Time
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
// stored and cannot be shown again. A zero expires means the key never expires.
func (k *Keys) Create(ctx context.Context, t, principal string, scopes []string, expires time.Time) (string, Key, error) {
	if err := tenant.Validate(t); err != nil {
		return "", Key{}, err
	}
	if principal == "" || utf8.RuneCountInString(principal) > 128 || strings.ContainsAny(principal, "\x00\n") {
		return "", Key{}, fmt.Errorf("principal %q must be 1-128 characters on one line", principal)
	}
	var b [32]byte
	rand.Read(b[:])
	secret := Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	key := Key{Hash: Hash(secret), Tenant: t, Principal: principal, Scopes: scopes, Created: k.now().UTC(), ExpiresAt: expires}
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

// Verify returns the caller a key stands for, or [ErrInvalidKey].
func (k *Keys) Verify(ctx context.Context, secret string) (tenant.Caller, error) {
	if !strings.HasPrefix(secret, Prefix) || len(secret) > 128 {
		return tenant.Caller{}, ErrInvalidKey
	}
	it, err := k.table.Get(ctx, Partition, Hash(secret))
	if errors.Is(err, store.ErrNotFound) {
		return tenant.Caller{}, ErrInvalidKey
	}
	if err != nil {
		return tenant.Caller{}, fmt.Errorf("apikey: looking up key: %w", err)
	}
	return tenant.Caller{Tenant: it.String("tenant"), Principal: it.String("principal"), Scopes: strings.Fields(it.String("scopes"))}, nil
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
			created, _ := time.Parse(time.RFC3339, it.String("created_at"))
			keys = append(keys, Key{Hash: it.SK, Tenant: it.String("tenant"), Principal: it.String("principal"),
				Scopes: strings.Fields(it.String("scopes")), Created: created, ExpiresAt: it.ExpiresAt})
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
	err := k.table.Delete(ctx, Partition, hash, store.IfExists())
	if errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("apikey: no key with hash %s", hash)
	}
	return err
}
