package seal

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Version is the version of the sealed format this package writes, its first byte.
const Version = 1

// Sizes of the format's fixed parts.
const (
	// NonceBytes is the size of an AES-GCM nonce.
	NonceBytes = 12
	// TagBytes is the size of an AES-GCM authentication tag.
	TagBytes = 16
	// headerFixedBytes: version, backend and the two lengths.
	headerFixedBytes = 1 + 1 + 2 + 2
)

// Sealed is a sealed secret, in the format every backend writes (version 1;
// integers big-endian):
//
//	offset  size  field
//	0       1     version, 1
//	1       1     backend (1 kms, 2 localkey)
//	2       2     n, the length of the key id (1 to MaxKeyIDBytes)
//	4       n     key id: the key that wrapped the data key (a KMS key ARN; a local key's id and fingerprint)
//	4+n     2     m, the length of the wrapped data key (1 to MaxWrappedKeyBytes)
//	6+n     m     wrapped data key (a KMS ciphertext blob; a local key's nonce, ciphertext and tag)
//	6+n+m   12    nonce
//	18+n+m  rest  AES-256-GCM ciphertext of the secret under the data key, and its 16-byte tag
//
// The secret's additional authenticated data is the header (every byte before
// the nonce) followed by [CanonicalContext] of the encryption context, so
// neither the header nor the context can change without Open failing.
type Sealed struct {
	Backend    Backend
	KeyID      string
	WrappedKey []byte
	Nonce      []byte
	Ciphertext []byte // with its tag
}

// Parse returns the parts of a sealed secret, without opening it: which
// backend and key sealed it. It fails with [ErrTooLarge] for input over
// [MaxSealedBytes] and with [ErrMalformed] for anything not in the format.
// The parts share b's memory.
func Parse(b []byte) (*Sealed, error) {
	if len(b) > MaxSealedBytes {
		return nil, fmt.Errorf("%w: the sealed secret has %d bytes, more than the %d any holds", ErrTooLarge, len(b), MaxSealedBytes)
	}
	if len(b) < headerFixedBytes {
		return nil, fmt.Errorf("%w: it is %d bytes long, shorter than any", ErrMalformed, len(b))
	}
	if b[0] != Version {
		return nil, fmt.Errorf("%w: format version %d, this server reads version %d", ErrMalformed, b[0], Version)
	}
	s := &Sealed{Backend: Backend(b[1])}
	rest := b[2:]
	keyID, rest, ok := field(rest, MaxKeyIDBytes)
	if !ok {
		return nil, fmt.Errorf("%w: the key id's length does not fit", ErrMalformed)
	}
	s.KeyID = string(keyID)
	if s.WrappedKey, rest, ok = field(rest, MaxWrappedKeyBytes); !ok {
		return nil, fmt.Errorf("%w: the wrapped data key's length does not fit", ErrMalformed)
	}
	if len(rest) < NonceBytes+TagBytes {
		return nil, fmt.Errorf("%w: it ends before the ciphertext's tag", ErrMalformed)
	}
	s.Nonce, s.Ciphertext = rest[:NonceBytes], rest[NonceBytes:]
	return s, nil
}

// field returns the field of b that a 2-byte length of 1 to max prefixes,
// and what follows it.
func field(b []byte, max int) (f, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 || n > max || len(b)-2 < n {
		return nil, nil, false
	}
	return b[2 : 2+n], b[2+n:], true
}

// Header returns the bytes of s before its nonce, as [Sealed.Marshal] writes
// them.
func (s *Sealed) Header() []byte {
	b := make([]byte, 0, headerFixedBytes+len(s.KeyID)+len(s.WrappedKey))
	b = append(b, Version, byte(s.Backend))
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.KeyID)))
	b = append(b, s.KeyID...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(s.WrappedKey)))
	return append(b, s.WrappedKey...)
}

// Marshal returns s in the sealed format. The caller keeps the lengths
// within the format's limits; [Parse] refuses what is not.
func (s *Sealed) Marshal() []byte {
	b := s.Header()
	b = append(b, s.Nonce...)
	return append(b, s.Ciphertext...)
}

// CanonicalContext returns the encoding of an encryption context that is
// authenticated with a secret: for each name in sorted order, the name's
// length (2 bytes, big-endian), the name, the value's length and the value.
// Unlike JSON it is unambiguous for any bytes.
func CanonicalContext(ec map[string]string) []byte {
	names := make([]string, 0, len(ec))
	n := 0
	for k, v := range ec {
		names = append(names, k)
		n += 4 + len(k) + len(v)
	}
	slices.Sort(names)
	b := make([]byte, 0, n)
	for _, k := range names {
		b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
		b = append(b, k...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(ec[k])))
		b = append(b, ec[k]...)
	}
	return b
}

// CheckContext reports whether ec can be an encryption context: at least one
// name, no empty name, and at most [MaxContextBytes] encoded. A context is
// required because a secret sealed without one could be moved to any record
// and still open there.
func CheckContext(ec map[string]string) error {
	if len(ec) == 0 {
		return fmt.Errorf("%w: it is empty; name what the secret belongs to, such as tenant and connector", ErrContext)
	}
	n := 0
	for k, v := range ec {
		if k == "" {
			return fmt.Errorf("%w: a name is empty", ErrContext)
		}
		n += 4 + len(k) + len(v)
	}
	if n > MaxContextBytes {
		return fmt.Errorf("%w: it encodes to %d bytes, more than %d", ErrContext, n, MaxContextBytes)
	}
	return nil
}
