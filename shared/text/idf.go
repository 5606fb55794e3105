package text

import (
	"cmp"
	_ "embed"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// idfTable holds the document frequencies behind [IDF]; see
// scripts/wordnet-idf, which writes it.
//
//go:embed idf.txt
var idfTable string

var idf struct {
	once sync.Once
	n    float64
	// body is the table's "term count" lines, in the order of their terms
	// (scripts/wordnet-idf sorts them): a slice of the embedded text,
	// searched in place. Building a map of it cost each function that
	// grades offline 1.5 ms of its cold start, and a slice of its 17,000
	// lines a quarter of that; a lookup is a binary search of the text.
	body string
}

// IDF returns how informative the term t ([Terms] gives terms) is in general
// English: its inverse document frequency ln(1 + N/(df+0.5)) over the N
// glosses of WordNet 3.0, df of which hold t (117,659 glosses; "use" 2.9,
// "egg" 6.1, "marathon" 9.1). A term in fewer than three glosses, such as a
// product name or a word of another language, gets [MaxIDF]. Offline
// relevance judgements weigh a question's terms with it, so that sharing
// "egg" with a passage counts for more than sharing "use", without the
// statistics of the store being searched. The table loads on first use.
func IDF(t string) float64 {
	idf.once.Do(loadIDF)
	return math.Log(1 + idf.n/(float64(documentFrequency(t))+0.5))
}

// MaxIDF is [IDF] of a term no gloss holds.
func MaxIDF() float64 { return IDF("") }

// documentFrequency returns the number of glosses that hold t, 0 if the
// table lacks it: a binary search of the table's lines by byte offset.
func documentFrequency(t string) int {
	body := idf.body
	for body != "" {
		start := strings.LastIndexByte(body[:len(body)/2], '\n') + 1
		end := strings.IndexByte(body[start:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += start
		}
		term, count, _ := strings.Cut(body[start:end], " ")
		switch c := strings.Compare(term, t); {
		case c == 0:
			n, _ := strconv.Atoi(count) // TestIDFTableIsWellFormed checks every count
			return n
		case c < 0:
			body = body[min(end+1, len(body)):]
		default:
			body = body[:start]
		}
	}
	return 0
}

// loadIDF reads the table's gloss count, the line before its terms.
func loadIDF() {
	rest := idfTable
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		if count, ok := strings.CutPrefix(line, "N "); ok {
			n, err := strconv.Atoi(count)
			if err != nil {
				panic("text: idf.txt: " + line) // the embedded table is generated; a test reads it
			}
			idf.n, idf.body = float64(n), rest
			return
		}
	}
	panic("text: idf.txt has no gloss count") // the embedded table is generated; a test reads it
}

// Coverage returns the share of question's content that passage holds: the
// sum of [IDF] over the distinct [QueryTerms] of question that passage's
// [Terms] include, divided by their sum over all of them; 0 when question
// has no query term. "How long do I boil an egg?" is 0.35 covered by a
// passage about eggs (IDF: egg 6.1 of long 4.5 + boil 6.8 + egg 6.1): most
// of what it asks is missing.
func Coverage(question, passage string) float64 {
	q := distinct(QueryTerms(question))
	if len(q) == 0 {
		return 0
	}
	has := map[string]bool{}
	for _, t := range Terms(passage) {
		has[t] = true
	}
	var covered, total float64
	for _, t := range q {
		w := IDF(t)
		total += w
		if has[t] {
			covered += w
		}
	}
	return covered / total
}

// GenericIDF is the [IDF] below which a term is a generic word ("use",
// "make", "long", "like"): [KeyWords] never returns one.
const GenericIDF = 4.5

// KeyWords returns up to n words that characterise texts, best first, as
// written (lowercased), for expanding a search query: each term of each
// text scores weights[i] times its share of text i's terms, summed over the
// texts, times its [IDF] (relevance feedback as RM3 does it, with general
// English's IDF standing in for the collection's), so the words that recur
// in the heaviest texts and are rare in general English win. Query stop
// words, numbers, single characters, generic words ([GenericIDF]) and the
// terms for which skip reports true are never returned. Ties keep the
// earlier word; the result is deterministic.
func KeyWords(texts []string, weights []float64, n int, skip func(term string) bool) []string {
	type stat struct {
		word       string
		score, idf float64
		first      int
	}
	stats := map[string]*stat{} // nil for a term never returned: each term is judged once
	pos := 0
	for i, s := range texts {
		if i >= len(weights) || weights[i] <= 0 {
			continue
		}
		var words, ts []string
		var at []int
		stop := queryStopWords()
		for _, w := range Tokens(s) {
			pos++
			w = trimPossessive(w)
			if stop[w] || len([]rune(w)) < 2 || isNumber(w) {
				continue
			}
			words, ts, at = append(words, w), append(ts, Stem(w)), append(at, pos)
		}
		for j, t := range ts {
			st, judged := stats[t]
			if !judged {
				if w := IDF(t); !(skip != nil && skip(t) || w < GenericIDF) {
					st = &stat{word: words[j], idf: w, first: at[j]}
				}
				stats[t] = st
			}
			if st != nil {
				st.score += weights[i] / float64(len(ts))
			}
		}
	}
	all := make([]*stat, 0, len(stats))
	for _, st := range stats {
		if st != nil {
			st.score *= st.idf
			all = append(all, st)
		}
	}
	slices.SortFunc(all, func(a, b *stat) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.first, b.first))
	})
	out := []string{}
	for _, st := range all[:min(n, len(all))] {
		out = append(out, st.word)
	}
	return out
}

func distinct(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isNumber(w string) bool {
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' && r != ',' }) < 0
}
