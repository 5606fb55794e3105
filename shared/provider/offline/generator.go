package offline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// GeneratorModel is the model name [Generator] results carry.
const GeneratorModel = "extractive-v1"

// GradeMinShared is how many distinct salient terms of the question a document
// must contain for [Generator] to grade it relevant (fewer if the question has
// fewer). Two keeps a passage that merely shares one common word from passing,
// while a passage that names both the subject and the aspect asked about does.
const GradeMinShared = 2

// AnswerMinScore is the share of the best sentence's score a further sentence
// needs to join an offline answer: weaker matches are left out rather than
// padding the answer with text that only brushes the question.
const AnswerMinScore = 0.6

// AnswerMaxSentences bounds an offline answer's length in sentences.
const AnswerMaxSentences = 5

// RephraseMaxTerms bounds how many terms from earlier turns a rephrased query gains.
const RephraseMaxTerms = 8

var _ provider.Generator = Generator{}

// Generator answers every [provider.Task] without a model, by lexical
// matching, so the pipeline runs end to end with no network:
//
//   - answer: the sentences of the documents that best match the question,
//     in document order, within MaxTokens; an empty text when no sentence
//     shares a salient term with the question. Markdown headings are not
//     candidates (they name a topic without saying anything about it).
//   - rephrase: the question unchanged, or, when it refers back ("it",
//     "that", a short follow-up), the question followed by the salient terms
//     of the last user turns of the history.
//   - grade: "yes" when some document contains at least [GradeMinShared]
//     distinct salient terms of the question, else "no".
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
		g.InputTokens = words(req.Question)
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

// answer picks the sentences of req.Documents that best match the question.
// A sentence scores the sum, over the question's distinct terms it contains,
// of the term's inverse sentence frequency, divided by the square root of its
// length, so a short sentence dense in rare question terms wins.
func answer(req provider.GenerateRequest) string {
	qterms := distinct(terms(req.Question))
	if len(qterms) == 0 {
		return ""
	}
	var cands []*candidate
	df := map[string]int{}
	seen := map[string]bool{} // overlapping chunks repeat sentences: keep the first
	for di, d := range req.Documents {
		for pi, raw := range sentenceEnd.FindAllString(d, -1) {
			text := strings.Join(strings.Fields(raw), " ")
			if strings.HasPrefix(text, "#") {
				continue // a Markdown heading names a topic, it does not answer
			}
			text = strings.TrimLeft(text, "-*+>| ") // list and quote markers
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
		return ""
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
		w := words(c.text)
		if used+w > limit {
			if len(chosen) == 0 { // the best sentence alone is too long: cut it to fit
				c.text = firstWords(c.text, limit)
				chosen = append(chosen, c)
			}
			break
		}
		chosen = append(chosen, c)
		used += w
	}
	sort.Slice(chosen, func(i, j int) bool {
		if chosen[i].doc != chosen[j].doc {
			return chosen[i].doc < chosen[j].doc
		}
		return chosen[i].pos < chosen[j].pos
	})
	parts := make([]string, len(chosen))
	for i, c := range chosen {
		parts[i] = c.text
	}
	return strings.Join(parts, " ")
}

// referring are the words by which a question points back at earlier turns.
var referring = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`it its it's itself that this those these they them their theirs there he she him her his
		one ones same such above previous former latter else also too another other more`) {
		m[w] = true
	}
	return m
}()

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
	for _, w := range lowerWords(s) {
		if referring[w] {
			return true
		}
	}
	return false
}

// grade says "yes" when some document contains at least GradeMinShared
// distinct terms of the question (all of them, if it has fewer), else "no".
// A question with no salient term cannot be judged lexically: any document
// passes, which is the pipeline's own default when grading fails.
func grade(question string, docs []string) string {
	qterms := distinct(terms(question))
	need := min(GradeMinShared, len(qterms))
	for _, d := range docs {
		if strings.TrimSpace(d) == "" {
			continue
		}
		set := map[string]bool{}
		for _, t := range terms(d) {
			set[t] = true
		}
		shared := 0
		for _, q := range qterms {
			if set[q] {
				shared++
			}
		}
		if shared >= need {
			return "yes"
		}
	}
	return "no"
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
	for _, w := range text.Tokens(s) {
		if stopwords[w] || text.IsStopWord(w) {
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
