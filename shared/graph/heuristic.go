package graph

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// HeuristicName is the [Extractor.Name] of [Heuristic].
const HeuristicName = "heuristic-v1"

// TermIDF is the general-English specificity ([text.IDF]) from which a
// single lowercase word is a domain term, and so an entity, on its own:
// "insulin" (8.7) and "eigenvector" (unknown to WordNet) are, "method" (6.3)
// and "protein" (6.7) are not (though "protein kinase" is a phrase).
const TermIDF = 7.0

// MaxNameWords bounds the words of a capitalised name or a phrase.
const MaxNameWords = 4

// MaxEntitiesPerSentence bounds the entities one sentence contributes (the
// first ones), so its relations (every pair) stay few.
const MaxEntitiesPerSentence = 12

// Heuristic is the offline [Extractor]: no model, deterministic. Each
// sentence ([offline.Sentences]) of each chunk is cut into runs of words at
// stop words ([text.IsQueryStopWord]), numbers and punctuation; within a run
// it finds
//
//   - names: a sequence of capitalised words ("Personalized PageRank",
//     "IRIS"); the sentence's first word is one only before another, or when
//     it is an acronym, camel-case, or unknown to English ([text.MaxIDF]);
//   - domain terms: another word of at least [TermIDF] ("eigenvector");
//   - noun phrases: a whole run of two or three words, none in a name, at least one
//     of which is not generic ("entity graph", "damping factor"), since a
//     run between function words is most often a noun phrase.
//
// Every pair of a sentence's entities is a relation. A definition "Long Form
// (LF)", where LF's letters are the initials of the words before it
// (camel-case capitals count: "PageRank" gives P and R), makes LF an alias of
// Long Form.
type Heuristic struct{}

// Name implements [Extractor].
func (Heuristic) Name() string { return HeuristicName }

// Extract implements [Extractor].
func (Heuristic) Extract(ctx context.Context, doc Document) (Extraction, error) {
	x := Extraction{Aliases: map[string]string{}}
	for ci, c := range doc.Chunks {
		if err := ctx.Err(); err != nil {
			return Extraction{}, err
		}
		for _, s := range offline.Sentences(c.Text) {
			names := sentenceEntities(s, x.Aliases)
			if len(names) == 0 {
				continue
			}
			ctx := Context{Chunk: ci, Entities: names}
			for i := range names {
				for j := i + 1; j < len(names); j++ {
					ctx.Relations = append(ctx.Relations, [2]int{i, j})
				}
			}
			x.Contexts = append(x.Contexts, ctx)
		}
	}
	return x, nil
}

// word is one word of a sentence as written.
type word struct {
	s string
	// cut: punctuation other than a space comes before it; paren: an
	// opening bracket does; first: it starts the sentence.
	cut, paren, first bool
}

// words splits a sentence into words: runs of letters and digits, with
// hyphens and apostrophes inside ("IL-6", "don't").
func words(s string) []word {
	var out []word
	cut, paren := false, false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			if r == '(' || r == '[' {
				paren = true
			}
			if !unicode.IsSpace(r) {
				cut = true
			}
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, m := utf8.DecodeRuneInString(s[j:])
			if isWordRune(r) {
				j += m
				continue
			}
			if (r == '-' || r == '\'' || r == '’') && j+m < len(s) {
				if next, _ := utf8.DecodeRuneInString(s[j+m:]); isWordRune(next) {
					j += m
					continue
				}
			}
			break
		}
		out = append(out, word{s: s[i:j], cut: cut, paren: paren})
		cut, paren = false, false
		i = j
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

func isNumeric(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) }) < 0
}

// wordIDF is the specificity of one word, its stem's [text.IDF]; 0 for a
// word without terms.
func wordIDF(w string) float64 {
	ts := text.Terms(w)
	if len(ts) == 0 {
		return 0
	}
	return text.IDF(ts[0])
}

// sentenceEntities returns the entity names of one sentence, in order,
// at most [MaxEntitiesPerSentence], recording acronym definitions in aliases.
func sentenceEntities(s string, aliases map[string]string) []string {
	ws := words(s)
	var out []string
	add := func(name string) {
		if len(out) < MaxEntitiesPerSentence {
			out = append(out, name)
		}
	}
	var run []word // the current run of content words
	flush := func() {
		entitiesOfRun(run, add)
		run = run[:0]
	}
	for i, w := range ws {
		lower := strings.ToLower(w.s)
		if w.cut || text.IsQueryStopWord(lower) || isNumeric(w.s) {
			flush()
		}
		if w.paren && isAcronym(w.s) {
			if long := expansion(ws[:i], w.s); long != "" {
				aliases[w.s] = long
			}
		}
		if text.IsQueryStopWord(lower) || isNumeric(w.s) {
			continue
		}
		first := i == 0
		run = append(run, word{s: w.s, first: first})
	}
	flush()
	return out
}

// entitiesOfRun finds the names, terms and phrases of one run (see
// [Heuristic]).
func entitiesOfRun(run []word, add func(string)) {
	name := make([]bool, len(run))
	for i := len(run) - 1; i >= 0; i-- {
		w := run[i].s
		name[i] = capitalised(w)
		if name[i] && run[i].first {
			// A capital that only starts the sentence makes no name of an
			// English word, unless a name word follows ("Tovar Kelmin").
			next := i+1 < len(run) && name[i+1]
			name[i] = next || isAcronym(w) || innerCapital(w) || wordIDF(w) >= text.MaxIDF()
		}
	}
	anyName := false
	for i := 0; i < len(run); {
		if !name[i] {
			if wordIDF(run[i].s) >= TermIDF {
				add(run[i].s)
			}
			i++
			continue
		}
		anyName = true
		j := i
		for j < len(run) && j-i < MaxNameWords && name[j] {
			j++
		}
		add(join(run[i:j]))
		i = j
	}
	if !anyName && (len(run) == 2 || len(run) == 3) {
		for _, w := range run {
			if wordIDF(w.s) >= text.GenericIDF {
				add(join(run))
				break
			}
		}
	}
}

// innerCapital reports whether w has a capital after its first letter ("PageRank").
func innerCapital(w string) bool {
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

func join(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.s
	}
	return strings.Join(parts, " ")
}

// isAcronym reports whether w is an abbreviation: 2 to 8 letters and digits,
// at least two capitals and no lowercase letter after the first ("PPR",
// "IL6", "BM25").
func isAcronym(w string) bool {
	if len(w) < 2 || len(w) > 8 {
		return false
	}
	upper := 0
	for i, r := range w {
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r) && i > 0, !unicode.IsLetter(r) && !unicode.IsDigit(r):
			return false
		}
	}
	return upper >= 2
}

// expansion returns the words before an acronym that it abbreviates: the
// shortest run of up to [MaxNameWords]+2 trailing words (stop words may sit
// inside, not at either end) whose initials, camel-case capitals included,
// spell the acronym's letters; "" if none do.
func expansion(before []word, acronym string) string {
	letters := strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) {
			return r
		}
		return -1
	}, acronym))
	for k := 1; k <= min(len(before), MaxNameWords+2); k++ {
		span := before[len(before)-k:]
		if text.IsQueryStopWord(strings.ToLower(span[0].s)) {
			continue
		}
		var initials strings.Builder
		for _, w := range span {
			if text.IsQueryStopWord(strings.ToLower(w.s)) {
				continue
			}
			for i, r := range w.s {
				if i == 0 || unicode.IsUpper(r) {
					initials.WriteRune(unicode.ToLower(r))
				}
			}
		}
		if initials.String() == letters {
			return join(span)
		}
	}
	return ""
}
