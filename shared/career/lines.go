package career

import (
	"strings"
	"unicode/utf8"
)

// The resume parser's line patterns, matched by hand: compiling them as
// regular expressions cost the first resume a function parses (its cold
// start) a fifth of a millisecond. Each does what the regular expression in
// its comment does (lines_test.go checks them against it); "space" is what
// \s matches there: ASCII tab, newline, form feed, carriage return and
// space.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func trimLeftSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// markdownHeading matches `^(#{1,6})\s+(.*?)\s*#*\s*$`: an ATX heading's
// level and text, without its closing hashes.
func markdownHeading(line string) (level int, text string, ok bool) {
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level == len(line) || !isSpace(line[level]) {
		return 0, "", false
	}
	text = trimLeftSpace(line[level:])
	text = strings.TrimRight(strings.TrimRight(strings.TrimRight(text, " \t\n\f\r"), "#"), " \t\n\f\r")
	return level, text, true
}

// setextUnderline matches `^\s*(=+|-+)\s*$`.
func setextUnderline(line string) bool {
	s := trimSpace(line)
	return s != "" && (strings.Trim(s, "=") == "" || strings.Trim(s, "-") == "")
}

// thematicBreak matches `^\s*([-*_]\s*){3,}$`.
func thematicBreak(line string) bool {
	marks := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '-' || c == '*' || c == '_':
			marks++
		case !isSpace(c):
			return false
		}
	}
	return marks >= 3
}

// bulletMarks are the marks a bullet may start with, besides "1." and "1)".
const bulletMarks = "-*+•●▪◦‣–·"

// listItem matches `^\s*(?:[-*+•●▪◦‣–·]|\d{1,2}[.)])\s+(.*)$`: a bullet's text.
func listItem(line string) (text string, ok bool) {
	s := trimLeftSpace(line)
	if r, n := utf8.DecodeRuneInString(s); n > 0 && r != utf8.RuneError && strings.ContainsRune(bulletMarks, r) {
		s = s[n:]
	} else {
		digits := 0
		for digits < len(s) && digits < 3 && '0' <= s[digits] && s[digits] <= '9' {
			digits++
		}
		if digits == 0 || digits > 2 || digits == len(s) || (s[digits] != '.' && s[digits] != ')') {
			return "", false
		}
		s = s[digits+1:]
	}
	if s == "" || !isSpace(s[0]) {
		return "", false
	}
	return trimLeftSpace(s), true
}

// sentenceEnds returns what `[.!?](\s+|$)` finds in p: each mark that ends a
// sentence (followed by space or the end) and the space after it, as
// [start, end) pairs.
func sentenceEnds(p string) [][2]int {
	var out [][2]int
	for i := 0; i < len(p); i++ {
		if c := p[i]; c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(p) && isSpace(p[j]) {
			j++
		}
		if j == i+1 && j < len(p) {
			continue
		}
		out = append(out, [2]int{i, j})
		i = j - 1
	}
	return out
}

// atomWords are the words that mark a heading that is not a section name
// ("Engineering Leadership at Acme") as holding atoms.
var atomWords = []string{"experience", "employment", "work", "career", "professional", "project", "projects",
	"skill", "skills", "accomplishment", "accomplishments", "achievement", "achievements", "competence",
	"competencies", "expertise", "qualification", "qualifications", "technology", "technologies", "leadership",
	"highlight", "highlights"}

// hasAtomWord matches `(?i)\b(experience|employment|...|highlights?)\b`: one
// of atomWords, in any case, between word boundaries (where an ASCII letter,
// digit or underscore meets anything else).
func hasAtomWord(h string) bool {
	for i := 0; i < len(h); i++ {
		if (i > 0 && isWordByte(h[i-1])) == isWordByte(h[i]) {
			continue // no boundary at i
		}
		for _, w := range atomWords {
			if n, ok := foldPrefix(h[i:], w); ok && isWordByte(lastByte(h[:i+n])) != (i+n < len(h) && isWordByte(h[i+n])) {
				return true
			}
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func lastByte(s string) byte { return s[len(s)-1] }

// foldPrefix reports whether s starts with the lower-case ASCII word w under
// Unicode simple case folding, as (?i) matches it (so the Kelvin sign
// matches k and the long s matches s), and how many bytes of s it spans.
func foldPrefix(s, w string) (int, bool) {
	n := 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		if n < len(s) && (s[n] == c || s[n] == c-'a'+'A') {
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		if c == 'k' && r == '\u212A' || c == 's' && r == '\u017F' {
			n += size
			continue
		}
		return 0, false
	}
	return n, true
}

func isListItem(line string) bool {
	_, ok := listItem(line)
	return ok
}
