package tenant

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestIDChecksAgreeWithTheirPatterns checks each hand-written check against
// the pattern it replaces, which the catalog's schemas still publish.
func TestIDChecksAgreeWithTheirPatterns(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		max     int
		check   func(string) bool
	}{
		{"tenant ids", IDPattern, 63, isID},
		{"key ids", KeyIDPattern, 128, IsKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := regexp.MustCompile(tt.pattern)
			for _, s := range idCases(tt.max) {
				if got, want := tt.check(s), re.MatchString(s); got != want {
					t.Errorf("check(%q) = %v, the pattern says %v", s, got, want)
				}
			}
		})
	}
}

// idCases returns edge cases around an id of at most max bytes, and 5,000
// random strings of the characters that ids allow or refuse.
func idCases(max int) []string {
	cases := []string{"", "a", "Z", "9", "-a", "_a", ".a", "a-", "a_b.c:d-e", "a b", "a#b", "a\n", "\na", "a\x00", "é", "aé", "a\xff",
		strings.Repeat("a", max-1), strings.Repeat("a", max), strings.Repeat("a", max+1), "-" + strings.Repeat("a", max-1)}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09-_.:# é\n"
	for range 5000 {
		var b strings.Builder
		for range r.IntN(max + 3) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	return cases
}
