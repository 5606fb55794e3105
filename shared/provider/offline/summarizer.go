// Package offline holds the providers that need no network and no model
// files: what Switchboard uses on a laptop and in tests, and on AWS until a
// hosted model is configured. Their results say so: provider "offline".
package offline

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/provider"
)

// Name is the provider name offline results carry.
const Name = "offline"

// DefaultSummaryChars is the summary length when a request sets no MaxChars.
const DefaultSummaryChars = 600

var _ provider.Summarizer = Summarizer{}

// Summarizer is an extractive summariser: it keeps the sentences whose words
// recur most across the conversation, in their original order, labelled with
// who said them. It never invents text, so its summaries are faithful if plain.
type Summarizer struct{}

// Model is the model name [Summarizer] results carry.
const Model = "extractive-v1"

type sentence struct {
	turn  int
	pos   int
	role  string
	text  string
	words []string
	score float64
}

// sentenceEnd is compiled on first use: most processes that link this
// package never summarise, and compiling it cost each one's start.
var sentenceEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^.!?。！？\n]+[.!?。！？]*`) })

// Summarize implements [provider.Summarizer].
func (Summarizer) Summarize(ctx context.Context, req provider.SummarizeRequest) (provider.Summary, error) {
	if err := ctx.Err(); err != nil {
		return provider.Summary{}, err
	}
	max := req.MaxChars
	if max <= 0 {
		max = DefaultSummaryChars
	}
	var sents []*sentence
	freq := map[string]float64{}
	for ti, t := range req.Turns {
		for pi, raw := range sentenceEnd().FindAllString(t.Content, -1) {
			text := strings.Join(strings.Fields(raw), " ")
			if text == "" {
				continue
			}
			s := &sentence{turn: ti, pos: pi, role: t.Role, text: text, words: contentWords(text)}
			for _, w := range s.words {
				freq[w]++
			}
			sents = append(sents, s)
		}
	}
	if len(sents) == 0 {
		return provider.Summary{Provider: Name, Model: Model}, nil
	}
	var top float64
	for _, f := range freq {
		top = math.Max(top, f)
	}
	for _, s := range sents {
		seen := map[string]bool{}
		for _, w := range s.words {
			if !seen[w] {
				seen[w] = true
				s.score += freq[w] / top
			}
		}
		s.score /= math.Sqrt(float64(len(s.words) + 1))
		if s.pos == 0 && s.role == "user" {
			s.score *= 1.5 // what the user asked frames everything after it
		}
	}
	ranked := append([]*sentence(nil), sents...)
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].score > ranked[j].score })
	chosen := map[*sentence]bool{}
	used := 0
	for _, s := range ranked {
		n := len([]rune(s.text)) + len(s.role) + 3
		if used+n > max {
			if used == 0 { // always say something: the best sentence, cut to fit
				s.text = truncate(s.text, max-len(s.role)-3)
				chosen[s] = true
			}
			continue
		}
		chosen[s] = true
		used += n
	}
	var b strings.Builder
	lastTurn := -1
	for _, s := range sents {
		if !chosen[s] {
			continue
		}
		if s.turn != lastTurn {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(label(s.role))
			b.WriteString(": ")
			lastTurn = s.turn
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(s.text)
	}
	return provider.Summary{Text: b.String(), Provider: Name, Model: Model}, nil
}

func label(role string) string {
	if role == "" {
		return "Note"
	}
	return strings.ToUpper(role[:1]) + role[1:]
}

func truncate(s string, n int) string {
	r := []rune(s)
	if n < 1 {
		n = 1
	}
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// contentWords returns the lowercased words of s that carry meaning.
func contentWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) > 1 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has have he her
		here him his how i if in into is it its just me my no not of on or our she so than that the their them then there
		these they this to too up us was we were what when where which who why will with would you your yes ok okay please
		thanks thank hi hello và là của có không được cho các những một này đó với thì để như khi đã sẽ rất cũng bạn tôi`) {
		m[w] = true
	}
	return m
}()
