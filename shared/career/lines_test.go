package career

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The regular expressions the hand-written line patterns replace (lines.go).
var (
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	setextRE    = regexp.MustCompile(`^\s*(=+|-+)\s*$`)
	ruleRE      = regexp.MustCompile(`^\s*([-*_]\s*){3,}$`)
	bulletRE    = regexp.MustCompile(`^\s*(?:[-*+•●▪◦‣–·]|\d{1,2}[.)])\s+(.*)$`)
	sentenceRE  = regexp.MustCompile(`[.!?](\s+|$)`)
	atomWordsRE = regexp.MustCompile(`(?i)\b(experience|employment|work|career|professional|projects?|skills?|accomplishments?|achievements?|competenc(e|ies)|expertise|qualifications?|technolog(y|ies)|leadership|highlights?)\b`)
)

// lineCases are lines at the edges of the patterns; randomLines adds more.
var lineCases = []string{
	"", " ", "#", "# ", "#x", "# Title", "###### Six", "####### Seven", "## C#", "## Title ##  ", "##\tTabbed # ",
	"  # indented", "# # #", "#  ", "===", " -- ", "=-", "- - -", "***", "_ _ _ x", "--", "* * *  ", "- item", "-item",
	"  * item", "+ item", "• item", "– dash", "· dot", "1. one", "12) twelve", "123. no", "1.no", "9)", "1. ", "\u00a0- nbsp",
	"\xff- bad", "- \xff", "Led teams. Built things!", "Why? Because", "v1.2 shipped.", "end.", "a.  b", "...", "?!",
	"Skills & Tools", "Engineering Leadership at Acme", "WORK", "workflow", "network", "my_work", "work_", "2work",
	"Project-based", "ſkills", "x\u017Fkills", "wor\u212A", "wor\u212As", "Wor\u212A here", "\u212Aey", "projectS", "İskills",
	"Technologies:", "competenc", "competencies!", "highlight\xff", "é work é",
}

// randomLines are lines drawn from the characters the patterns care about.
func randomLines(n int) []string {
	pieces := []string{" ", "\t", "\r", "\f", "#", "=", "-", "*", "_", "+", "•", "–", "1", "23", ".", ")", "!", "?", "a", "K",
		"work", "skill", "s", "ſ", "\u212A", "\xff", "é", "Project", "technolog", "ies", "y", "_x"}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		out[i] = b.String()
	}
	return out
}

func TestLinePatternsMatchWhatTheRegularExpressionsMatched(t *testing.T) {
	for _, line := range append(slices.Clone(lineCases), randomLines(200_000)...) {
		level, text, ok := markdownHeading(line)
		if m := headingRE.FindStringSubmatch(line); (m != nil) != ok || m != nil && (len(m[1]) != level || m[2] != text) {
			t.Errorf("markdownHeading(%q) = %d, %q, %v; the expression found %q", line, level, text, ok, m)
		}
		if got, want := setextUnderline(line), setextRE.MatchString(line); got != want {
			t.Errorf("setextUnderline(%q) = %v, want %v", line, got, want)
		}
		if got, want := thematicBreak(line), ruleRE.MatchString(line); got != want {
			t.Errorf("thematicBreak(%q) = %v, want %v", line, got, want)
		}
		item, ok := listItem(line)
		if m := bulletRE.FindStringSubmatch(line); (m != nil) != ok || m != nil && m[1] != item {
			t.Errorf("listItem(%q) = %q, %v; the expression found %q", line, item, ok, m)
		}
		var want [][2]int
		for _, loc := range sentenceRE.FindAllStringIndex(line, -1) {
			want = append(want, [2]int{loc[0], loc[1]})
		}
		if got := sentenceEnds(line); !slices.Equal(got, want) {
			t.Errorf("sentenceEnds(%q) = %v, want %v", line, got, want)
		}
		if got, want := hasAtomWord(line), atomWordsRE.MatchString(line); got != want {
			t.Errorf("hasAtomWord(%q) = %v, want %v", line, got, want)
		}
	}
}
