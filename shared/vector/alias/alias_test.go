package alias_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/vector/alias"
)

// TestValidMatchesPattern holds the byte-by-byte check to the pattern the
// schemas publish.
func TestValidMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(alias.Pattern)
	for _, s := range []string{"", "a", "0", "docs", "my-store_2", "-docs", "_docs", "Docs", "docs!", "dócs", "docs\n", "a b",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63), "a" + strings.Repeat("_", 64)} {
		if got, want := alias.Valid(s), re.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
