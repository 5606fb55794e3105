package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"fmt"
)

// Envelope is the [Sealer] of every backend: a fresh data key per secret
// from its [KeyWrapper], AES-256-GCM, the format of [Sealed]. It holds no
// plaintext or data key beyond a call, and is safe for concurrent use if its
// KeyWrapper is.
type Envelope struct {
	w KeyWrapper
}

var _ Sealer = (*Envelope)(nil)

// New returns the Sealer that wraps its data keys with w.
func New(w KeyWrapper) *Envelope { return &Envelope{w: w} }

// Seal implements the [Sealer] interface.
func (e *Envelope) Seal(ctx context.Context, plaintext []byte, ec map[string]string) ([]byte, error) {
	if len(plaintext) > MaxPlaintextBytes {
		return nil, fmt.Errorf("seal: %w: the secret has %d bytes, at most %d are sealed", ErrTooLarge, len(plaintext), MaxPlaintextBytes)
	}
	if err := CheckContext(ec); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	key, wrapped, keyID, err := e.w.NewDataKey(ctx, ec)
	if err != nil {
		return nil, fmt.Errorf("seal: %s: new data key: %w", e.w.Backend(), err)
	}
	defer clear(key)
	if len(keyID) == 0 || len(keyID) > MaxKeyIDBytes || len(wrapped) == 0 || len(wrapped) > MaxWrappedKeyBytes {
		return nil, fmt.Errorf("seal: %s: the key id (%d bytes) or wrapped data key (%d bytes) is outside the format's limits", e.w.Backend(), len(keyID), len(wrapped))
	}
	aead, err := gcm(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %s: %w", e.w.Backend(), err)
	}
	s := &Sealed{Backend: e.w.Backend(), KeyID: keyID, WrappedKey: wrapped, Nonce: make([]byte, NonceBytes)}
	rand.Read(s.Nonce)
	header := s.Header()
	out := make([]byte, 0, len(header)+NonceBytes+len(plaintext)+TagBytes)
	out = append(append(out, header...), s.Nonce...)
	return aead.Seal(out, s.Nonce, plaintext, aad(header, ec)), nil
}

// Open implements the [Sealer] interface.
func (e *Envelope) Open(ctx context.Context, sealed []byte, ec map[string]string) ([]byte, error) {
	s, err := Parse(sealed)
	if err != nil {
		return nil, fmt.Errorf("seal: open: %w", err)
	}
	if err := CheckContext(ec); err != nil {
		return nil, fmt.Errorf("seal: open: %w", err)
	}
	if s.Backend != e.w.Backend() {
		return nil, fmt.Errorf("seal: open: %w: the %s backend sealed it, this sealer is %s", ErrForeignKey, s.Backend, e.w.Backend())
	}
	key, err := e.w.UnwrapDataKey(ctx, s.KeyID, s.WrappedKey, ec)
	if err != nil {
		return nil, fmt.Errorf("seal: open: %s: %w", e.w.Backend(), err)
	}
	defer clear(key)
	aead, err := gcm(key)
	if err != nil {
		return nil, fmt.Errorf("seal: open: %s: %w", e.w.Backend(), err)
	}
	plaintext, err := aead.Open(nil, s.Nonce, s.Ciphertext, aad(s.Header(), ec))
	if err != nil {
		return nil, fmt.Errorf("seal: open: %w", ErrAltered)
	}
	return plaintext, nil
}

// aad returns the additional authenticated data of a secret: its header and
// its encryption context.
func aad(header []byte, ec map[string]string) []byte {
	return append(header[:len(header):len(header)], CanonicalContext(ec)...)
}

// gcm returns AES-256-GCM under a 32-byte key.
func gcm(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("the data key has %d bytes, not 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Wrap encrypts a data key under a backend's own AES-256 key with
// AES-256-GCM, bound to the key id and encryption context, and returns nonce,
// ciphertext and tag: the wrapping of backends whose key is at hand (such as
// shared/seal/localkey).
func Wrap(kek, dataKey []byte, keyID string, ec map[string]string) ([]byte, error) {
	aead, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	out := make([]byte, NonceBytes, NonceBytes+len(dataKey)+TagBytes)
	rand.Read(out)
	return aead.Seal(out, out, dataKey, wrapAAD(keyID, ec)), nil
}

// Unwrap returns the data key [Wrap] wrapped with kek under keyID and ec, or
// [ErrAltered].
func Unwrap(kek, wrapped []byte, keyID string, ec map[string]string) ([]byte, error) {
	aead, err := gcm(kek)
	if err != nil {
		return nil, err
	}
	if len(wrapped) < NonceBytes+TagBytes {
		return nil, fmt.Errorf("%w: the wrapped data key is too short", ErrAltered)
	}
	key, err := aead.Open(nil, wrapped[:NonceBytes], wrapped[NonceBytes:], wrapAAD(keyID, ec))
	if err != nil {
		return nil, ErrAltered
	}
	return key, nil
}

// wrapAAD is the additional authenticated data of a wrapped data key.
func wrapAAD(keyID string, ec map[string]string) []byte {
	b := binary.BigEndian.AppendUint16([]byte("switchboard seal data key\x00"), uint16(len(keyID)))
	b = append(b, keyID...)
	return append(b, CanonicalContext(ec)...)
}
