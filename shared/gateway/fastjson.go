package gateway

import (
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/rawjson"
)

// This file transcodes a function's result into what the go-sdk writes for
// it, for the tools/call fast path (fastpath.go), without decoding it. It
// accepts only what it can prove the go-sdk writes the same way, and
// reports anything else, so that the caller takes the go-sdk's way.

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
	for j := 1; ; {
		j += rawjson.PlainPrefix(src[j:], true)
		if j == len(src) {
			return dst, 0
		}
		switch c := src[j]; {
		case c == '"':
			return append(append(dst, src[start:j]...), '"'), j + 1
		case c == '<' || c == '>' || c == '&':
			dst = appendHTMLEscaped(append(dst, src[start:j]...), c)
			j++
			start = j
		case c == '\\':
			if j+1 < len(src) && (src[j+1] == '"' || src[j+1] == '\\') { // the usual ones, quickly
				j += 2
				continue
			}
			n := canonicalEscapeLen(src[j:])
			if n == 0 {
				return dst, 0
			}
			j += n
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(src[j:])
			if (r == utf8.RuneError && n <= 1) || r == '\u2028' || r == '\u2029' {
				return dst, 0
			}
			j += n
		default: // a control character
			return dst, 0
		}
	}
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

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
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
	if t.i == len(t.src) || depth > rawjson.MaxDepth {
		return false
	}
	switch c := t.src[t.i]; {
	case c == '"':
		return t.str()
	case c == '{':
		t.i++
		if t.next('}') {
			return true
		}
		for {
			if t.i == len(t.src) || t.src[t.i] != '"' || !t.str() || !t.next(':') || !t.value(depth+1) {
				return false
			}
			if t.next('}') {
				return true
			}
			if !t.next(',') {
				return false
			}
		}
	case c == '[':
		t.i++
		if t.next(']') {
			return true
		}
		for {
			if !t.value(depth + 1) {
				return false
			}
			if t.next(']') {
				return true
			}
			if !t.next(',') {
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
		end := rawjson.NumberEnd(t.src, t.i)
		if end < 0 {
			return false
		}
		t.i = end
		return true
	}
}

// next consumes c.
func (t *compactTranscoder) next(c byte) bool {
	if t.i < len(t.src) && t.src[t.i] == c {
		t.i++
		return true
	}
	return false
}

func (t *compactTranscoder) literal(lit string) bool {
	if len(t.src)-t.i < len(lit) || string(t.src[t.i:t.i+len(lit)]) != lit {
		return false
	}
	t.i += len(lit)
	return true
}

func (t *compactTranscoder) str() bool {
	t.i++ // the opening quote
	for {
		t.i += rawjson.PlainPrefix(t.src[t.i:], true)
		if t.i == len(t.src) {
			return false
		}
		switch c := t.src[t.i]; {
		case c == '"':
			t.i++
			return true
		case c == '<' || c == '>' || c == '&':
			t.dst = appendHTMLEscaped(append(t.dst, t.src[t.start:t.i]...), c)
			t.i++
			t.start = t.i
		case c == '\\':
			if t.i+1 < len(t.src) && (t.src[t.i+1] == '"' || t.src[t.i+1] == '\\') { // the usual ones, quickly
				t.i += 2
				continue
			}
			n := rawjson.EscapeLen(t.src[t.i:])
			if n == 0 {
				return false
			}
			t.i += n
		case c >= utf8.RuneSelf:
			if lineSeparator(t.src[t.i:]) {
				t.dst = append(append(t.dst, t.src[t.start:t.i]...), '\\', 'u', '2', '0', '2', hexDigits[t.src[t.i+2]&0xF])
				t.i += 3
				t.start = t.i
				continue
			}
			t.i++
		default: // a control character
			return false
		}
	}
}
