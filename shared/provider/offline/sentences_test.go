package offline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/text"
)

func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		name    string
		passage string
		want    []string
	}{
		{"SoftLineBreaksAreSpaces", "zstd is a fast lossless compression\nalgorithm. It is backed by a very fast\nentropy stage.",
			[]string{"zstd is a fast lossless compression algorithm.", "It is backed by a very fast entropy stage."}},
		{"NumbersAndVersionsDoNotEndSentences", "Version 1.5.1 of zstd compresses at level 3 by default, i.e. fast. Level\n19 is slower.",
			[]string{"Version 1.5.1 of zstd compresses at level 3 by default, i.e. fast.", "Level 19 is slower."}},
		{"AVersionAtTheEndEndsTheSentence", "Install v1.2.3. Then restart.", []string{"Install v1.2.3.", "Then restart."}},
		{"AbbreviationsAndInitialsDoNotEndSentences", "As Dr. Smith and J. Doe showed, e.g. Fig. 2 holds. Done here.",
			[]string{"As Dr. Smith and J. Doe showed, e.g. Fig. 2 holds.", "Done here."}},
		{"ALowercaseWordGoesOn", "Use gzip, zip, etc. and more. Then stop.", []string{"Use gzip, zip, etc. and more.", "Then stop."}},
		{"QuestionsAndExclamationsEndSentences", "Is it fast? Yes! It is.", []string{"Is it fast?", "Yes!", "It is."}},
		{"ClosingQuotesStayWithTheirSentence", `He said "it works." Then he left.`, []string{`He said "it works."`, "Then he left."}},
		{"FullWidthStops", "这是第一句。这是第二句。", []string{"这是第一句。", "这是第二句。"}},
		{"MarkdownHeadingsCodeTablesAndLinksAreLeftOut",
			"# Title\n\nSetext heading\n==============\n\nSome prose here.\n\n```sh\nzstd -19 file. It compresses.\n```\n\n| a | b |\n| - | - |\n\n[zlib]: https://www.zlib.net/\n<p align=\"center\"><img src=\"x.png\"></p>\n\nMore prose follows.",
			[]string{"Some prose here.", "More prose follows."}},
		{"ListItemsAreSentencesWithoutTheirMarkers", "Features:\n\n- Fast compression at zlib ratios\n- Dictionary training for small\n  files.\n1. Install the package first.\n2) Run it.",
			[]string{"Fast compression at zlib ratios", "Dictionary training for small files.", "Install the package first.", "Run it."}},
		{"ManualPageSectionsAndBulletsAreRead", "DESCRIPTION\n       zstd is a fast lossless compression algorithm and data compression\n       tool.\n\n       ○   Source files are preserved by default. It´s possible to remove them\n           automatically by using the --rm command.",
			[]string{"zstd is a fast lossless compression algorithm and data compression tool.", "Source files are preserved by default.", "It´s possible to remove them automatically by using the --rm command."}},
		{"FrontMatterAndCommentsAreLeftOut", "---\ntitle: \"Go, GODEBUG\"\nlayout: article\n---\n\n<!--\nThis document is kept in the Go repo.\n-->\n\nGo's emphasis on compatibility\nis one of its strengths.",
			[]string{"Go's emphasis on compatibility is one of its strengths."}},
		{"PiecesOfACutPassageAreLeftOut", "of the compression ratio. zstd offers fast modes. It also features a very fast",
			[]string{"zstd offers fast modes."}},
		{"LabelsAreLeftOut", "Benchmarks\n\nOptions:\n\nThe options are these:\n\nzstd is fast.", []string{"The options are these:", "zstd is fast."}},
		{"ASentenceMayStartInLowercase", "It compresses. zstd offers fast modes, etc. and more.", []string{"It compresses.", "zstd offers fast modes, etc. and more."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sentences(tc.passage)); diff != "" {
				t.Errorf("sentences mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// realQuestions are questions a user asked of the documents in testdata/docs.
var realQuestions = []string{
	"Is zstd faster than gzip?",
	"How do I remove the source file after compressing with zstd?",
	"What compression levels does zstd support?",
	"How do I train a dictionary with zstd?",
	"Can zstd use several threads?",
	"What is a GODEBUG setting?",
	"How do I change a GODEBUG default in go.mod?",
	"What does the Go compiler do in the SSA phase?",
	"What is escape analysis in the Go compiler?",
	"Which package holds the compiler's parser?",
}

// TestAnswersAreWholeSentencesOfTheirPassages is the property issue 10 asks
// for, on real hard-wrapped documentation cut as the vector store cuts it:
// every sentence of an offline answer is, white space collapsed, a substring
// of the passage it came from, starts where a sentence of that passage starts
// and ends where one ends, and the answer cites the passage's source.
func TestAnswersAreWholeSentencesOfTheirPassages(t *testing.T) {
	docs := readDocs(t)
	var passages, sources []string
	for name, d := range docs {
		ps, err := text.Passages(d, text.DefaultPassageOptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			passages, sources = append(passages, p.Text), append(sources, fmt.Sprintf("%s#%d", name, p.Index))
		}
	}
	// The real questions, and a question of the rarest words of each passage.
	questions := realQuestions
	for _, p := range passages {
		if kw := text.KeyWords([]string{p}, []float64{1}, 3, nil); len(kw) > 0 {
			questions = append(questions, "What about "+strings.Join(kw, " and ")+"?")
		}
	}
	checked := 0
	for _, q := range questions {
		// The five passages that cover the question best, as retrieval finds them.
		req := provider.GenerateRequest{Task: provider.TaskAnswer, Question: q}
		for _, i := range bestPassages(q, passages, 5) {
			req.Documents, req.Sources = append(req.Documents, passages[i]), append(req.Sources, sources[i])
		}
		chosen := answerSentences(req)
		var want strings.Builder
		for j, c := range chosen {
			checked++
			if msg := wholeSentenceOf(c.text, req.Documents[c.doc]); msg != "" {
				t.Errorf("question %q: answer sentence %q %s in passage %s:\n%s", q, c.text, msg, req.Sources[c.doc], req.Documents[c.doc])
			}
			if j > 0 {
				want.WriteByte(' ')
			}
			want.WriteString(c.text)
			if j == len(chosen)-1 || chosen[j+1].doc != c.doc && req.Sources[chosen[j+1].doc] != req.Sources[c.doc] {
				want.WriteString(" [" + req.Sources[c.doc] + "]")
			}
		}
		if got := answer(req); got != want.String() {
			t.Errorf("question %q: answer %q, want its sentences with their sources: %q", q, got, want.String())
		}
	}
	if checked < 100 {
		t.Errorf("only %d answer sentences checked, want at least 100", checked)
	}
	t.Logf("%d questions, %d answer sentences checked against %d passages of %d documents", len(questions), checked, len(passages), len(docs))
}

func TestZstdIsComparedWithGzipInWholeSentences(t *testing.T) {
	docs := readDocs(t)
	g, err := NewGenerator().Generate(t.Context(), provider.GenerateRequest{Task: provider.TaskAnswer, Question: "Is zstd faster than gzip?",
		Documents: []string{docs["zstd.1.txt"], docs["zstd-README.md"]}, Sources: []string{"zstd.1.txt", "zstd-README.md"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "zstd is a fast lossless compression algorithm and data compression tool, with command line syntax similar to gzip(1) and xz(1)."
	if !strings.Contains(g.Text, want) || !strings.Contains(g.Text, "[zstd.1.txt]") {
		t.Errorf("answer %q, want it to hold %q and cite zstd.1.txt", g.Text, want)
	}
}

func readDocs(t *testing.T) map[string]string {
	t.Helper()
	dir := filepath.Join("testdata", "docs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, e := range entries {
		if e.Name() == "LICENSES.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		docs[e.Name()] = string(b)
	}
	return docs
}

// bestPassages returns the indexes of the k passages that cover q best.
func bestPassages(q string, passages []string, k int) []int {
	var idx []int
	cov := make([]float64, len(passages))
	for i, p := range passages {
		if cov[i] = text.Coverage(q, p); cov[i] > 0 {
			idx = append(idx, i)
		}
	}
	for i := range idx { // selection of the k best, ties by position
		for j := i + 1; j < len(idx); j++ {
			if cov[idx[j]] > cov[idx[i]] {
				idx[i], idx[j] = idx[j], idx[i]
			}
		}
	}
	return idx[:min(k, len(idx))]
}

// wholeSentenceOf checks s against passage with rules of its own, simpler
// than the splitter's: s must be a substring of the passage with white space
// collapsed; it must start at the passage's start, after a full stop, or at
// the start of a block (a line after a blank one, a list item, a line after
// a heading); and it must end with a full stop or a colon, or where a block
// ends. It returns what is wrong, or "".
func wholeSentenceOf(s, passage string) string {
	norm, starts := collapse(passage)
	i := strings.Index(norm, s)
	if i < 0 {
		return "is not a substring"
	}
	before := strings.TrimRight(norm[:i], " ")
	before = strings.TrimRight(before, closers)
	last, _ := utf8.DecodeLastRuneInString(before)
	if i > 0 && !starts[i] && !isStop(last) {
		return "starts inside a sentence"
	}
	end := i + len(s)
	if !endsSentence(s) && end < len(norm) && !starts[end+1] {
		return "ends inside a sentence"
	}
	return ""
}

// collapse returns passage with white space collapsed to single spaces, and
// the offsets in it where a block starts.
func collapse(passage string) (string, map[int]bool) {
	var b strings.Builder
	starts := map[int]bool{}
	blank, heading := true, false
	for line := range strings.SplitSeq(passage, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			blank = true
			continue
		}
		_, item := cutListMarker(t)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		line := strings.Join(strings.Fields(t), " ")
		if blank || heading || item || strings.HasPrefix(t, ">") {
			starts[b.Len()] = true
			if rest, ok := cutListMarker(line); ok { // the sentence starts after the marker
				starts[b.Len()+len(line)-len(rest)] = true
			}
		}
		b.WriteString(line)
		blank, heading = false, strings.HasPrefix(t, "#") || t[0] == '|' || isUnderline(t) || isSectionName(t)
	}
	return b.String(), starts
}
