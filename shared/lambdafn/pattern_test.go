package lambdafn

import (
	"regexp"
	"strings"
	"testing"
)

func TestAClassPatternMatchesWhatItsRegexpMatches(t *testing.T) {
	patterns := []struct {
		pattern string
		class   bool // compiled as a classPattern rather than a regexp
	}{
		{`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`, true},
		{`^[a-z0-9][a-z0-9_-]{0,63}$`, true},
		{`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`, true},
		{`^[!-~]{1,255}$`, true},
		{`^ab{2,3}c$`, true},
		{`^é[à-ü]{0,2}$`, true},
		{`^[a-z]{0,3}[0-9]{0,3}$`, false}, // two parts of a range of times
		{`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, false},
		{`(?i)\.(md|markdown|txt|docx|pdf)$`, false},
		{`^(?i)[a-z]{2}$`, false},
		{`[a-z]{2}`, false}, // unanchored
		{`^[a-z]{2,}$`, false},
	}
	inputs := []string{"", "a", "A", "ab", "abc", "abbc", "abbbc", "abbbbc", "a-b", "a_b", "a.b:c", "-a", "_a", "a#b", "a b", "é", "éà", "éàü", "éàüü", "é\xff",
		"550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-51d4-a716-446655440000", "550E8400-E29B-41D4-C716-446655440000", "550e8400e29b41d4a716446655440000",
		"notes.md", "abc1", "a\n", "\xffa", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("~", 255), strings.Repeat("~", 256)}
	for _, p := range patterns {
		t.Run(p.pattern, func(t *testing.T) {
			m, err := compilePattern(p.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if _, class := m.(*classPattern); class != p.class {
				t.Errorf("compiled as a class pattern: %v, want %v", class, p.class)
			}
			re := regexp.MustCompile(p.pattern)
			for _, s := range inputs {
				if got, want := m.Match([]byte(s)), re.MatchString(s); got != want {
					t.Errorf("Match(%q) = %v, the regexp says %v", s, got, want)
				}
			}
		})
	}
}
