package elicit

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ParseKeyring returns the keyring s describes: a JSON object of secrets by
// key id, {"k1":"...","k2":"..."}, as the deployed gateway receives it from
// Secrets Manager. Errors never quote a secret.
func ParseKeyring(s string) (*Keyring, error) {
	var secrets map[string]string
	if err := json.Unmarshal([]byte(s), &secrets); err != nil {
		return nil, errors.New("elicit: the keyring is not a JSON object of key ids to secrets, such as {\"k1\":\"...\"}")
	}
	return NewKeyring(secrets)
}

// NewSecret returns fresh key material: 32 random bytes, base64url-encoded.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// LoadKeyFile returns the keyring in the file at path (the format of
// [ParseKeyring]). If there is no such file, it creates one, readable by its
// owner only, holding one new key, k1: a laptop's server keeps its request
// states valid across restarts. A file that others may read is refused.
//
// To rotate, add a newer key ("k2": a value from [NewSecret], or any 43
// random base64url characters) beside the old one and restart; remove the old
// one once the states it sealed have expired.
func LoadKeyFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = createKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("elicit: key file: %w", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("elicit: key file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("elicit: key file %s may be read by others (mode %v); make it private with chmod 600", path, info.Mode().Perm())
	}
	k, err := ParseKeyring(string(b))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return k, nil
}

// createKeyFile writes a new key file at path, unless another process got
// there first, and returns the file's content.
func createKeyFile(path string) ([]byte, error) {
	content, _ := json.Marshal(map[string]string{"k1": NewSecret()})
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
