package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits s into lowercase tokens: maximal runs of letters, digits and
// combining marks. Hyphens, apostrophes and other punctuation separate tokens
// ("IL-6" gives "il" and "6"), as Lucene's StandardTokenizer does for those
// cases, so the same words match whichever way a document hyphenates them.
// Ideographic and kana characters (Han, Hiragana, Katakana) are one token each,
// since those scripts do not separate words with spaces.
func Tokens(s string) []string {
	var out []string
	eachToken(s, func(tok string) { out = append(out, tok) })
	return out
}

// Terms returns the index terms of s: its [Tokens] without English stop words
// (Lucene's default list, see [IsStopWord]), each reduced by [Stem]. It is the
// analyzer BM25 indexes and queries with.
func Terms(s string) []string {
	var out []string
	eachToken(s, func(tok string) {
		if stopWords[tok] {
			return
		}
		out = append(out, Stem(tok))
	})
	return out
}

// IsStopWord reports whether the lowercase word w is one of the 33 English stop
// words Lucene's EnglishAnalyzer (and so Anserini's BEIR baselines) drop.
func IsStopWord(w string) bool { return stopWords[w] }

var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Nd, r)
}

func isSingleRuneWord(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// eachToken calls emit with each lowercase token of s in order.
func eachToken(s string, emit func(string)) {
	start := -1
	ascii := true
	flush := func(end int) {
		if start < 0 {
			return
		}
		tok := s[start:end]
		if ascii {
			emit(lowerASCII(tok))
		} else {
			emit(strings.ToLower(tok))
		}
		start = -1
		ascii = true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isSingleRuneWord(r):
			flush(i)
			emit(s[i : i+n])
		case isWordRune(r):
			if start < 0 {
				start = i
			}
			ascii = false
		default:
			flush(i)
		}
		i += n
	}
	flush(len(s))
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
