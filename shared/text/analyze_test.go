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
		{"stems words with digits as Lucene does", "1990s", []string{"1990"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Terms(tt.in)); diff != "" {
				t.Errorf("Terms(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
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
