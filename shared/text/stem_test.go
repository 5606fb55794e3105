package text

import "testing"

func TestStemMatchesPorterExamples(t *testing.T) {
	// Pairs from Porter's 1980 paper and from his reference vocabulary
	// (voc.txt / output.txt), which Lucene's PorterStemmer reproduces.
	tests := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky",
		"relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc",
		"hesitanci": "hesit", "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
		"differentli": "differ", "vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
		"predication": "predic", "operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
		"hopefulness": "hope", "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
		"sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend", "adoption": "adopt",
		"homologou": "homolog", "communism": "commun", "activate": "activ", "angulariti": "angular",
		"homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler", "probate": "probat",
		"rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		"generalizations": "gener", "oscillators": "oscil", "running": "run", "mice": "mice",
		"abilities": "abil", "analogies": "analog", "is": "is", "a": "a", "ies": "i",
		"cells": "cell", "proteins": "protein", "expression": "express", "increased": "increas",
	}
	for word, want := range tests {
		if got := Stem(word); got != want {
			t.Errorf("Stem(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestStemLeavesNonASCIIWordsAlone(t *testing.T) {
	for _, w := range []string{"naïve", "straße", "covid19", "über", "", "x"} {
		if got := Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func FuzzStemNeverPanics(f *testing.F) {
	for _, s := range []string{"ies", "yyy", "eed", "sses", "ying", "abcdefghijklmnop"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Stem(s)
	})
}
