package elicit

import (
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/keyfile"
)

// ParseKeyring returns the keyring s describes: a JSON object of secrets by
// key id, {"k1":"...","k2":"..."}, as the deployed gateway receives it from
// Secrets Manager. Errors never quote a secret.
func ParseKeyring(s string) (*Keyring, error) {
	keys, err := keyfile.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("elicit: %w", err)
	}
	return NewKeyring(keys)
}

// NewSecret returns fresh key material: 32 random bytes, base64url-encoded.
func NewSecret() string { return keyfile.NewSecret() }

// LoadKeyFile returns the keyring in the file at path (the format of
// [ParseKeyring]). If there is no such file, it creates one, readable by its
// owner only, holding one new key, k1: a laptop's server keeps its request
// states valid across restarts. A file that others may read is refused.
//
// To rotate, add a newer key ("k2": a value from [NewSecret], or any 43
// random base64url characters) beside the old one and restart; remove the old
// one once the states it sealed have expired.
func LoadKeyFile(path string) (*Keyring, error) {
	keys, err := keyfile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("elicit: %w", err)
	}
	return NewKeyring(keys)
}
