// Package rawjson walks JSON text without decoding it: it validates values,
// finds where they end and reads the few tokens a caller wants, several
// times faster than encoding/json, which scans a value twice, a function
// call per byte. The hot paths that pass JSON through (the
// gateway's tools/call fast path, the invokers' responses, the functions'
// argument checks) use it to avoid decoding what they only forward.
//
//	s := &rawjson.Scanner{Data: body}
//	ok := s.Object(func(key []byte) bool {
//		if string(key) == "name" {
//			name, ok = s.PlainString()
//			return ok
//		}
//		return s.Value() // skip, validating
//	}) && s.AtEnd()
//
// A Scanner is strict: besides invalid JSON it refuses invalid UTF-8 and
// nesting deeper than [MaxDepth], so that whatever it accepts every JSON
// decoder accepts alike. Callers fall back to encoding/json for what it
// refuses.
package rawjson

import (
	"bytes"
	"unicode/utf8"
)

// MaxDepth bounds the nesting a [Scanner] accepts.
const MaxDepth = 64

// Scanner walks the JSON text in Data from Pos. Its methods return false
// for what they do not accept, leaving the Scanner unfit for further use.
type Scanner struct {
	Data []byte
	Pos  int
	// NoNumbers refuses numbers, for values a decoder turns into float64,
	// which overflows where the JSON grammar does not.
	NoNumbers bool
	depth     int
}

func (s *Scanner) space() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// Peek returns the next byte after white space, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.space()
	if s.Pos < len(s.Data) {
		return s.Data[s.Pos]
	}
	return 0
}

// Next consumes c, after white space.
func (s *Scanner) Next(c byte) bool {
	if s.Peek() != c {
		return false
	}
	s.Pos++
	return true
}

// AtEnd reports whether only white space is left.
func (s *Scanner) AtEnd() bool {
	s.space()
	return s.Pos == len(s.Data)
}

// PlainString reads a string of printable ASCII without escapes and
// without <, > or &, returning its content: a string every JSON encoder
// writes byte for byte as it is.
func (s *Scanner) PlainString() ([]byte, bool) {
	if s.Peek() != '"' {
		return nil, false
	}
	start := s.Pos + 1
	j := start + PlainPrefix(s.Data[start:], true)
	if j == len(s.Data) || s.Data[j] != '"' {
		return nil, false
	}
	s.Pos = j + 1
	return s.Data[start:j], true
}

// String skips a string, returning it as written (quotes included) and
// whether it holds escapes.
func (s *Scanner) String() (raw []byte, escaped, ok bool) {
	if s.Peek() != '"' {
		return nil, false, false
	}
	start := s.Pos
	j := start + 1
	for {
		j += PlainPrefix(s.Data[j:], false)
		if j == len(s.Data) {
			return nil, false, false
		}
		switch c := s.Data[j]; {
		case c == '"':
			s.Pos = j + 1
			return s.Data[start:s.Pos], escaped, true
		case c == '\\':
			escaped = true
			if j+1 < len(s.Data) && (s.Data[j+1] == '"' || s.Data[j+1] == '\\') { // the usual ones, quickly
				j += 2
				continue
			}
			n := EscapeLen(s.Data[j:])
			if n == 0 {
				return nil, false, false
			}
			j += n
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s.Data[j:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false, false
			}
			j += n
		default: // a control character
			return nil, false, false
		}
	}
}

// Number skips a number, returning it as written.
func (s *Scanner) Number() ([]byte, bool) {
	s.space()
	end := NumberEnd(s.Data, s.Pos)
	if end < 0 {
		return nil, false
	}
	n := s.Data[s.Pos:end]
	s.Pos = end
	return n, true
}

// Literal consumes lit (true, false or null), after white space.
func (s *Scanner) Literal(lit string) bool {
	s.space()
	if !bytes.HasPrefix(s.Data[s.Pos:], []byte(lit)) {
		return false
	}
	s.Pos += len(lit)
	return true
}

// Value skips one value. Unlike [Scanner.Object], it takes any keys, and
// keys twice: it only checks that the value is valid.
func (s *Scanner) Value() bool {
	switch c := s.Peek(); c {
	case '"':
		_, _, ok := s.String()
		return ok
	case '{', '[':
		if s.depth == MaxDepth {
			return false
		}
		s.Pos++
		s.depth++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if s.Next(end) {
			s.depth--
			return true
		}
		for {
			if c == '{' {
				if _, _, ok := s.String(); !ok || !s.Next(':') {
					return false
				}
			}
			if !s.Value() {
				return false
			}
			if s.Next(end) {
				s.depth--
				return true
			}
			if !s.Next(',') {
				return false
			}
		}
	case 't':
		return s.Literal("true")
	case 'f':
		return s.Literal("false")
	case 'n':
		return s.Literal("null")
	default:
		if s.NoNumbers {
			return false
		}
		_, ok := s.Number()
		return ok
	}
}

// Object reads an object, calling member with each key when the scanner is
// at its value; member must consume the value. Keys must be plain strings
// (see [Scanner.PlainString]); an object with another key, or with a key
// twice among its first eight, is refused.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if !s.Next('{') || s.depth == MaxDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.Next('}') {
		return true
	}
	var seen [8][]byte
	for n := 0; ; n++ {
		key, ok := s.PlainString()
		if !ok || !s.Next(':') {
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
		if !member(key) {
			return false
		}
		if s.Next('}') {
			return true
		}
		if !s.Next(',') {
			return false
		}
	}
}

// Array reads an array, calling elem at each element; elem must consume it.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Next('[') || s.depth == MaxDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.Next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Next(']') {
			return true
		}
		if !s.Next(',') {
			return false
		}
	}
}

// NumberEnd returns where the number at b[i:] ends, or -1 if there is none.
func NumberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i == len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// IsSafeInt reports whether the number n is an integer that survives a
// round trip through float64 and int64 unchanged, written as every encoder
// writes it: at most 15 digits, no fraction, exponent, leading zero or "-0".
func IsSafeInt(n []byte) bool {
	d := n
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (d[0] == '0' && len(n) > 1) {
		return false
	}
	for _, c := range d {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// EscapeLen returns the length of the valid escape sequence b begins with,
// or 0.
func EscapeLen(b []byte) int {
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
			if !isDigit(c) && !('a' <= c && c <= 'f') && !('A' <= c && c <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// PlainPrefix returns how many bytes at the start of b need no attention
// inside a JSON string: printable ASCII other than " and \ (and, if html, <,
// > and &, which encoding/json escapes by default).
func PlainPrefix[S []byte | string](b S, html bool) int {
	t := &plain
	if html {
		t = &plainHTML
	}
	// Four bytes a round: JSON's runs of plain bytes are short, so a table
	// beats testing eight at a time.
	i := 0
	for ; i+4 <= len(b); i += 4 {
		if !t[b[i]] {
			return i
		}
		if !t[b[i+1]] {
			return i + 1
		}
		if !t[b[i+2]] {
			return i + 2
		}
		if !t[b[i+3]] {
			return i + 3
		}
	}
	for ; i < len(b); i++ {
		if !t[b[i]] {
			return i
		}
	}
	return i
}

// plain and plainHTML tell the bytes PlainPrefix skips.
var plain, plainHTML = func() (t, h [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
		h[c] = t[c] && c != '<' && c != '>' && c != '&'
	}
	return t, h
}()

// AppendString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping off (as json.Encoder.SetEscapeHTML(false) does):
// invalid UTF-8 becomes \ufffd, and U+2028 and U+2029 are escaped.
func AppendString[S []byte | string](dst []byte, s S) []byte {
	dst = append(dst, '"')
	for {
		n := PlainPrefix(s, false)
		dst = append(dst, s[:n]...)
		if s = s[n:]; len(s) == 0 {
			return append(dst, '"')
		}
		switch c := s[0]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
			s = s[1:]
		case c < 0x20:
			switch c {
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			s = s[1:]
		default:
			r, size := utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			default:
				dst = append(dst, s[:size]...)
			}
			s = s[size:]
		}
	}
}

const hexDigits = "0123456789abcdef"
