// Package tenant names who a request acts for. Every stored key begins with
// the caller's tenant, and the tenant always comes from the authenticated
// principal, never from tool arguments.
package tenant

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

// Local is the tenant of an unauthenticated caller on a laptop.
const Local = "local"

// Caller is the authenticated identity a request acts for.
type Caller struct {
	Tenant    string   `json:"tenant"`
	Principal string   `json:"principal"`
	Scopes    []string `json:"scopes,omitempty"`
}

// IDPattern is what a tenant id matches.
const IDPattern = `^[a-z0-9][a-z0-9-]{0,62}$`

// Validate checks a tenant id against [IDPattern]: 1 to 63 lowercase
// letters, digits and hyphens, not starting with a hyphen. Ids never contain
// the '#' that separates key parts.
func Validate(id string) error {
	if !isID(id) {
		return fmt.Errorf("tenant id %q must be 1-63 lowercase letters, digits or hyphens, starting with a letter or digit", id)
	}
	return nil
}

// MaxPrincipalRunes bounds a principal's length, in characters.
const MaxPrincipalRunes = 128

// ValidatePrincipal checks a principal, the name of who holds an API key: 1
// to [MaxPrincipalRunes] printable characters (letters, marks, digits,
// punctuation, symbols and the ASCII space, not at either end), in valid
// UTF-8. Control and format characters are refused (terminal escape
// sequences, bidirectional overrides, zero-width characters), and so are
// other spaces: principals are printed to operators' terminals by the
// apikey command and recorded in every audit event.
func ValidatePrincipal(p string) error {
	n := utf8.RuneCountInString(p)
	switch {
	case n == 0 || n > MaxPrincipalRunes:
		return fmt.Errorf("principal %q must be 1-%d characters", p, MaxPrincipalRunes)
	case !utf8.ValidString(p):
		return fmt.Errorf("principal %q is not valid UTF-8", p)
	case p[0] == ' ' || p[len(p)-1] == ' ':
		return fmt.Errorf("principal %q must not begin or end with a space", p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("principal %q contains the unprintable character %U; use letters, digits, punctuation, symbols and spaces", p, r)
		}
	}
	return nil
}

// Key returns the key prefix every item of tenant t begins with.
func Key(t string) string { return "t#" + t + "#" }

// BlobPrefix returns the prefix every object key of tenant t begins with.
func BlobPrefix(t string) string { return "tenants/" + t + "/" }

// OwnBlobKey checks that key, an object key a caller named in a request,
// lies under the caller's tenant prefix and cannot climb out of it: no ".."
// anywhere (not only as a whole segment, so no backend or proxy that splits
// keys differently can be led upwards), no empty or "." segments, no
// backslashes or NUL bytes. It is checked before anything is read.
func OwnBlobKey(c Caller, key string) error {
	rest, ok := strings.CutPrefix(key, BlobPrefix(c.Tenant))
	if !ok || rest == "" {
		return fmt.Errorf("object key %q is not under your tenant's prefix %q", key, BlobPrefix(c.Tenant))
	}
	if strings.ContainsAny(key, "\x00\\") {
		return fmt.Errorf("object key %q contains a NUL byte or backslash", key)
	}
	if strings.Contains(key, "..") {
		return fmt.Errorf("object key %q contains \"..\"", key)
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" || seg == "." {
			return fmt.Errorf("object key %q has an empty or \".\" segment", key)
		}
	}
	return nil
}

// KeyIDPattern is what an id a caller chooses must match where it becomes
// part of the tenant's keys: conversation ids, trace ids, career ids.
const KeyIDPattern = `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`

// IsKeyID reports whether s matches [KeyIDPattern]: an ASCII letter or
// digit, then up to 127 letters, digits, '_', '.', ':' or '-'.
func IsKeyID(s string) bool {
	if s == "" || len(s) > 128 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

// ValidateThread checks a thread id: a memory conversation id's form
// ([KeyIDPattern]). field names where it came from.
func ValidateThread(field, id string) error {
	if !IsKeyID(id) {
		shown := []rune(id)
		if len(shown) > 80 {
			shown = append(shown[:80], '…')
		}
		return fault.Invalid(field, "%q is not a thread id: use 1-128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", string(shown))
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isID reports whether id matches [IDPattern]. It, like [IsKeyID], is plain
// code rather than the compiled pattern, whose optional repetitions cost
// every process importing it a millisecond at start-up.
func isID(id string) bool {
	if id == "" || len(id) > 63 || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
