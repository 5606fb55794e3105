package offline

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/text"
)

// Sentences returns the sentences of passage that can stand in an answer,
// by the rules of the offline generator's answers (see sentences), for other
// extractive text built from passages (the entity graph's community reports).
func Sentences(passage string) []string { return sentences(passage) }

// sentences returns the sentences of a passage that can stand in an answer,
// in order, each with its white space collapsed to single spaces, so that
// every one is a substring of the passage with its white space collapsed
// (issue 10: "Is zstd faster than gzip?" was answered "zstd 1. of gzip.",
// pieces of hard-wrapped lines glued together).
//
// The passage is read as prose or Markdown, hard-wrapped or not:
//
//   - A single line break inside a paragraph is a space; a blank line ends a
//     paragraph, and so does a line that starts a list item, a heading, a
//     table row or a code fence.
//   - Headings (ATX "# x", the line above a setext "===" or "---"
//     underline, a manual page's "DESCRIPTION"), fenced code, table rows,
//     HTML lines and comments, front matter and link reference definitions
//     say nothing an answer can quote, and are left out; so are code
//     blocks indented by a tab, and the start of a passage cut out of a
//     fenced code block.
//   - A list item's marker ("- ", "* ", "1. ", "2) ", a bullet "• ") and
//     a quote's "> " are not part of its sentence.
//   - A sentence ends at ".", "!", "?" or "…" (closing quotes and brackets
//     may follow) before white space, and after a full-width stop; not
//     inside numbers and versions ("1.5", "v1.2.3"), nor after an
//     abbreviation ("e.g.", "Dr.", "et al."), an initial ("J. Smith") or a
//     list number, nor before a lowercase function word ("etc. and"). A
//     sentence may start in lowercase: "zstd offers..." is one.
//
// A passage cut out of a longer text may start or end inside a sentence:
// a first sentence that starts with a lowercase function word ("and the
// ratio...", but not "gzip reduces...") and a last one without a full stop
// after another ended in its paragraph are such pieces, and are left out.
// So are pieces of fewer than [minBareWords] words without a full stop
// (labels such as "Benchmarks" or "Options:").
func sentences(passage string) []string {
	var out []string
	paras := paragraphs(passage)
	for pi, p := range paras {
		ss := splitSentences(p)
		for si, s := range ss {
			switch {
			case pi == 0 && si == 0 && startsInside(s):
				continue // the passage starts inside a sentence
			case !endsWithStop(s) && len(strings.Fields(s)) < minBareWords:
				continue // a label: "Benchmarks", "Options:"
			case !endsSentence(s) && pi == len(paras)-1 && si > 0 && si == len(ss)-1:
				continue // the passage ends inside a sentence
			}
			out = append(out, s)
		}
	}
	return out
}

// minBareWords is how many words a sentence without a full stop needs to
// stand in an answer: a list item says something, a label does not.
const minBareWords = 4

// paragraphs returns the passage's paragraphs that hold prose, each on one
// line with its white space collapsed, without the list or quote marker
// that starts it (a quote's later lines keep theirs: a sentence is always
// the passage's text).
func paragraphs(passage string) []string {
	var out, cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(strings.Fields(strings.Join(cur, " ")), " "))
			cur = nil
		}
	}
	lines := strings.Split(passage, "\n")
	// skipTo, when set, ends what is being skipped: a code fence, an HTML
	// comment, front matter.
	skipTo, indented := "", false
	if startsInFence(lines) {
		skipTo = "```"
	}
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if skipTo != "" {
			if strings.HasPrefix(t, skipTo) || skipTo == "-->" && strings.Contains(t, skipTo) {
				skipTo = ""
			}
			continue
		}
		switch {
		case indented && t != "":
			// Inside a code block indented by a tab, to the next blank line.
		case len(cur) == 0 && strings.HasPrefix(line, "\t"):
			indented = true
		case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			flush()
			skipTo = t[:3]
		case strings.HasPrefix(t, "<!--"):
			flush()
			if !strings.Contains(t[4:], "-->") {
				skipTo = "-->"
			}
		case i == 0 && t == "---":
			skipTo = "---" // YAML front matter
		case t == "":
			indented = false
			flush()
		case isUnderline(t):
			// A setext heading's underline: the line above it is the
			// heading, unless a paragraph of several lines ends there (a
			// "---" after prose is a thematic break).
			if len(cur) == 1 {
				cur = nil
			}
			flush()
		case isHeading(t), len(cur) == 0 && isSectionName(t), t[0] == '|', t[0] == '<', isLinkDefinition(t):
			flush()
		default:
			if rest, ok := cutListMarker(t); ok {
				flush()
				t = rest
			} else if rest, ok := strings.CutPrefix(t, ">"); ok && len(cur) == 0 {
				t = strings.TrimSpace(rest)
			}
			if t != "" {
				cur = append(cur, t)
			}
		}
	}
	flush()
	return out
}

// startsInFence reports whether a passage starts inside a fenced code block
// (the passage was cut out of a longer text there): it has an odd number of
// "```" lines, and the first has no info string, so it closes a block
// rather than opening one.
func startsInFence(lines []string) bool {
	n, first := 0, ""
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") {
			if n == 0 {
				first = t
			}
			n++
		}
	}
	return n%2 == 1 && first == "```"
}

// splitSentences splits one paragraph (white space collapsed) into sentences.
func splitSentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		i += w
		if !isStop(r) {
			continue
		}
		end := i
		for end < len(p) && strings.ContainsRune(closers, rune(p[end])) {
			end++
		}
		if isFullWidthStop(r) {
			for end < len(p) && p[end] == ' ' {
				end++
			}
		} else if end >= len(p) || p[end] != ' ' || !sentenceBreak(p[start:i-w], p[end+1:]) {
			continue
		}
		if s := strings.TrimSpace(p[start:end]); s != "" {
			out = append(out, s)
		}
		start, i = end, end
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// closers may follow a full stop within its sentence.
const closers = `"')]}*_` + "`"

// sentenceBreak reports whether a full stop after before (the sentence so
// far, without the stop) ends the sentence, given the text after the space
// that follows.
func sentenceBreak(before, after string) bool {
	if startsInside(after) {
		return false // "etc. and", "the results, resp. the"
	}
	word := before[strings.LastIndexByte(before, ' ')+1:]
	word = strings.TrimLeft(word, `"'([{*_`+"`")
	lw := strings.ToLower(word)
	switch {
	case abbreviations()[lw]:
		return false
	case utf8.RuneCountInString(word) == 1 && unicode.IsUpper([]rune(word)[0]):
		return false // an initial: "J. Smith"
	case isDotted(lw):
		return false // "e.g", "U.S", "i.e"
	case before == word && isNumber(word):
		return false // a list number: "1. Install"
	}
	return true
}

// abbreviations are the words whose full stop does not end a sentence when
// an uppercase word follows ("Dr. Smith", "Fig. 2", "et al. Later").
var abbreviations = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`mr mrs ms dr prof sr jr st mt vs cf al fig figs eq eqs ref refs approx ca resp
		inc ltd co corp no nos vol vols pp ed eds dept univ jan feb mar apr jun jul aug sep sept oct nov dec`) {
		m[w] = true
	}
	return m
})

// isDotted reports whether w is letters of one or two characters joined by
// full stops ("e.g", "i.e", "u.s"): an abbreviation, not a version.
func isDotted(w string) bool {
	parts := strings.Split(w, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if n := utf8.RuneCountInString(p); n == 0 || n > 2 || strings.IndexFunc(p, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return false
		}
	}
	return true
}

func isNumber(w string) bool {
	return w != "" && strings.IndexFunc(w, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

func isStop(r rune) bool {
	return r == '.' || r == '!' || r == '?' || r == '…' || isFullWidthStop(r)
}

func isFullWidthStop(r rune) bool { return r == '。' || r == '！' || r == '？' || r == '｡' }

// endsSentence reports whether s ends with a full stop (closing quotes and
// brackets may follow), or a colon that introduces what follows.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, closers)
	r, _ := utf8.DecodeLastRuneInString(s)
	return isStop(r) || r == ':'
}

// endsWithStop reports whether s ends with a full stop (closing quotes and
// brackets may follow).
func endsWithStop(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, closers))
	return isStop(r)
}

// startsInside reports whether s starts with a lowercase function word, as
// the rest of a sentence does.
func startsInside(s string) bool {
	w, _, _ := strings.Cut(s, " ")
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLower(r) && (stopwords()[w] || text.IsQueryStopWord(w))
}

// cutListMarker returns line without its list item marker, and whether it
// had one: Markdown's, or a bullet of rendered text ("•", "○" in manual pages).
func cutListMarker(line string) (string, bool) {
	if r, w := utf8.DecodeRuneInString(line); strings.ContainsRune("-*+•◦○●▪‣", r) && w < len(line) && line[w] == ' ' {
		return strings.TrimSpace(line[w:]), true
	}
	n := 0
	for n < len(line) && n < 9 && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && line[n+1] == ' ' {
		return strings.TrimSpace(line[n+2:]), true
	}
	return line, false
}

// isHeading reports whether line is a Markdown ATX heading ("## Usage").
func isHeading(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(line) || line[n] == ' ')
}

// isSectionName reports whether line is a manual page's section name
// ("DESCRIPTION", "EXIT STATUS"): a short line of capitals.
func isSectionName(line string) bool {
	letters := 0
	for _, r := range line {
		switch {
		case unicode.IsLower(r), r != ' ' && !unicode.IsLetter(r):
			return false
		case unicode.IsLetter(r):
			letters++
		}
	}
	return letters >= 2 && len(line) <= 40
}

// isUnderline reports whether line is a setext heading underline or a
// thematic break: only "=", or only "-" (three or more).
func isUnderline(line string) bool {
	return len(line) >= 3 && (strings.Trim(line, "=") == "" || strings.Trim(line, "-") == "")
}

// isLinkDefinition reports whether line is a Markdown link reference
// definition ("[zlib]: https://www.zlib.net/").
func isLinkDefinition(line string) bool {
	if line[0] != '[' {
		return false
	}
	i := strings.Index(line, "]:")
	return i > 1 && !strings.Contains(line[:i], "](")
}
