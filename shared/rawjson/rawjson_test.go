package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var values = []string{
	`0`, `-0`, `12`, `-1.5e+10`, `1E3`, `0.25`, `true`, `false`, `null`, `""`, `"a"`,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`, `"é 😀 <b>&</b>"`, `[]`, `{}`, `[1,"a",{"b":[null]}]`,
	` { "a" : [ 1 , 2 ] , "b" : { } } `, `{"a":1,"a":2}`, `"` + strings.Repeat("long plain text ", 20) + `"`,
	// invalid
	``, ` `, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"`, `"\x"`, `"\u12"`, "\"\x01\"", "\"a\xffb\"",
	`[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1,}`, `{1:2}`, `[1 2]`, `{"a":1 "b":2}`, `"unterminated`,
	strings.Repeat("[", 70) + strings.Repeat("]", 70),
}

// TestScannerAcceptsOnlyWhatEncodingJSONAccepts: a Scanner that accepts a
// value is never more lenient than encoding/json, and refuses valid JSON
// only for invalid UTF-8 or deep nesting; reading the value as an object, it
// also refuses keys that are not plain, or twice.
func TestScannerAcceptsOnlyWhatEncodingJSONAccepts(t *testing.T) {
	for _, v := range values {
		check(t, v)
	}
}

func FuzzScanner(f *testing.F) {
	for _, v := range values {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) { check(t, v) })
}

func check(t *testing.T, v string) {
	t.Helper()
	s := &Scanner{Data: []byte(v)}
	got := s.Value() && s.AtEnd()
	want := json.Valid([]byte(v))
	if got && !want {
		t.Errorf("Scanner accepts %q, which encoding/json refuses", v)
	}
	if !got && want && utf8.ValidString(v) && depth(v) < MaxDepth {
		t.Errorf("Scanner refuses %q, valid JSON", v)
	}
	// As an object, keys and all.
	s = &Scanner{Data: []byte(v)}
	var member func([]byte) bool
	member = func([]byte) bool {
		if s.Peek() == '{' {
			return s.Object(member)
		}
		return s.Value()
	}
	got = s.Peek() == '{' && s.Object(member) && s.AtEnd()
	if got && !want {
		t.Errorf("Scanner.Object accepts %q, which encoding/json refuses", v)
	}
	if !got && want && strings.HasPrefix(strings.TrimSpace(v), "{") && utf8.ValidString(v) && depth(v) < MaxDepth && !hasUnplainKey(v) {
		t.Errorf("Scanner.Object refuses %q, valid JSON", v)
	}
}

// depth is the nesting of v, counted loosely (brackets in strings too).
func depth(v string) int {
	d, most := 0, 0
	for _, c := range v {
		switch c {
		case '[', '{':
			d++
			most = max(most, d)
		case ']', '}':
			d--
		}
	}
	return most
}

// hasUnplainKey reports whether v has an object key PlainString refuses, or
// one repeated.
func hasUnplainKey(v string) bool {
	var x any
	if json.Unmarshal([]byte(v), &x) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(x any) bool {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if PlainPrefix([]byte(k), true) != len(k) || walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(x) || hasDuplicateKey(v)
}

// hasDuplicateKey reports whether an object in v has a key twice.
func hasDuplicateKey(v string) bool {
	dec := json.NewDecoder(strings.NewReader(v))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: tok == '{', keys: map[string]bool{}, key: tok == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.keys[tok] {
					return true
				}
				top.keys[tok] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}

func TestPlainPrefixStopsAtEveryByteThatNeedsAttention(t *testing.T) {
	for c := range 256 {
		for _, at := range []int{0, 3, 8, 13} {
			b := []byte(strings.Repeat("x", 20))
			b[at] = byte(c)
			needs := c < 0x20 || c >= 0x80 || c == '"' || c == '\\'
			html := needs || c == '<' || c == '>' || c == '&'
			if got, want := PlainPrefix(b, false), map[bool]int{true: at, false: 20}[needs]; got != want {
				t.Errorf("PlainPrefix(byte %#x at %d, false) = %d, want %d", c, at, got, want)
			}
			if got, want := PlainPrefix(b, true), map[bool]int{true: at, false: 20}[html]; got != want {
				t.Errorf("PlainPrefix(byte %#x at %d, true) = %d, want %d", c, at, got, want)
			}
		}
	}
}

func TestIsSafeInt(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "7": true, "-42": true, "123456789012345": true, "-123456789012345": true,
		"-0": false, "1234567890123456": false, "1.0": false, "1e3": false, "01": false, "": false, "-": false,
	} {
		if got := IsSafeInt([]byte(n)); got != want {
			t.Errorf("IsSafeInt(%q) = %v, want %v", n, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"b\"c\\d"}`, "\x00\b\f\n\r\t\x1f\x7f", "é😀\u2028\u2029", "a\xffb\xe2\x80", "<b>&", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := AppendString(nil, s); string(got)+"\n" != want.String() {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want.Bytes())
		}
		if got := AppendString(nil, []byte(s)); string(got)+"\n" != want.String() {
			t.Errorf("AppendString([]byte(%q)) = %s, want %s", s, got, want.Bytes())
		}
	})
}
