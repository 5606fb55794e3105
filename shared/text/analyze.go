package text

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens splits s into lowercase tokens by the rules of Lucene's
// StandardTokenizer (Unicode's word boundaries, UAX #29), simplified: a token
// is a run of letters, digits and combining marks, also holding a "." or an
// apostrophe between two letters or two digits ("u.s.a", "don't", "3.5"), a
// "," or ";" between two digits ("1,000") and "_" between word characters.
// Hyphens and other punctuation separate tokens ("IL-6" gives "il" and "6"),
// so the same words match whichever way a text hyphenates them. Ideographic
// and kana characters (Han, Hiragana, Katakana) are one token each, since
// those scripts do not separate words with spaces.
func Tokens(s string) []string {
	var out []string
	eachToken(s, func(tok string) { out = append(out, tok) })
	return out
}

// Terms returns the index terms of s: its [Tokens] without a possessive 's,
// without English stop words (Lucene's default list, see [IsStopWord]), each
// reduced by [Stem]. A token mixing ASCII letters and digits also gives its
// letter and digit runs, as Lucene's WordDelimiterGraphFilter does with
// splitOnNumerics and preserveOriginal: "IL6" gives "il6", "il" and "6", so it
// matches "IL-6" (tokens "il" and "6") while a search for "IL6" still ranks
// the unhyphenated form first. It is the analyzer BM25 indexes with.
func Terms(s string) []string { return terms(s, stopWords) }

// QueryTerms returns the terms BM25 searches for in a query: [Terms], with
// the larger stop list of Snowball's English stemmer added to Lucene's (see
// [IsQueryStopWord]). Function words such as "does", "have" or "than" match
// most documents and only add noise to a ranking; the index keeps them, so
// the choice costs no reindexing.
func QueryTerms(s string) []string { return terms(s, queryStopWords()) }

func terms(s string, stop map[string]bool) []string {
	var out []string
	eachToken(s, func(tok string) {
		tok = trimPossessive(tok)
		if stop[tok] {
			return
		}
		out = append(out, Stem(tok))
		for _, part := range numericParts(tok) {
			if !stop[part] {
				out = append(out, Stem(part))
			}
		}
	})
	return out
}

// numericParts splits tok at each boundary between an ASCII letter and an
// ASCII digit ("covid19" gives "covid" and "19"); nil if it has none.
func numericParts(tok string) []string {
	var parts []string
	start := 0
	for i := 1; i < len(tok); i++ {
		a, b := tok[i-1], tok[i]
		if isLowerASCII(a) && isDigitASCII(b) || isDigitASCII(a) && isLowerASCII(b) {
			parts = append(parts, tok[start:i])
			start = i
		}
	}
	if parts == nil {
		return nil
	}
	return append(parts, tok[start:])
}

func isLowerASCII(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigitASCII(c byte) bool { return '0' <= c && c <= '9' }

// trimPossessive removes a trailing 's (or ’s), as Lucene's
// EnglishPossessiveFilter does: "Alzheimer's" indexes as "alzheimer".
func trimPossessive(tok string) string {
	for _, suffix := range []string{"'s", "\u2019s", "\uFF07s"} {
		if strings.HasSuffix(tok, suffix) {
			return tok[:len(tok)-len(suffix)]
		}
	}
	return tok
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

// IsQueryStopWord reports whether the lowercase word w is dropped from
// queries ([QueryTerms]): one of Lucene's 33 stop words ([IsStopWord]) or of
// the 174 of Snowball's English stop list (snowballstem.org, english/stop.txt).
func IsQueryStopWord(w string) bool { return queryStopWords()[w] }

// queryStopWords is built on first use: most functions that link this
// package never filter a query, and building it took a share of their cold
// start.
var queryStopWords = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, 200)
	for w := range stopWords {
		m[w] = true
	}
	for _, w := range strings.Fields(snowballStopList) {
		m[w] = true
	}
	return m
})

// snowballStopList is Snowball's English stop list.
const snowballStopList = `
i me my myself we our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their
theirs themselves what which who whom this that these those am is are was
were be been being have has had having do does did doing would should
could ought i'm you're he's she's it's we're they're i've you've we've
they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't
didn't won't wouldn't shan't shouldn't can't cannot couldn't mustn't
let's that's who's what's here's there's when's where's why's how's a an
the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in
out on off over under again further then once here there when where why
how all any both each few more most other some such no nor not only own
same so than too very`

func isSingleRuneWord(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// Rune classes of the tokenizer, after Unicode's word boundary rules (UAX
// #29), which Lucene's StandardTokenizer implements.
const (
	other = iota
	letter
	digit
	midNumLet // . ' ’ : join letters to letters and digits to digits ("u.s", "don't", "3.5")
	midNum    // , ; : join digits to digits ("1,000")
	connector // _ : joins any word characters ("snake_case")
)

func classify(r rune) int {
	switch r {
	case '.', '\'', '\u2018', '\u2019', '\u2024', '\uFE52', '\uFF07', '\uFF0E':
		return midNumLet
	case ',', ';', '\u037E', '\u0589', '\u060C', '\u060D', '\u066C', '\u07F8', '\u2044', '\uFE10', '\uFE14', '\uFE50', '\uFE54', '\uFF0C', '\uFF1B':
		return midNum
	case '_':
		return connector
	}
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
			return letter
		case '0' <= r && r <= '9':
			return digit
		}
		return other
	}
	switch {
	case unicode.IsDigit(r):
		return digit
	case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
		return letter
	}
	return other
}

// joins reports whether a joiner of class j between a rune of class before and
// one of class after keeps them in one token.
func joins(j, before, after int) bool {
	switch j {
	case midNumLet:
		return before == after && (before == letter || before == digit)
	case midNum:
		return before == digit && after == digit
	case connector:
		return (before == letter || before == digit) && (after == letter || after == digit)
	}
	return false
}

// eachToken calls emit with each lowercase token of s in order.
func eachToken(s string, emit func(string)) {
	start, prev := -1, other // token start; class of the token's last rune
	ascii := true
	flush := func(end int) {
		if start < 0 {
			return
		}
		tok := s[start:end]
		if ascii {
			emit(lowerASCII(tok))
		} else {
			emit(foldGreek(strings.ToLower(tok)))
		}
		start, prev, ascii = -1, other, true
	}
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if n > 1 && isSingleRuneWord(r) {
			flush(i)
			emit(s[i : i+n])
			i += n
			continue
		}
		c := classify(r)
		switch c {
		case letter, digit:
			if start < 0 {
				start = i
			}
			if n > 1 {
				ascii = false
			}
			prev = c
		case midNumLet, midNum, connector:
			if start >= 0 && i+n < len(s) {
				next, m := rune(s[i+n]), 1
				if next >= utf8.RuneSelf {
					next, m = utf8.DecodeRuneInString(s[i+n:])
				}
				if !(m > 1 && isSingleRuneWord(next)) && joins(c, prev, classify(next)) {
					if n > 1 {
						ascii = false
					}
					i += n
					continue
				}
			}
			flush(i)
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

// greekNames spells each lowercase Greek letter as scientific English does
// when it avoids the symbol: "TNF-α" and "TNF-alpha" are one term.
var greekNames = map[rune]string{
	'α': "alpha", 'β': "beta", 'γ': "gamma", 'δ': "delta", 'ε': "epsilon", 'ζ': "zeta",
	'η': "eta", 'θ': "theta", 'ι': "iota", 'κ': "kappa", 'λ': "lambda", 'μ': "mu",
	'ν': "nu", 'ξ': "xi", 'ο': "omicron", 'π': "pi", 'ρ': "rho", 'σ': "sigma", 'ς': "sigma",
	'τ': "tau", 'υ': "upsilon", 'φ': "phi", 'χ': "chi", 'ψ': "psi", 'ω': "omega",
	'ϵ': "epsilon", 'ϑ': "theta", 'ϕ': "phi", 'ϰ': "kappa", 'ϱ': "rho", 'µ': "mu",
}

// foldGreek replaces the Greek letters of a lowercase token by their names.
func foldGreek(tok string) string {
	if !strings.ContainsFunc(tok, func(r rune) bool { return greekNames[r] != "" }) {
		return tok
	}
	var b strings.Builder
	for _, r := range tok {
		if name := greekNames[r]; name != "" {
			b.WriteString(name)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
