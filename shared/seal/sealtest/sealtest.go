// Package sealtest is the behaviour suite every [seal.Sealer] backend passes:
// round trips, contexts, tampering, truncation, foreign keys and size limits,
// with no error ever quoting the plaintext.
//
//	func TestSealer(t *testing.T) {
//		sealtest.Run(t, func(t *testing.T) seal.Sealer { ... a sealer over a new key ... })
//	}
package sealtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/seal"
)

// secret is the plaintext of most cases; no error may contain it.
const secret = "Bearer sealtest-PLAINTEXT-7f3a9c"

// ec is the encryption context of most cases.
var ec = map[string]string{"tenant": "t1", "connector": "github"}

// Run runs the suite. newSealer returns a sealer over a key of its own: a
// sealer from one call does not hold the keys of a sealer from another.
func Run(t *testing.T, newSealer func(t *testing.T) seal.Sealer) {
	t.Helper()
	s := newSealer(t)
	ctx := t.Context()

	t.Run("a sealed secret opens under the same context", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			plaintext []byte
			ec        map[string]string
		}{
			{"a bearer token", []byte(secret), ec},
			{"an empty secret", nil, ec},
			{"binary with zero bytes", []byte{0, 1, 0, 255, 0}, ec},
			{"the largest secret", bytes.Repeat([]byte{'x'}, seal.MaxPlaintextBytes), ec},
			{"a context of one name with an empty value", []byte(secret), map[string]string{"tenant": ""}},
			{"a context of non-ASCII names and values", []byte(secret), map[string]string{"Mandant": "Müller & Söhne", "connector": "日本"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sealed := mustSeal(t, s, tc.plaintext, tc.ec)
				p, err := seal.Parse(sealed)
				if err != nil {
					t.Fatalf("the sealed output does not parse: %v", err)
				}
				if got, want := len(p.Ciphertext), len(tc.plaintext)+seal.TagBytes; got != want {
					t.Errorf("ciphertext and tag of %d bytes, want %d", got, want)
				}
				got, err := s.Open(ctx, sealed, copyOf(tc.ec))
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if !bytes.Equal(got, tc.plaintext) {
					t.Errorf("Open returned %d other bytes, want the %d sealed", len(got), len(tc.plaintext))
				}
			})
		}
	})

	t.Run("sealing the same secret twice gives different outputs", func(t *testing.T) {
		a, b := mustSeal(t, s, []byte(secret), ec), mustSeal(t, s, []byte(secret), ec)
		if bytes.Equal(a, b) {
			t.Fatal("two seals of one secret are equal")
		}
		pa, _ := seal.Parse(a)
		pb, _ := seal.Parse(b)
		if bytes.Equal(pa.WrappedKey, pb.WrappedKey) || bytes.Equal(pa.Nonce, pb.Nonce) {
			t.Error("two seals share a data key or a nonce")
		}
	})

	sealed := mustSeal(t, s, []byte(secret), ec)

	t.Run("another context is refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			ec   map[string]string
			want error
		}{
			{"another tenant", map[string]string{"tenant": "t2", "connector": "github"}, seal.ErrAltered},
			{"another connector", map[string]string{"tenant": "t1", "connector": "gitlab"}, seal.ErrAltered},
			{"a name more", map[string]string{"tenant": "t1", "connector": "github", "principal": "p1"}, seal.ErrAltered},
			{"a name less", map[string]string{"tenant": "t1"}, seal.ErrAltered},
			{"a value moved into a name", map[string]string{"tenantt1": "", "connector": "github"}, seal.ErrAltered},
			{"no context", nil, seal.ErrContext},
			{"an empty name", map[string]string{"": "t1"}, seal.ErrContext},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.Open(ctx, sealed, tc.ec)
				checkRefused(t, err, tc.want)
			})
		}
	})

	t.Run("a secret sealed with another key is refused", func(t *testing.T) {
		other := newSealer(t)
		_, err := other.Open(ctx, sealed, ec)
		checkRefused(t, err, seal.ErrForeignKey)
		_, err = s.Open(ctx, mustSeal(t, other, []byte(secret), ec), ec)
		checkRefused(t, err, seal.ErrForeignKey)
	})

	t.Run("a change to any field is refused", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			change func(p *seal.Sealed) []byte
			want   error
		}{
			{"the version", func(p *seal.Sealed) []byte { b := p.Marshal(); b[0]++; return b }, seal.ErrMalformed},
			{"the backend", func(p *seal.Sealed) []byte { p.Backend ^= 3; return p.Marshal() }, seal.ErrForeignKey},
			{"the key id", func(p *seal.Sealed) []byte { p.KeyID += "0"; return p.Marshal() }, seal.ErrForeignKey},
			{"the key id's last byte", func(p *seal.Sealed) []byte { p.KeyID = flipLast(p.KeyID); return p.Marshal() }, seal.ErrForeignKey},
			{"the wrapped data key's last byte", func(p *seal.Sealed) []byte { p.WrappedKey = flipLastBytes(p.WrappedKey); return p.Marshal() }, seal.ErrAltered},
			{"the nonce", func(p *seal.Sealed) []byte { p.Nonce[0] ^= 1; return p.Marshal() }, seal.ErrAltered},
			{"the ciphertext", func(p *seal.Sealed) []byte { p.Ciphertext[0] ^= 1; return p.Marshal() }, seal.ErrAltered},
			{"the tag", func(p *seal.Sealed) []byte { p.Ciphertext = flipLastBytes(p.Ciphertext); return p.Marshal() }, seal.ErrAltered},
			{"a byte appended", func(p *seal.Sealed) []byte { return append(p.Marshal(), 0) }, seal.ErrAltered},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := seal.Parse(bytes.Clone(sealed))
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Open(ctx, tc.change(p), ec)
				checkRefused(t, err, tc.want)
			})
		}
		for i := range sealed {
			b := bytes.Clone(sealed)
			b[i] ^= 0x80
			if _, err := s.Open(ctx, b, ec); err == nil {
				t.Errorf("a secret with byte %d of %d changed opened", i, len(sealed))
			} else {
				checkRefused(t, err, nil)
			}
		}
	})

	t.Run("a truncated secret is refused", func(t *testing.T) {
		for n := range len(sealed) {
			_, err := s.Open(ctx, sealed[:n], ec)
			if err == nil {
				t.Errorf("the first %d of %d bytes opened", n, len(sealed))
				continue
			}
			checkRefused(t, err, nil)
		}
	})

	t.Run("sizes are bounded", func(t *testing.T) {
		_, err := s.Seal(ctx, make([]byte, seal.MaxPlaintextBytes+1), ec)
		checkRefused(t, err, seal.ErrTooLarge)
		_, err = s.Open(ctx, make([]byte, seal.MaxSealedBytes+1), ec)
		checkRefused(t, err, seal.ErrTooLarge)
		_, err = s.Seal(ctx, []byte(secret), map[string]string{"tenant": strings.Repeat("t", seal.MaxContextBytes)})
		checkRefused(t, err, seal.ErrContext)
		_, err = s.Seal(ctx, []byte(secret), nil)
		checkRefused(t, err, seal.ErrContext)
	})

	t.Run("concurrent seals and opens each get their own secret", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				plaintext := fmt.Appendf(nil, "%s-%d", secret, i)
				ec := map[string]string{"tenant": fmt.Sprint("t", i)}
				sealed, err := s.Seal(ctx, plaintext, ec)
				if err == nil {
					var got []byte
					if got, err = s.Open(ctx, sealed, ec); err == nil && !bytes.Equal(got, plaintext) {
						err = fmt.Errorf("goroutine %d opened another secret", i)
					}
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// checkRefused fails t unless err is one of the package's refusals (want, if
// not nil) and does not quote the secret.
func checkRefused(t *testing.T, err error, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v", want)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "PLAINTEXT") {
		t.Errorf("the error quotes the secret: %v", err)
	}
	if want != nil {
		if !errors.Is(err, want) {
			t.Errorf("error %q, want %q", err, want)
		}
		return
	}
	for _, sentinel := range []error{seal.ErrAltered, seal.ErrForeignKey, seal.ErrMalformed, seal.ErrTooLarge} {
		if errors.Is(err, sentinel) {
			return
		}
	}
	t.Errorf("error %q is none of the refusals", err)
}

func mustSeal(t *testing.T, s seal.Sealer, plaintext []byte, ec map[string]string) []byte {
	t.Helper()
	sealed, err := s.Seal(context.Background(), plaintext, ec)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if len(plaintext) > 4 && bytes.Contains(sealed, plaintext) {
		t.Fatal("the sealed output contains the plaintext")
	}
	return sealed
}

func copyOf(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func flipLast(s string) string { return string(flipLastBytes([]byte(s))) }

func flipLastBytes(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-1] ^= 1
	return b
}
