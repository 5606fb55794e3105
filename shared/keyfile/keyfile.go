// Package keyfile reads, checks and creates the files that hold a server's
// secret keys on a laptop: a JSON object of key ids to secrets,
//
//	{"k1":"...","k2":"..."}
//
// readable by its owner only. Key ids are k and a number; the highest number is
// the newest key, which seals, while every key in the file still opens what it
// sealed, so keys rotate by adding a newer one and retiring the old one later.
// The request-state keys of shared/elicit and the sealing keys of
// shared/seal/localkey are such files.
//
// Errors never quote a secret, and carry no package prefix: each caller
// prefixes its own ("elicit: ...", "localkey: ...").
package keyfile

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
)

// MinSecretBytes bounds the key material of one key from below.
const MinSecretBytes = 32

// Keys are secrets by key id.
type Keys map[string]string

// NewSecret returns fresh key material: 32 random bytes, base64url-encoded.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IsID reports whether id has the form of a key id: k and a number without
// leading zeros, of up to nine digits.
func IsID(id string) bool {
	if len(id) < 2 || len(id) > 10 || id[0] != 'k' || id[1] == '0' {
		return false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// number returns the number of a key id ([IsID]).
func number(id string) int {
	n, _ := strconv.Atoi(id[1:])
	return n
}

// Check reports whether k is a usable set of keys: at least one, each with an
// id of the form [IsID] and at least [MinSecretBytes] of secret.
func (k Keys) Check() error {
	if len(k) == 0 {
		return errors.New("at least one key is needed")
	}
	for id, secret := range k {
		if !IsID(id) {
			return fmt.Errorf("key id %q must be k followed by a number, such as k1", id)
		}
		if len(secret) < MinSecretBytes {
			return fmt.Errorf("key %s has %d bytes of secret; at least %d are needed", id, len(secret), MinSecretBytes)
		}
	}
	return nil
}

// IDs returns the ids of k, oldest first.
func (k Keys) IDs() []string {
	ids := make([]string, 0, len(k))
	for id := range k {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return number(a) - number(b) })
	return ids
}

// Newest returns the id of the newest key in k, or "" if k is empty.
func (k Keys) Newest() string {
	ids := k.IDs()
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// Parse returns the keys s describes, checked with [Keys.Check].
func Parse(s string) (Keys, error) {
	var k Keys
	if err := json.Unmarshal([]byte(s), &k); err != nil {
		return nil, errors.New("the keys are not a JSON object of key ids to secrets, such as {\"k1\":\"...\"}")
	}
	if err := k.Check(); err != nil {
		return nil, err
	}
	return k, nil
}

// Load returns the keys in the file at path. If there is no such file, it
// creates one, readable by its owner only, holding one new key, k1, so that a
// laptop's server keeps what it sealed across restarts. A file that others may
// read is refused.
func Load(path string) (Keys, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = create(path)
	}
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s may be read by others (mode %v); make it private with chmod 600", path, info.Mode().Perm())
	}
	k, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// create writes a new key file at path, unless another process got there
// first, and returns the file's content.
func create(path string) ([]byte, error) {
	content, _ := json.Marshal(Keys{"k1": NewSecret()})
	content = append(content, '\n')
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, err
	}
	return content, nil
}

// Derive returns the AES-256 key of the key with this id and secret for one
// purpose (such as "switchboard request state"), derived with HKDF-SHA256:
// one file's keys serve several purposes without one key ever doing two jobs.
func Derive(secret, purpose, id string) []byte {
	key, err := hkdf.Key(sha256.New, []byte(secret), []byte(purpose), id, 32)
	if err != nil {
		// hkdf.Key fails only when asked for more than 255 hash lengths.
		panic("keyfile: deriving a 32-byte key: " + err.Error())
	}
	return key
}
