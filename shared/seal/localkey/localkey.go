// Package localkey is the [seal.Sealer] of a laptop: data keys wrapped by
// AES-256-GCM under a key from a local key file (shared/keyfile: a private
// JSON object of key ids to secrets, created on first use), in the same
// sealed format as shared/seal/kms.
//
// The file may hold several keys: the newest (the highest number) seals,
// every key opens what it sealed. To rotate, add a newer key ("k2": a value
// from keyfile.NewSecret) and restart; retire the old one once nothing sealed
// with it is kept. A secret names its key in the sealed format as the key's id
// and a fingerprint of the key, so a key file that has another k1 refuses it
// as foreign rather than as altered.
package localkey

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/keyfile"
	"github.com/switchboard-dev/switchboard/shared/seal"
)

// purpose derives the sealing keys from a key file's secrets (keyfile.Derive).
const purpose = "switchboard sealed secrets"

// LoadKeyFile returns the sealer of the keys in the key file at path,
// creating the file, readable by its owner only, if there is none. A file
// that others may read is refused.
func LoadKeyFile(path string) (*seal.Envelope, error) {
	keys, err := keyfile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("localkey: %w", err)
	}
	return New(keys)
}

// New returns the sealer of keys, which must pass [keyfile.Keys.Check].
func New(keys keyfile.Keys) (*seal.Envelope, error) {
	if err := keys.Check(); err != nil {
		return nil, fmt.Errorf("localkey: %w", err)
	}
	r := &ring{keys: map[string]key{}}
	for _, id := range keys.IDs() {
		k := keyfile.Derive(keys[id], purpose, id)
		mac := hmac.New(sha256.New, k)
		mac.Write([]byte("switchboard seal key fingerprint"))
		r.keys[id] = key{kek: k, name: id + ":" + hex.EncodeToString(mac.Sum(nil)[:8])}
		r.newest = id
	}
	return seal.New(r), nil
}

// ring is the [seal.KeyWrapper] of a key file. It is read-only after New.
type ring struct {
	keys   map[string]key
	newest string
}

// key is one key of a ring: the key encryption key, and the name the sealed
// format records, "<id>:<fingerprint>".
type key struct {
	kek  []byte
	name string
}

// Backend implements the [seal.KeyWrapper] interface.
func (r *ring) Backend() seal.Backend { return seal.BackendLocalKey }

// NewDataKey implements the [seal.KeyWrapper] interface.
func (r *ring) NewDataKey(ctx context.Context, ec map[string]string) (dataKey, wrapped []byte, keyID string, err error) {
	k := r.keys[r.newest]
	dataKey = make([]byte, 32)
	rand.Read(dataKey)
	if wrapped, err = seal.Wrap(k.kek, dataKey, k.name, ec); err != nil {
		return nil, nil, "", err
	}
	return dataKey, wrapped, k.name, nil
}

// UnwrapDataKey implements the [seal.KeyWrapper] interface.
func (r *ring) UnwrapDataKey(ctx context.Context, keyID string, wrapped []byte, ec map[string]string) ([]byte, error) {
	id, _, _ := strings.Cut(keyID, ":")
	k, ok := r.keys[id]
	if !ok || !hmac.Equal([]byte(k.name), []byte(keyID)) {
		if !keyfile.IsID(id) {
			return nil, seal.ErrForeignKey
		}
		return nil, fmt.Errorf("%w: local key %s of another key file, or one retired from this one", seal.ErrForeignKey, id)
	}
	return seal.Unwrap(k.kek, wrapped, keyID, ec)
}
