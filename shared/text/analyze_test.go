package text

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"lowercases and splits at punctuation", "Hello, World! IL-6 levels", []string{"hello", "world", "il", "6", "levels"}},
		{"keeps digits inside words", "covid19 in 2019", []string{"covid19", "in", "2019"}},
		{"keeps accented letters", "Naïve Café", []string{"naïve", "café"}},
		{"spells Greek letters out", "IFN-γ TNFα", []string{"ifn", "gamma", "tnfalpha"}},
		{"splits ideographs one by one", "数据库search", []string{"数", "据", "库", "search"}},
		{"empty input gives nothing", " ,.; ", nil},
		{"keeps decimals and thousands", "3.5 mg, 1,000 cells; 2.", []string{"3.5", "mg", "1,000", "cells", "2"}},
		{"keeps apostrophes and dots between letters", "Don't use e.g. U.S. data's", []string{"don't", "use", "e.g", "u.s", "data's"}},
		{"splits a dot between a letter and a digit", "v.2 a,b", []string{"v", "2", "a", "b"}},
		{"joins with underscores", "snake_case _x", []string{"snake_case", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tokens(tt.in)); diff != "" {
				t.Errorf("Tokens(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"drops stop words and stems", "The mice were running to the caves", []string{"mice", "were", "run", "cave"}},
		{"stems only plain ASCII words", "Naïve generalizations", []string{"naïve", "gener"}},
		{"all stop words give nothing", "it is not such a thing", []string{"thing"}},
		{"drops possessives", "Alzheimer's patients’s", []string{"alzheim", "patient"}},
		{"stems words with digits as Lucene does", "1990s", []string{"1990", "1990", "s"}},
		{"adds the letter and digit runs of a mixed word", "IL6 covid19 3.5mg", []string{"il6", "il", "6", "covid19", "covid", "19", "3.5mg", "3.5", "mg"}},
		{"stems each run and drops stop-word runs", "cells2 a1", []string{"cells2", "cell", "2", "a1", "1"}},
		{"leaves words of only letters or only digits whole", "interleukin 2019", []string{"interleukin", "2019"}},
		{"keeps Lucene's short stop list for documents", "does it have more", []string{"doe", "have", "more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Terms(tt.in)); diff != "" {
				t.Errorf("Terms(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"drops Snowball's stop words too", "Does IL6 have more effect than TNF?", []string{"il6", "il", "6", "effect", "tnf"}},
		{"drops Lucene's stop words", "the role of it", []string{"role"}},
		{"keeps content words as Terms does", "Alzheimer's mice", []string{"alzheim", "mice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, QueryTerms(tt.in)); diff != "" {
				t.Errorf("QueryTerms(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestHyphenatedAndJoinedFormsShareTerms(t *testing.T) {
	for _, pair := range [][2]string{{"IL-6", "IL6"}, {"COVID-19", "covid19"}, {"5-HT", "5HT"}} {
		joined := map[string]bool{}
		for _, term := range Terms(pair[1]) {
			joined[term] = true
		}
		for _, term := range Terms(pair[0]) {
			if !joined[term] {
				t.Errorf("term %q of %q is not among the terms of %q (%v)", term, pair[0], pair[1], Terms(pair[1]))
			}
		}
	}
}

func TestIsQueryStopWordExtendsLucenesList(t *testing.T) {
	for w := range stopWords {
		if !IsQueryStopWord(w) {
			t.Errorf("Lucene stop word %q is not a query stop word", w)
		}
	}
	for _, w := range []string{"does", "have", "than", "which", "doesn't"} {
		if !IsQueryStopWord(w) {
			t.Errorf("Snowball stop word %q is not a query stop word", w)
		}
	}
	for _, w := range []string{"cell", "cancer", "il6"} {
		if IsQueryStopWord(w) {
			t.Errorf("content word %q is a query stop word", w)
		}
	}
}

func TestIsStopWordUsesLucenesList(t *testing.T) {
	if !IsStopWord("the") || IsStopWord("were") || len(stopWords) != 33 {
		t.Errorf("stop list differs from Lucene's 33 English stop words (have %d)", len(stopWords))
	}
}

func BenchmarkTerms(b *testing.B) {
	s := "Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development and result in functional disabilities."
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Terms(s)
	}
}
