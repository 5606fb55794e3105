package audit_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/audit"
)

// TestValidateTraceIDAgreesWithThePattern checks the hand-written check against the
// pattern it replaces, which the catalog's schemas still publish.
func TestValidateTraceIDAgreesWithThePattern(t *testing.T) {
	re := regexp.MustCompile(audit.TracePattern)
	cases := []string{"", "a", "Z", "9", "-a", "_a", ".a", "a-", "a_b.c:d-e", "a b", "a#b", "a\n", "\na", "a\x00", "é", "aé", "a\xff",
		strings.Repeat("a", 128-1), strings.Repeat("a", 128), strings.Repeat("a", 128+1), "-" + strings.Repeat("a", 128-1)}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09-_.:# é\n"
	for range 5000 {
		var b strings.Builder
		for range r.IntN(128 + 3) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := audit.ValidateTraceID(s) == nil, re.MatchString(s); got != want {
			t.Errorf("ValidateTraceID(%q) == nil: %v, the pattern says %v", s, got, want)
		}
	}
}
