package offline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// GeneratorModel is the model name [Generator] results carry.
const GeneratorModel = "extractive-v1"

// GradeThreshold is the share of a question's content ([Relevance]) a
// document must cover for [Generator] to grade it relevant. It was tuned on
// SciFact's train split (go run ./scripts/rag-eval --tune): the threshold
// that best separates each query's retrieved documents when one is judged
// relevant from the retrieved documents of another query (809 queries, top
// 10 passages each: 97.4% of the first kept, 97.0% of the second refused,
// balanced accuracy 0.972, the best of 0.05..0.80 in steps of 0.05).
const GradeThreshold = 0.4

// AnswerMinScore is the share of the best sentence's score a further sentence
// needs to join an offline answer: weaker matches are left out rather than
// padding the answer with text that only brushes the question.
const AnswerMinScore = 0.6

// AnswerMaxSentences bounds an offline answer's length in sentences.
const AnswerMaxSentences = 5

// RephraseMaxTerms bounds how many terms from earlier turns a rephrased query gains.
const RephraseMaxTerms = 8

// RewriteMaxTerms bounds how many words a rewritten query gains ([rewrite]).
const RewriteMaxTerms = 5

var _ provider.Generator = Generator{}

// Generator answers every [provider.Task] without a model, by lexical
// matching, so the pipeline runs end to end with no network:
//
//   - answer: the whole sentences of the documents that best match the
//     question ([sentences]: hard-wrapped lines are rejoined, headings, code
//     and tables left out), in document order, within MaxTokens, each
//     source's followed by its citation ("[README.md]", or the document's
//     number when the request names no sources); an empty text when no
//     sentence shares a salient term with the question.
//   - rephrase: without documents, the question unchanged, or, when it
//     refers back ("it", "that", a short follow-up), the question followed
//     by the salient terms of the last user turns of the history. With
//     documents (the passages a failed search found), a rewrite ([rewrite]):
//     the question followed by the words that best characterise those
//     passages and the history's user turns, weighted by [text.IDF].
//   - grade: "yes" when some document covers at least [GradeThreshold] of
//     the question's content ([Relevance]), else "no".
//
// Token counts are estimates: one token per word of the text read and written.
// It never invents text; results say provider "offline", model "extractive-v1".
type Generator struct{}

// NewGenerator returns the offline generator.
func NewGenerator() provider.Generator { return Generator{} }

// Generate implements [provider.Generator].
func (Generator) Generate(ctx context.Context, req provider.GenerateRequest) (provider.Generation, error) {
	if err := ctx.Err(); err != nil {
		return provider.Generation{}, err
	}
	if strings.TrimSpace(req.Question) == "" {
		return provider.Generation{}, fmt.Errorf("offline: %s: the question is empty", req.Task)
	}
	g := provider.Generation{Provider: Name, Model: GeneratorModel}
	switch req.Task {
	case provider.TaskAnswer:
		g.Text = answer(req)
		g.InputTokens = words(req.Question) + wordsAll(req.Documents)
	case provider.TaskRephrase:
		g.Text = rephrase(req.Question, req.History)
		if len(req.Documents) > 0 {
			g.Text = rewrite(req.Question, req.History, req.Documents)
		}
		g.InputTokens = words(req.Question) + wordsAll(req.Documents)
		for _, t := range req.History {
			g.InputTokens += words(t.Content)
		}
	case provider.TaskGrade:
		g.Text = grade(req.Question, req.Documents)
		g.InputTokens = words(req.Question) + wordsAll(req.Documents)
	default:
		return provider.Generation{}, fmt.Errorf("offline: unknown task %q", req.Task)
	}
	g.OutputTokens = words(g.Text)
	return g, nil
}

type candidate struct {
	doc, pos int
	text     string
	terms    map[string]bool
	length   int // in terms
	score    float64
}

// answer picks the sentences of req.Documents that best match the question
// and cites where each came from. A sentence scores the sum, over the
// question's distinct terms it contains, of the term's inverse sentence
// frequency, divided by the square root of its length, so a short sentence
// dense in rare question terms wins. Sentences are whole sentences of the
// documents ([sentences]); the chosen ones keep their documents' order, and
// each source's are followed by its citation ([cite]).
func answer(req provider.GenerateRequest) string {
	chosen := answerSentences(req)
	var b strings.Builder
	for i, c := range chosen {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.text)
		if i == len(chosen)-1 || cite(req, chosen[i+1].doc) != cite(req, c.doc) {
			b.WriteString(" [" + cite(req, c.doc) + "]")
		}
	}
	return b.String()
}

// cite names document i: its source, if the request names one, else its
// number ("1" for the first document), as hosted models see them numbered.
func cite(req provider.GenerateRequest, i int) string {
	if i < len(req.Sources) {
		if s := strings.Join(strings.Fields(req.Sources[i]), " "); s != "" {
			return s
		}
	}
	return strconv.Itoa(i + 1)
}

// answerSentences returns the sentences [answer] writes, in order: at most
// [AnswerMaxSentences], each scoring at least [AnswerMinScore] of the best,
// within MaxTokens words. Sentences of one source stay together, in the
// order of their documents, so that each source is cited once.
func answerSentences(req provider.GenerateRequest) []*candidate {
	qterms := distinct(terms(req.Question))
	if len(qterms) == 0 {
		return nil
	}
	var cands []*candidate
	df := map[string]int{}
	seen := map[string]bool{} // overlapping chunks repeat sentences: keep the first
	for di, d := range req.Documents {
		for pi, text := range sentences(d) {
			ts := terms(text)
			if len(ts) == 0 || seen[text] {
				continue
			}
			seen[text] = true
			c := &candidate{doc: di, pos: pi, text: text, terms: map[string]bool{}, length: len(ts)}
			for _, t := range ts {
				c.terms[t] = true
			}
			for t := range c.terms {
				df[t]++
			}
			cands = append(cands, c)
		}
	}
	n := float64(len(cands))
	var matched []*candidate
	for _, c := range cands {
		for _, q := range qterms {
			if c.terms[q] {
				c.score += math.Log(1 + n/float64(df[q]))
			}
		}
		if c.score == 0 {
			continue
		}
		c.score /= math.Sqrt(float64(c.length))
		matched = append(matched, c)
	}
	if len(matched) == 0 {
		return nil
	}
	sort.SliceStable(matched, func(i, j int) bool { return matched[i].score > matched[j].score })
	limit := req.MaxTokens
	if limit <= 0 {
		limit = provider.DefaultMaxTokens(provider.TaskAnswer)
	}
	var chosen []*candidate
	used := 0
	for _, c := range matched {
		if len(chosen) == AnswerMaxSentences || c.score < AnswerMinScore*matched[0].score {
			break
		}
		if w := words(c.text); used+w <= limit {
			chosen = append(chosen, c)
			used += w
		}
	}
	if len(chosen) == 0 { // no sentence fits: the best one, cut and marked so
		best := *matched[0]
		best.text = firstWords(best.text, limit)
		chosen = append(chosen, &best)
	}
	first := map[string]int{} // each source's first document among the chosen
	for _, c := range chosen {
		if f, ok := first[cite(req, c.doc)]; !ok || c.doc < f {
			first[cite(req, c.doc)] = c.doc
		}
	}
	sort.Slice(chosen, func(i, j int) bool {
		a, b := chosen[i], chosen[j]
		if fa, fb := first[cite(req, a.doc)], first[cite(req, b.doc)]; fa != fb {
			return fa < fb
		}
		if a.doc != b.doc {
			return a.doc < b.doc
		}
		return a.pos < b.pos
	})
	return chosen
}

// referring are the words by which a question points back at earlier turns.
var referring = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`it its it's itself that this those these they them their theirs there he she him her his
		one ones same such above previous former latter else also too another other more`) {
		m[w] = true
	}
	return m
})

// rephrase returns question, followed by the salient words of the last user
// turns of history when the question refers back to them. A text refers back
// when it contains a referring word or is a short follow-up (at most two
// salient terms). The walk goes back through the user turns, most recent
// first, and stops after the first one that stands on its own, so a chain of
// follow-ups keeps the topic that started it. Words are kept as written
// (lowercased), without those the question already has; the result is
// deterministic.
func rephrase(question string, history []provider.Turn) string {
	question = strings.Join(strings.Fields(question), " ")
	if !refersBack(question) {
		return question
	}
	have := map[string]bool{}
	for _, t := range terms(question) {
		have[t] = true
	}
	var add []string
	for i := len(history) - 1; i >= 0 && len(add) < RephraseMaxTerms; i-- {
		t := history[i]
		content := strings.Join(strings.Fields(t.Content), " ")
		if t.Role != provider.RoleUser || content == question {
			continue // assistant turns, and the current question passed as the thread's last turn
		}
		for _, w := range salientWords(content) {
			st := text.Stem(w)
			if have[st] || len(add) == RephraseMaxTerms {
				continue
			}
			have[st] = true
			add = append(add, w)
		}
		if !refersBack(content) {
			break
		}
	}
	if len(add) == 0 {
		return question
	}
	return question + " " + strings.Join(add, " ")
}

// refersBack reports whether s points at earlier turns: it contains a
// referring word, or has at most two salient terms.
func refersBack(s string) bool {
	if len(distinct(terms(s))) <= 2 {
		return true
	}
	refer := referring()
	for _, w := range lowerWords(s) {
		if refer[w] {
			return true
		}
	}
	return false
}

// grade says "yes" when some document covers at least GradeThreshold of
// the question's content, else "no". A question with no content term
// cannot be judged lexically: any document passes, which is the pipeline's
// own default when grading fails.
func grade(question string, docs []string) string {
	if len(text.QueryTerms(question)) == 0 && slices.ContainsFunc(docs, func(d string) bool { return strings.TrimSpace(d) != "" }) {
		return "yes"
	}
	if Relevance(question, docs) >= GradeThreshold {
		return "yes"
	}
	return "no"
}

// Relevance returns how much of question's content the best of docs
// covers, in 0..1: the largest [text.Coverage] of question by one document,
// its content terms weighted by how informative they are in general English
// ([text.IDF]), so that a passage sharing only the common words of a
// question ("long", "best") covers little of it. It is what the offline
// grader compares with [GradeThreshold].
func Relevance(question string, docs []string) float64 {
	best := 0.0
	for _, d := range docs {
		best = max(best, text.Coverage(question, d))
	}
	return best
}

// rewrite returns question followed by up to RewriteMaxTerms words that
// could find its answer where a search for it found only docs: the words
// that best characterise the documents that cover most of the question, and
// the user turns of history, most recent first ([text.KeyWords]: weighted
// by each text's relevance and by [text.IDF], never generic words or words
// the question has). Each document weighs its [text.Coverage] of the
// question; the user turns weigh 1, halving with each turn back. With
// nothing to add, it returns the question unchanged.
func rewrite(question string, history []provider.Turn, docs []string) string {
	question = strings.Join(strings.Fields(question), " ")
	var texts []string
	var weights []float64
	for _, d := range docs {
		texts, weights = append(texts, d), append(weights, text.Coverage(question, d))
	}
	w := 1.0
	for _, t := range slices.Backward(history) {
		if t.Role == provider.RoleUser && strings.TrimSpace(t.Content) != question {
			texts, weights = append(texts, t.Content), append(weights, w)
			w /= 2
		}
	}
	have := map[string]bool{}
	for _, t := range text.Terms(question) {
		have[t] = true
	}
	add := text.KeyWords(texts, weights, RewriteMaxTerms, func(t string) bool { return have[t] })
	if len(add) == 0 {
		return question
	}
	return question + " " + strings.Join(add, " ")
}

// terms returns the salient words of s stemmed, in order: what matching
// compares. Stems are [text.Stem]'s (Porter, as BM25 indexes), so "indexes"
// matches "index" and "patched" matches "patching".
func terms(s string) []string {
	ws := salientWords(s)
	for i, w := range ws {
		ws[i] = text.Stem(w)
	}
	return ws
}

// salientWords returns the tokens of s ([text.Tokens]) that carry meaning:
// not stop words, and not single letters or digits. The stop list is the
// summariser's, which is longer than BM25's (it drops question words such as
// "how" and "what" too), since here a word shared by question and document
// must say something about the topic.
func salientWords(s string) []string {
	var out []string
	stop := stopwords()
	for _, w := range text.Tokens(s) {
		if stop[w] || text.IsStopWord(w) {
			continue
		}
		if r := []rune(w); len(r) == 1 && !unicode.In(r[0], unicode.Han, unicode.Hiragana, unicode.Katakana) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func distinct(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func lowerWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r == '\'' || r == '’' || isWordRune(r))
	})
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func words(s string) int { return len(strings.Fields(s)) }

func wordsAll(ss []string) int {
	n := 0
	for _, s := range ss {
		n += words(s)
	}
	return n
}

// firstWords returns the first n words of s, marked as cut.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	return strings.Join(f[:max(n, 1)], " ") + "…"
}
