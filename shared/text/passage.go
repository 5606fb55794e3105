package text

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PassageOptions says how [Passages] cuts a text. Sizes count characters
// (runes), not bytes, so a passage of Japanese holds as many characters as one
// of English.
type PassageOptions struct {
	// Size is the most characters a passage holds. It must be positive.
	Size int
	// Overlap is about how many characters of the end of one passage the next
	// one repeats, so that a sentence cut by a boundary is whole in one of them.
	// It is at most Overlap: the repeated part starts at a word boundary. Zero
	// means no overlap; it must be less than Size.
	Overlap int
	// Max, if positive, is the most passages the text may make: Passages
	// stops at the next one with [ErrTooManyPassages].
	Max int
}

// ErrTooManyPassages is Passages' error for a text that makes more than
// PassageOptions.Max passages.
var ErrTooManyPassages = errors.New("text: too many passages")

// DefaultPassageOptions are the options for retrieval over abstracts, papers,
// resumes and notes: 1500 characters is about 250 English words (300-400
// tokens), so a typical scientific abstract (150-300 words) stays one passage
// and an embedding sees one topic, well under every embedding model's input
// limit; 200 characters of overlap (13%) repeat one or two sentences, enough
// to keep a statement that straddles a boundary whole in one passage without
// storing much text twice.
var DefaultPassageOptions = PassageOptions{Size: 1500, Overlap: 200}

// Passage is one piece of a text cut by [Passages].
type Passage struct {
	// Index is the passage's position: 0, 1, 2, ...
	Index int
	// Text is exactly s[Start:End] of the input s: it starts and ends with a
	// non-space character.
	Text string
	// Start and End are byte offsets into the input.
	Start, End int
}

// Passages cuts s into passages of at most o.Size characters for indexing.
// It cuts at the end of a paragraph (a blank line, or before a Markdown
// heading) where that leaves a passage of at least a third of o.Size, else at
// the end of a sentence, else at a line break, else between words, and only
// when one word is longer than o.Size inside it (at a character boundary,
// never inside a UTF-8 sequence). A Markdown heading is not left at the end of
// a passage when its paragraph follows. Each passage after the first repeats
// at most o.Overlap characters of the one before, from the first sentence
// start within that reach, else from the first word boundary (nothing when
// there is no word boundary, as inside a long word).
//
// Passages trims white space at both ends of each passage; every other
// character of s is in at least one passage. The same s and o always give the
// same passages. A text of only white space has none. Passages returns an
// error when o.Size <= 0, o.Overlap < 0 or o.Overlap >= o.Size, and
// [ErrTooManyPassages] when the text makes more than o.Max passages.
func Passages(s string, o PassageOptions) ([]Passage, error) {
	switch {
	case o.Size <= 0:
		return nil, fmt.Errorf("text: passage size %d: must be positive", o.Size)
	case o.Overlap < 0:
		return nil, fmt.Errorf("text: passage overlap %d: must not be negative", o.Overlap)
	case o.Overlap >= o.Size:
		return nil, fmt.Errorf("text: passage overlap %d: must be less than the size %d", o.Overlap, o.Size)
	}
	var out []Passage
	start := nextNonSpace(s, 0)
	done := 0 // bytes before done are in a passage already
	for start < len(s) {
		end := cutPassage(s, start, done, o.Size)
		if end <= done {
			// The overlap left no room to progress (a long run of white
			// space after it): start afresh after the last passage.
			start = nextNonSpace(s, done)
			if start >= len(s) {
				break
			}
			end = cutPassage(s, start, start, o.Size)
		}
		if o.Max > 0 && len(out) == o.Max {
			return nil, ErrTooManyPassages
		}
		out = append(out, Passage{Index: len(out), Text: s[start:end], Start: start, End: end})
		done = end
		if nextNonSpace(s, end) >= len(s) {
			break
		}
		start = overlapStart(s, start, end, o.Overlap)
	}
	return out, nil
}

// Break strengths, weakest first.
const (
	breakWord = iota + 1
	breakLine
	breakSentence
	breakParagraph
)

// cutPassage returns where the passage starting at the non-space byte start
// ends: at most size runes on, past done, at the strongest break available.
// The result is the byte after the passage's last non-space character.
func cutPassage(s string, start, done, size int) int {
	// latest[k] is the latest acceptable break of strength k.
	var latest [breakParagraph + 1]int
	minRunes := size / 3
	n := 0 // runes from start to i
	i := start
	for i < len(s) && n < size {
		r, w := utf8.DecodeRuneInString(s[i:])
		if i > start && i > done {
			if k := breakAt(s, i, r); k > 0 {
				if k > breakWord && n < minRunes {
					k = breakWord
				}
				latest[k] = i
			}
		}
		i += w
		n++
	}
	if i >= len(s) {
		// The rest fits.
		return trimRightEnd(s, start, len(s))
	}
	// A break right at the window's end (the next rune is white space or
	// starts a word) counts too.
	if i > done {
		r, _ := utf8.DecodeRuneInString(s[i:])
		if k := breakAt(s, i, r); k > 0 {
			if k > breakWord && n < minRunes {
				k = breakWord
			}
			latest[k] = i
		}
	}
	for k := breakParagraph; k >= breakWord; k-- {
		if latest[k] > 0 {
			return latest[k]
		}
	}
	// One word fills the window: cut it at a character boundary.
	return trimRightEnd(s, start, i)
}

// breakAt reports how strong a break it is to end a passage at byte i, where
// rune r starts: 0 when i is inside a word or inside white space. A passage
// ending at i would end with s[:i]'s last rune, which is not white space.
func breakAt(s string, i int, r rune) int {
	if i > 0 && s[i-1] < utf8.RuneSelf && r < utf8.RuneSelf && (asciiSpace(s[i-1]) || !asciiSpace(byte(r))) {
		return 0 // inside an ASCII word or white space: most of every text, checked for every character
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	if unicode.IsSpace(prev) {
		return 0
	}
	if !unicode.IsSpace(r) {
		// Scripts written without spaces break between characters, and
		// after their full stops.
		switch {
		case isFullWidthStop(prev):
			return breakSentence
		case spacelessScript(prev) || spacelessScript(r):
			return breakWord
		}
		return 0
	}
	// Look at the white space run from i and what follows it.
	newlines, j := 0, i
	for j < len(s) {
		c, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsSpace(c) {
			break
		}
		if c == '\n' {
			newlines++
		}
		j += w
	}
	if j >= len(s) {
		return breakParagraph
	}
	if newlines == 0 {
		if sentenceEnds(s[:i], s[j:]) {
			return breakSentence
		}
		return breakWord
	}
	if isATXHeading(lineBefore(s, i)) {
		// Keep a heading with the paragraph after it.
		return breakWord
	}
	next := lineAfter(s, j)
	switch {
	case newlines >= 2, isATXHeading(next):
		return breakParagraph
	case sentenceEnds(s[:i], s[j:]), isMarkdownListItem(next):
		return breakSentence
	}
	return breakLine
}

// asciiSpace reports whether the ASCII byte c is white space, as
// [unicode.IsSpace] says.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// sentenceEnds reports whether the text before ends a sentence, given the
// text after the white space that follows it.
func sentenceEnds(before, after string) bool {
	// Closing quotes and brackets may follow the full stop.
	b := strings.TrimRight(before, `"')]}’”»`)
	if b == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(b)
	switch {
	case last == '.' || last == '!' || last == '?' || last == '…':
	case isFullWidthStop(last):
		return true
	default:
		return false
	}
	// "e.g. the" and "et al. found" go on: a sentence starts with something
	// other than a lowercase letter.
	next, _ := utf8.DecodeRuneInString(after)
	if unicode.IsLower(next) {
		return false
	}
	// "J. Smith": an initial is not the end of a sentence.
	n := 0
	for b != "" && n <= 2 {
		r, w := utf8.DecodeLastRuneInString(b)
		if unicode.IsSpace(r) {
			break
		}
		b = b[:len(b)-w]
		n++
	}
	return n > 2
}

// overlapStart returns where the passage after s[start:end] starts: at the
// first sentence start at most overlap runes before end, else at the first
// word boundary there, else just after end.
func overlapStart(s string, start, end, overlap int) int {
	p := end
	for n := 0; n < overlap && p > start; n++ {
		_, w := utf8.DecodeLastRuneInString(s[:p])
		p -= w
	}
	if p <= start {
		// Never start again where this passage started.
		_, w := utf8.DecodeRuneInString(s[start:])
		p = start + w
	}
	word := -1
	for i := p; i < end; {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			switch {
			case isFullWidthStop(prev):
				return i
			case unicode.IsSpace(prev):
				ws := i - len(s[:i]) + len(strings.TrimRightFunc(s[:i], unicode.IsSpace))
				if ws <= start || sentenceEnds(s[:ws], s[i:]) || strings.Count(s[ws:i], "\n") >= 2 {
					return i
				}
				if word < 0 {
					word = i
				}
			case spacelessScript(prev) || spacelessScript(r):
				if word < 0 {
					word = i
				}
			}
		}
		i += w
	}
	if word >= 0 {
		return word
	}
	return nextNonSpace(s, end)
}

// nextNonSpace returns the offset of the first non-space rune at or after i, or len(s).
func nextNonSpace(s string, i int) int {
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += w
	}
	return i
}

// trimRightEnd returns the end of s[start:end] without its trailing white space.
func trimRightEnd(s string, start, end int) int {
	return start + len(strings.TrimRightFunc(s[start:end], unicode.IsSpace))
}

// maxMarkerLine bounds how far lineBefore and lineAfter look, so that finding
// breaks stays linear in the length of the text: a heading is shorter.
const maxMarkerLine = 256

// lineBefore returns the line of s that ends at byte i, or "" when it is
// longer than maxMarkerLine.
func lineBefore(s string, i int) string {
	from := max(0, i-maxMarkerLine)
	nl := strings.LastIndexByte(s[from:i], '\n')
	if nl < 0 && from > 0 {
		return ""
	}
	return s[from+nl+1 : i]
}

// lineAfter returns the start of the line of s that starts at byte j: enough
// of it to recognise a heading or a list item.
func lineAfter(s string, j int) string {
	line := s[j:min(len(s), j+16)]
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	return line
}

// isATXHeading reports whether line is a Markdown ATX heading ("## Methods").
func isATXHeading(line string) bool {
	line = strings.TrimLeft(line, " ")
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(line) || line[n] == ' ' || line[n] == '\t')
}

// isMarkdownListItem reports whether line starts a Markdown list item ("- a", "2. b").
func isMarkdownListItem(line string) bool {
	line = strings.TrimLeft(line, " \t")
	if len(line) >= 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return true
	}
	n := 0
	for n < len(line) && n < 9 && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && line[n+1] == ' '
}

// spacelessScript reports whether r belongs to a script written without spaces between
// words (Chinese, Japanese; Korean uses spaces).
func spacelessScript(r rune) bool {
	if r < 0x2E80 { // below the CJK blocks: most text, checked for every character
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// isFullWidthStop reports whether r is a full-width sentence end.
func isFullWidthStop(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '｡'
}
