package gateway

import (
	"bytes"
	"unicode/utf8"
)

// This file holds the JSON the tools/call fast path (fastpath.go) reads and
// writes without decoding it: a validating scanner for requests, and the
// transcoding of a function's result into what the go-sdk would write for
// it. Both accept only what they can prove the go-sdk handles the same way,
// and report anything else as not handled, so that the caller falls back to
// the go-sdk.

// maxFastDepth bounds the nesting the fast path scans; deeper JSON goes to
// the go-sdk, which accepts up to 1000 levels.
const maxFastDepth = 64

// jsonScanner walks a JSON text. Its methods return false for anything they
// do not handle, which includes invalid JSON.
type jsonScanner struct {
	b []byte
	i int
	// numbers rejects numbers: the go-sdk decodes some values (_meta) into
	// float64, which overflows where the JSON grammar does not.
	numbers bool
	depth   int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// next consumes c, after white space.
func (s *jsonScanner) next(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// atEnd reports whether only white space is left.
func (s *jsonScanner) atEnd() bool {
	s.space()
	return s.i == len(s.b)
}

// plainString reads a string of printable ASCII without escapes (and
// without the characters HTML escaping changes), returning its content:
// the strings every JSON encoder writes byte for byte the same.
func (s *jsonScanner) plainString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' {
			s.i = j + 1
			return s.b[start:j], true
		}
		if stringClass[c] != plain {
			return nil, false
		}
	}
	return nil, false
}

// str skips a valid JSON string of valid UTF-8.
func (s *jsonScanner) str() bool {
	if s.peek() != '"' {
		return false
	}
	j := s.i + 1
	for j < len(s.b) {
		switch stringClass[s.b[j]] {
		case plain, html:
			j++
		case quote:
			s.i = j + 1
			return true
		case backslash:
			n := escapeLen(s.b[j:])
			if n == 0 {
				return false
			}
			j += n
		case multibyte:
			r, n := utf8.DecodeRune(s.b[j:])
			if r == utf8.RuneError && n <= 1 {
				return false
			}
			j += n
		default: // a control character
			return false
		}
	}
	return false
}

// escapeLen returns the length of the valid escape sequence b begins with,
// or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if !isHex(c) {
				return 0
			}
		}
		return 6
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number skips a number and returns it.
func (s *jsonScanner) number() ([]byte, bool) {
	s.space()
	end := numberEnd(s.b, s.i)
	if end < 0 {
		return nil, false
	}
	n := s.b[s.i:end]
	s.i = end
	return n, true
}

// numberEnd returns the end of the JSON number b holds at i, or -1.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isSafeInt reports whether n (a valid JSON number) is an integer that
// survives a round trip through float64 and int64 unchanged, written as
// every encoder writes it: no fraction, exponent, leading zero or "-0".
func isSafeInt(n []byte) bool {
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(n) > 1) {
		return false
	}
	for _, c := range digits {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// value skips one valid JSON value.
func (s *jsonScanner) value() bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(func([]byte) bool { return s.value() })
	case c == '[':
		return s.array()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		if !s.numbers {
			return false
		}
		_, ok := s.number()
		return ok
	}
}

func (s *jsonScanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// object reads an object whose keys are plain strings, calling member with
// each key when the scanner is at its value; member must consume the value.
// Duplicate keys are not handled.
func (s *jsonScanner) object(member func(key []byte) bool) bool {
	if !s.next('{') || s.depth == maxFastDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.next('}') {
		return true
	}
	var seen [8][]byte // enough for the objects read with more than value
	n := 0
	for {
		key, ok := s.plainString()
		if !ok || !s.next(':') {
			return false
		}
		for _, k := range seen[:min(n, len(seen))] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		if n < len(seen) {
			seen[n] = key
		}
		n++
		if !member(key) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

func (s *jsonScanner) array() bool {
	if !s.next('[') || s.depth == maxFastDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.next(']') {
		return true
	}
	for {
		if !s.value() {
			return false
		}
		if s.next(']') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// Classes of bytes inside a JSON string.
const (
	plain     = iota // written as is by every encoder
	quote            // ends the string
	backslash        // begins an escape
	control          // must be escaped
	html             // <, > and &: escaped by encoding/json unless told not to
	multibyte        // part of a UTF-8 sequence
)

var stringClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c < 0x20:
			t[c] = control
		case c == '"':
			t[c] = quote
		case c == '\\':
			t[c] = backslash
		case c == '<' || c == '>' || c == '&':
			t[c] = html
		case c >= utf8.RuneSelf:
			t[c] = multibyte
		}
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendHTMLEscaped appends c (<, > or &) as encoding/json escapes it.
func appendHTMLEscaped(dst []byte, c byte) []byte {
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// lineSeparator reports whether b begins with U+2028 or U+2029, which
// encoding/json escapes everywhere.
func lineSeparator(b []byte) bool {
	return len(b) >= 3 && b[0] == 0xE2 && b[1] == 0x80 && b[2]&^1 == 0xA8
}

// transcodeCanonicalString appends the string src begins with as
// encoding/json writes it with HTML escaping, provided src holds it as
// encoding/json writes it without: the two then differ only in <, > and &.
// It returns the length read from src, or 0 if the string is not in that
// form (an escape encoding/json would not write, invalid UTF-8, a raw
// control character or line separator), when only a decode and encode gives
// the same answer.
func transcodeCanonicalString(dst, src []byte) ([]byte, int) {
	if len(src) == 0 || src[0] != '"' {
		return dst, 0
	}
	dst = append(dst, '"')
	start := 1
	for j := 1; j < len(src); {
		switch stringClass[src[j]] {
		case plain:
			j++
		case quote:
			return append(append(dst, src[start:j]...), '"'), j + 1
		case html:
			dst = appendHTMLEscaped(append(dst, src[start:j]...), src[j])
			j++
			start = j
		case backslash:
			n := canonicalEscapeLen(src[j:])
			if n == 0 {
				return dst, 0
			}
			j += n
		case multibyte:
			r, n := utf8.DecodeRune(src[j:])
			if (r == utf8.RuneError && n <= 1) || r == '\u2028' || r == '\u2029' {
				return dst, 0
			}
			j += n
		default:
			return dst, 0
		}
	}
	return dst, 0
}

// canonicalEscapeLen returns the length of the escape b begins with if
// encoding/json writes that escape for the character it stands for, else 0.
func canonicalEscapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		switch u := string(b[2:6]); {
		case u == "2028" || u == "2029":
			return 6
		case u[0] == '0' && u[1] == '0' && (u[2] == '0' || u[2] == '1') && isLowerHex(u[3]):
			switch c := hexVal(u[2])<<4 | hexVal(u[3]); c {
			case '\b', '\f', '\n', '\r', '\t':
				return 0 // written as \b, \f, \n, \r, \t
			}
			return 6
		}
	}
	return 0
}

func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

func hexVal(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c - 'a' + 10
}

// transcodeCompact appends the JSON value src begins with as encoding/json
// writes a json.RawMessage holding it (compacted, HTML-escaped), provided
// src holds it compact. It returns the length read, or 0 if the value is
// not valid compact JSON.
func transcodeCompact(dst, src []byte) ([]byte, int) {
	t := compactTranscoder{src: src, dst: dst}
	if !t.value(0) {
		return dst, 0
	}
	return append(t.dst, src[t.start:t.i]...), t.i
}

// compactTranscoder copies a compact JSON value, escaping <, >, & and line
// separators in its strings. Runs of bytes that need no change are copied
// at once, from start to i.
type compactTranscoder struct {
	src, dst []byte
	i, start int
}

func (t *compactTranscoder) value(depth int) bool {
	if t.i == len(t.src) || depth > maxFastDepth {
		return false
	}
	switch c := t.src[t.i]; {
	case c == '"':
		return t.str()
	case c == '{':
		t.i++
		if t.i < len(t.src) && t.src[t.i] == '}' {
			t.i++
			return true
		}
		for {
			if t.i == len(t.src) || t.src[t.i] != '"' || !t.str() {
				return false
			}
			if t.i == len(t.src) || t.src[t.i] != ':' {
				return false
			}
			t.i++
			if !t.value(depth + 1) {
				return false
			}
			if t.i == len(t.src) {
				return false
			}
			switch t.src[t.i] {
			case ',':
				t.i++
			case '}':
				t.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		t.i++
		if t.i < len(t.src) && t.src[t.i] == ']' {
			t.i++
			return true
		}
		for {
			if !t.value(depth+1) || t.i == len(t.src) {
				return false
			}
			switch t.src[t.i] {
			case ',':
				t.i++
			case ']':
				t.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return t.literal("true")
	case c == 'f':
		return t.literal("false")
	case c == 'n':
		return t.literal("null")
	default:
		end := numberEnd(t.src, t.i)
		if end < 0 {
			return false
		}
		t.i = end
		return true
	}
}

func (t *compactTranscoder) literal(lit string) bool {
	if !bytes.HasPrefix(t.src[t.i:], []byte(lit)) {
		return false
	}
	t.i += len(lit)
	return true
}

func (t *compactTranscoder) str() bool {
	t.i++ // the opening quote
	for t.i < len(t.src) {
		switch stringClass[t.src[t.i]] {
		case plain:
			t.i++
		case quote:
			t.i++
			return true
		case html:
			t.dst = appendHTMLEscaped(append(t.dst, t.src[t.start:t.i]...), t.src[t.i])
			t.i++
			t.start = t.i
		case backslash:
			n := escapeLen(t.src[t.i:])
			if n == 0 {
				return false
			}
			t.i += n
		case multibyte:
			if lineSeparator(t.src[t.i:]) {
				t.dst = append(append(t.dst, t.src[t.start:t.i]...), '\\', 'u', '2', '0', '2', hexDigits[t.src[t.i+2]&0xF])
				t.i += 3
				t.start = t.i
				continue
			}
			t.i++
		default:
			return false
		}
	}
	return false
}
