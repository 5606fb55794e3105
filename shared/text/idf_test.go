package text

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIDFRanksGeneralEnglishWords(t *testing.T) {
	// Common words weigh least, then everyday nouns, then rare ones, then
	// words general English does not have.
	order := []string{"us", "egg", "marathon", "zstd"}
	for i := 1; i < len(order); i++ {
		if a, b := IDF(order[i-1]), IDF(order[i]); a >= b {
			t.Errorf("IDF(%q) = %.2f, not below IDF(%q) = %.2f", order[i-1], a, order[i], b)
		}
	}
	if got := IDF("zstd"); got != MaxIDF() {
		t.Errorf("IDF of a word in no gloss = %.2f, want MaxIDF %.2f", got, MaxIDF())
	}
	if got, want := MaxIDF(), math.Log(1+117659/0.5); math.Abs(got-want) > 1e-9 {
		t.Errorf("MaxIDF = %v, want ln(1 + 117659/0.5) = %v: the table's gloss count changed", got, want)
	}
}

// TestIDFTableIsWellFormed checks what IDF relies on without checking it
// again at each cold start: every line a term and its count, the terms in
// byte order, which the binary search needs.
func TestIDFTableIsWellFormed(t *testing.T) {
	n, prev := 0, ""
	for line := range strings.SplitSeq(strings.TrimSpace(idfTable), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "N ") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("idf.txt line %q: want a term and a count", line)
		}
		count, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("idf.txt line %q: the count is not a number", line)
		}
		if IDF(f[0]); documentFrequency(f[0]) != count {
			t.Fatalf("the document frequency of %q is %d, want the table's %d", f[0], documentFrequency(f[0]), count)
		}
		if f[0] <= prev {
			t.Fatalf("idf.txt: %q comes after %q: the terms must be in byte order", f[0], prev)
		}
		prev = f[0]
		n++
	}
	if n < 10000 {
		t.Errorf("idf.txt holds %d terms, want the 17,000 of WordNet's glosses", n)
	}
}

func TestCoverage(t *testing.T) {
	for _, tc := range []struct {
		name, question, passage string
		want                    float64
	}{
		{"AllTermsCovered", "Is zstd faster than gzip?", "zstd compresses faster than gzip", 1},
		{"NoTermCovered", "How long should I boil an egg?", "zstd compresses files", 0},
		{"RareTermsWeighMore", "How long should I boil an egg?", "Boil the egg.", (IDF("boil") + IDF("egg")) / (IDF("long") + IDF("boil") + IDF("egg"))},
		{"CommonTermsWeighLess", "How long should I boil an egg?", "A long wait.", IDF("long") / (IDF("long") + IDF("boil") + IDF("egg"))},
		{"AQuestionOfStopWordsCoversNothing", "What is it?", "It is what it is.", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Coverage(tc.question, tc.passage); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Coverage = %.4f, want %.4f", got, tc.want)
			}
		})
	}
	if long, egg := Coverage("How long should I boil an egg?", "A long wait."), Coverage("How long should I boil an egg?", "An egg."); long >= egg {
		t.Errorf("sharing %q covers %.2f, sharing %q %.2f: want the common word to count for less", "long", long, "egg", egg)
	}
}

func TestKeyWords(t *testing.T) {
	docs := []string{
		"Patching Oracle Database uses OPatch. Apply the latest release update. Use it well.",
		"Memory targets are set with PGA_AGGREGATE_TARGET.",
	}
	for _, tc := range []struct {
		name    string
		weights []float64
		n       int
		skip    func(string) bool
		want    []string
	}{
		{"RareWordsOfTheWeightedTextsFirst", []float64{1, 0}, 3, nil, []string{"opatch", "oracle", "update"}},
		{"HeavierTextsWin", []float64{0.1, 1}, 2, nil, []string{"pga_aggregate_target", "targets"}},
		{"SkippedTermsAreLeftOut", []float64{1, 0}, 2, func(t string) bool { return t == "opatch" }, []string{"oracle", "update"}},
		{"NoWeightNoWords", []float64{0, 0}, 3, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := KeyWords(docs, tc.weights, tc.n, tc.skip)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KeyWords mismatch (-want +got):\n%s", diff)
			}
			for _, w := range got {
				if IDF(Stem(w)) < GenericIDF {
					t.Errorf("KeyWords returned the generic word %q", w)
				}
			}
		})
	}
}

// BenchmarkLoadIDF is what the first IDF lookup of a process costs beyond
// the lookup: part of the cold start of every function that grades offline.
func BenchmarkLoadIDF(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		loadIDF()
	}
}
