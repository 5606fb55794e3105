// Package seal encrypts small secrets, such as a connector's credentials,
// with envelope encryption: each secret gets a fresh 256-bit data key, the
// secret is encrypted with it by AES-256-GCM, and the data key is kept only
// wrapped, encrypted under a key the backend holds (an AWS KMS key in
// shared/seal/kms, a key file in shared/seal/localkey). Both backends write
// the one sealed format described at [Sealed].
//
// Every secret is sealed under an encryption context, a few names and values
// saying what it belongs to ({"tenant": "t1", "connector": "github"}). It
// opens only under the same context: a sealed value copied into another
// tenant's item, or another connector's, does not open there. The context is
// the additional authenticated data of the secret's encryption, and of the
// data key's wrapping (KMS checks it on Decrypt and, on AWS, a key policy may
// condition on it).
//
//	s, err := localkey.LoadKeyFile(filepath.Join(dataDir, "seal-keys.json"))
//	...
//	ec := map[string]string{"tenant": "t1", "connector": "github"}
//	sealed, err := s.Seal(ctx, []byte("Bearer ghp_..."), ec)
//	...
//	token, err := s.Open(ctx, sealed, ec)
//
// Errors never quote a plaintext or a data key. Opening fails with
// [ErrAltered] when the sealed bytes were changed or the context differs,
// [ErrForeignKey] when another key or backend sealed them, [ErrMalformed]
// when they are not in this format, and [ErrTooLarge] past the size limits.
package seal

import (
	"context"
	"errors"
)

// A Sealer seals secrets of a few KiB under an encryption context ec (such as
// {"tenant": "t1", "connector": "github"}); Open with a different context
// fails. A Sealer is safe for concurrent use.
type Sealer interface {
	// Seal returns plaintext encrypted under ec, in the format of [Sealed].
	// Sealing the same plaintext twice gives different outputs.
	Seal(ctx context.Context, plaintext []byte, ec map[string]string) ([]byte, error)
	// Open returns the plaintext that Seal sealed under ec.
	Open(ctx context.Context, sealed []byte, ec map[string]string) ([]byte, error)
}

// Limits of the format. Seal refuses a larger plaintext, and Open a larger
// sealed input before it allocates anything for it.
const (
	// MaxPlaintextBytes bounds the secret Seal takes: 64 KiB, far more than
	// any header value or OAuth client secret.
	MaxPlaintextBytes = 64 << 10
	// MaxKeyIDBytes bounds the id of a wrapping key (a KMS key ARN is about 80).
	MaxKeyIDBytes = 512
	// MaxWrappedKeyBytes bounds a wrapped data key (a KMS ciphertext blob of a
	// 256-bit key is under 200 bytes).
	MaxWrappedKeyBytes = 1024
	// MaxContextBytes bounds an encryption context, encoded as [CanonicalContext].
	MaxContextBytes = 2048
	// MaxSealedBytes bounds a sealed secret.
	MaxSealedBytes = headerFixedBytes + MaxKeyIDBytes + MaxWrappedKeyBytes + NonceBytes + MaxPlaintextBytes + TagBytes
)

// Why a secret is not sealed or opened; the returned error wraps one of these
// and adds what it can (the field, the key id, the limit).
var (
	// ErrAltered: the sealed secret was changed, or is opened under another
	// encryption context (the two cannot be told apart).
	ErrAltered = errors.New("the sealed secret was altered, or is opened under another encryption context")
	// ErrForeignKey: another key, or another backend, sealed the secret.
	ErrForeignKey = errors.New("the secret was sealed with a key this sealer does not hold")
	// ErrMalformed: the input is not a sealed secret of a version this
	// package reads (truncated, or lengths that do not add up).
	ErrMalformed = errors.New("the input is not a sealed secret")
	// ErrTooLarge: the plaintext or the sealed input is over the limits above.
	ErrTooLarge = errors.New("too large")
	// ErrContext: the encryption context is empty or not within its limits.
	ErrContext = errors.New("the encryption context is not usable")
)

// A Backend names the kind of key that wrapped a data key.
type Backend byte

// The backends; their numbers are part of the sealed format.
const (
	// BackendKMS: an AWS KMS symmetric key (shared/seal/kms).
	BackendKMS Backend = 1
	// BackendLocalKey: a key in a local key file (shared/seal/localkey).
	BackendLocalKey Backend = 2
)

// String returns the backend's name, as errors show it.
func (b Backend) String() string {
	switch b {
	case BackendKMS:
		return "kms"
	case BackendLocalKey:
		return "localkey"
	}
	return "unknown backend"
}

// A KeyWrapper makes and unwraps data keys under one backend's key. Backends
// implement it; [New] builds the [Sealer] on top. Its methods must be safe
// for concurrent use, and are only called with a context [CheckContext]
// accepted.
type KeyWrapper interface {
	// Backend names the backend, recorded in every secret sealed.
	Backend() Backend
	// NewDataKey returns a fresh random 256-bit data key, the same key
	// wrapped under ec, and the id of the key that wrapped it (at most
	// [MaxKeyIDBytes]; the wrapped key at most [MaxWrappedKeyBytes]).
	NewDataKey(ctx context.Context, ec map[string]string) (key, wrapped []byte, keyID string, err error)
	// UnwrapDataKey returns the data key that NewDataKey wrapped with key
	// keyID under ec. It fails with [ErrForeignKey] when it holds no key
	// keyID, and with [ErrAltered] when wrapped or ec differ.
	UnwrapDataKey(ctx context.Context, keyID string, wrapped []byte, ec map[string]string) ([]byte, error)
}
