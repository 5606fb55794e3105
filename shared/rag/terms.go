package rag

import (
	"strings"
	"unicode"
)

// terms and tokens analyse text for reranking and confidence. Until package
// text's analyser (text.Terms, text.Tokens: Lucene's stop words, Porter
// stemming) is on this branch, they lowercase, split at anything but letters
// and digits and, for terms, drop a short list of English stop words.
var (
	terms  = simpleTerms
	tokens = simpleTokens
)

func simpleTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func simpleTerms(s string) []string {
	var out []string
	for _, t := range simpleTokens(s) {
		if !stopWords[t] {
			out = append(out, t)
		}
	}
	return out
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with what which who how why when where do does did i you we") {
		stopWords[w] = true
	}
}
