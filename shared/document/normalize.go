package document

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Normalize returns md in canonical form: valid UTF-8, LF line ends, no
// control characters other than tab and line feed, no white space at the end
// of a line, no blank line at the start or end, never two blank lines in a
// row, and one final line feed unless md is empty. Normalize(Normalize(md))
// == Normalize(md).
func Normalize(md string) string {
	md = strings.ToValidUTF8(md, "\uFFFD")
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\r", "\n")
	md = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\u2028' || r == '\u2029' || r == '\f' || r == '\v' || r == '\u0085':
			return '\n'
		case r == '\uFEFF' || unicode.IsControl(r):
			return -1
		}
		return r
	}, md)
	var b strings.Builder
	b.Grow(len(md))
	blank := true // at the start, as after a blank line
	pendingBlank := false
	for line := range strings.SplitSeq(md, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if line == "" {
			pendingBlank = !blank
			continue
		}
		if pendingBlank {
			b.WriteByte('\n')
			pendingBlank = false
		}
		b.WriteString(line)
		b.WriteByte('\n')
		blank = false
	}
	return b.String()
}

// decodeText returns the text of a .txt or .md file: UTF-8, or UTF-16 with a
// byte order mark, else Windows-1252 (a superset of Latin-1). What it
// produces is reserved from lim first.
func decodeText(data []byte, lim *limits) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeUTF16(data[2:], false, lim)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeUTF16(data[2:], true, lim)
	case !utf8.Valid(data):
		return decodeWinAnsi(data, lim)
	}
	if err := lim.produce(len(data)); err != nil {
		return "", err
	}
	return string(data), nil
}

// decodeUTF16 decodes UTF-16 big- or little-endian; an odd last byte is
// dropped, an unpaired surrogate becomes U+FFFD.
func decodeUTF16(data []byte, bigEndian bool, lim *limits) (string, error) {
	b := textBuf{lim: lim}
	unit := func(i int) rune {
		if bigEndian {
			return rune(data[i])<<8 | rune(data[i+1])
		}
		return rune(data[i+1])<<8 | rune(data[i])
	}
	for i := 0; i+1 < len(data) && lim.err == nil; i += 2 {
		r := unit(i)
		if utf16.IsSurrogate(r) && i+3 < len(data) {
			if dec := utf16.DecodeRune(r, unit(i+2)); dec != unicode.ReplacementChar {
				r = dec
				i += 2
			}
		}
		if utf16.IsSurrogate(r) {
			r = unicode.ReplacementChar
		}
		b.writeRune(r)
	}
	return b.String(), lim.err
}

// winAnsi80 maps Windows-1252 bytes 0x80-0x9F; the rest are Latin-1.
var winAnsi80 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

// winAnsiRune returns the character of byte c in Windows-1252.
func winAnsiRune(c byte) rune {
	if c >= 0x80 && c < 0xA0 {
		return winAnsi80[c-0x80]
	}
	return rune(c)
}

// decodeWinAnsi decodes Windows-1252.
func decodeWinAnsi(data []byte, lim *limits) (string, error) {
	b := textBuf{lim: lim}
	for _, c := range data {
		b.writeRune(winAnsiRune(c))
		if lim.err != nil {
			break
		}
	}
	return b.String(), lim.err
}

// firstHeading returns the text of md's first heading (ATX "# Title", or
// setext: a line underlined with "===" or "---") outside code fences, or "".
func firstHeading(md string) string {
	md, _ = cutFrontMatter(md)
	fence, prev := "", ""
	for line := range strings.SplitSeq(md, "\n") {
		last := prev
		prev = strings.TrimSpace(line)
		if u := strings.TrimSpace(line); last != "" && fence == "" && len(u) >= 3 &&
			(strings.Trim(u, "=") == "" || strings.Trim(u, "-") == "") && !strings.HasPrefix(last, "#") {
			return last
		}
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		n := 0
		for n < len(t) && t[n] == '#' {
			n++
		}
		if n < 1 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
			continue
		}
		h := strings.TrimSpace(t[n:])
		// A closing sequence of #s is not part of the heading.
		if trimmed := strings.TrimRight(h, "#"); trimmed == "" || strings.HasSuffix(trimmed, " ") {
			h = strings.TrimSpace(trimmed)
		}
		if h != "" {
			return h
		}
	}
	return ""
}

// cutFrontMatter splits a leading YAML front matter block ("---" lines
// around "key: value" lines) from md, returning the rest and the block.
func cutFrontMatter(md string) (rest, front string) {
	if !strings.HasPrefix(md, "---\n") {
		return md, ""
	}
	end := strings.Index(md[4:], "\n---\n")
	if end < 0 {
		return md, ""
	}
	return md[4+end+5:], md[4 : 4+end]
}

// frontMatterTitle returns the title: entry of md's front matter, or "".
func frontMatterTitle(md string) string {
	_, front := cutFrontMatter(md)
	for line := range strings.SplitSeq(front, "\n") {
		if v, ok := strings.CutPrefix(line, "title:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}
