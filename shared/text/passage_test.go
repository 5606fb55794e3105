package text

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestPassages(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts PassageOptions
		want []string
	}{
		{
			name: "empty text has no passages",
			in:   "",
			opts: PassageOptions{Size: 10},
			want: nil,
		},
		{
			name: "white space only has no passages",
			in:   " \n\t\r\n \u00a0\u3000 ",
			opts: PassageOptions{Size: 10},
			want: nil,
		},
		{
			name: "a short text is one trimmed passage",
			in:   "\n\n  Hello, world.  \n",
			opts: PassageOptions{Size: 100, Overlap: 10},
			want: []string{"Hello, world."},
		},
		{
			name: "a text of exactly Size characters is one passage",
			in:   "abcde fghi",
			opts: PassageOptions{Size: 10},
			want: []string{"abcde fghi"},
		},
		{
			name: "paragraph ends are preferred to sentence ends",
			in:   "One two. Three four five.\n\nSix seven. Eight nine.\n\nTen eleven twelve.",
			opts: PassageOptions{Size: 50},
			want: []string{
				"One two. Three four five.\n\nSix seven. Eight nine.",
				"Ten eleven twelve.",
			},
		},
		{
			name: "a sentence end is preferred to a word break",
			in:   "The cell divides. Then the nucleus splits into two equal halves.",
			opts: PassageOptions{Size: 40},
			want: []string{
				"The cell divides.",
				"Then the nucleus splits into two equal",
				"halves.",
			},
		},
		{
			name: "abbreviations and initials do not end sentences",
			in:   "Smith et al. found e.g. that J. Doe was right. A new sentence begins here.",
			opts: PassageOptions{Size: 60},
			want: []string{
				"Smith et al. found e.g. that J. Doe was right.",
				"A new sentence begins here.",
			},
		},
		{
			name: "a paragraph too early in the window gives way to a sentence end",
			in:   "Tiny.\n\nA much longer paragraph follows. It has two sentences and more words.",
			opts: PassageOptions{Size: 60},
			want: []string{
				"Tiny.\n\nA much longer paragraph follows.",
				"It has two sentences and more words.",
			},
		},
		{
			name: "words break when there is no sentence end",
			in:   "alpha beta gamma delta epsilon zeta eta theta",
			opts: PassageOptions{Size: 16},
			want: []string{"alpha beta gamma", "delta epsilon", "zeta eta theta"},
		},
		{
			name: "a word longer than Size is cut at character boundaries",
			in:   "a pneumonoultramicroscopicsilicovolcanoconiosis b",
			opts: PassageOptions{Size: 10, Overlap: 3},
			want: []string{"a", "pneumonoul", "tramicrosc", "opicsilico", "volcanocon", "iosis b"},
		},
		{
			name: "a long word of multibyte characters is cut between characters",
			in:   "ééééééééééééé",
			opts: PassageOptions{Size: 5},
			want: []string{"ééééé", "ééééé", "ééé"},
		},
		{
			name: "Japanese breaks after full stops, then between characters",
			in:   "東京は日本の首都です。大阪は商業の中心地として知られています。",
			opts: PassageOptions{Size: 16, Overlap: 4},
			want: []string{
				"東京は日本の首都です。",
				"都です。大阪は商業の中心地として",
				"地として知られています。",
			},
		},
		{
			name: "a heading stays with its paragraph",
			in:   "# Title\n\nIntro text here.\n\n## Methods\n\nWe measured things carefully.",
			opts: PassageOptions{Size: 45},
			want: []string{
				"# Title\n\nIntro text here.",
				"## Methods\n\nWe measured things carefully.",
			},
		},
		{
			name: "a list item starts a new passage before a word break",
			in:   "Skills:\n- Go and Python\n- distributed systems design",
			opts: PassageOptions{Size: 30},
			want: []string{"Skills:\n- Go and Python", "- distributed systems design"},
		},
		{
			name: "the overlap starts at a word boundary",
			in:   "one two three four five six seven eight nine ten eleven twelve",
			opts: PassageOptions{Size: 24, Overlap: 10},
			want: []string{
				"one two three four five",
				"four five six seven",
				"six seven eight nine ten",
				"nine ten eleven twelve",
			},
		},
		{
			name: "the overlap starts at a sentence start when one is in reach",
			in:   "Alpha beta gamma delta epsilon zeta eta. Theta iota kappa lambda mu nu xi omicron pi rho.",
			opts: PassageOptions{Size: 60, Overlap: 30},
			want: []string{
				"Alpha beta gamma delta epsilon zeta eta.",
				"gamma delta epsilon zeta eta. Theta iota kappa lambda mu nu",
				"Theta iota kappa lambda mu nu xi omicron pi rho.",
			},
		},
		{
			name: "a long run of white space after the overlap does not stall",
			in:   "aaaa bbbb" + strings.Repeat(" ", 30) + "cccc",
			opts: PassageOptions{Size: 12, Overlap: 6},
			want: []string{"aaaa bbbb", "cccc"},
		},
		{
			name: "invalid UTF-8 bytes are kept and never split",
			in:   "ab\xffcd \xe2\x82 ef",
			opts: PassageOptions{Size: 4},
			want: []string{"ab\xffc", "d \xe2\x82", "ef"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Passages(tt.in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkPassages(t, tt.in, tt.opts, got)
			var texts []string
			for _, p := range got {
				texts = append(texts, p.Text)
			}
			if diff := cmp.Diff(tt.want, texts); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			again, _ := Passages(tt.in, tt.opts)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("a second run differs (-first +second):\n%s", diff)
			}
		})
	}
}

func TestPassagesRejectsInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts PassageOptions
		want string
	}{
		{"a zero size is rejected", PassageOptions{Size: 0}, "size 0"},
		{"a negative size is rejected", PassageOptions{Size: -5}, "size -5"},
		{"a negative overlap is rejected", PassageOptions{Size: 10, Overlap: -1}, "overlap -1"},
		{"an overlap equal to the size is rejected", PassageOptions{Size: 10, Overlap: 10}, "less than the size 10"},
		{"an overlap larger than the size is rejected", PassageOptions{Size: 10, Overlap: 11}, "overlap 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Passages("some text", tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if got != nil {
				t.Errorf("passages = %v, want none", got)
			}
		})
	}
}

func TestPassagesStopsAtMax(t *testing.T) {
	s := strings.Repeat("One sentence here. ", 100)
	all, err := Passages(s, PassageOptions{Size: 40, Overlap: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Passages(s, PassageOptions{Size: 40, Max: len(all)}); err != nil || len(got) != len(all) {
		t.Errorf("with Max the number of passages: %d passages, %v; want %d", len(got), err, len(all))
	}
	if got, err := Passages(s, PassageOptions{Size: 40, Max: len(all) - 1}); !errors.Is(err, ErrTooManyPassages) || got != nil {
		t.Errorf("with Max one less: %d passages, %v; want ErrTooManyPassages", len(got), err)
	}
}

func TestPassagesWithDefaultsOnALongDocument(t *testing.T) {
	// A document of many paragraphs of about 60 words each.
	var b strings.Builder
	sentence := "Retrieval augmented generation grounds answers in documents the model did not see during training. "
	for i := range 40 {
		if i%5 == 0 {
			b.WriteString("## Section\n\n")
		}
		for range 4 {
			b.WriteString(sentence)
		}
		b.WriteString("\n\n")
	}
	in := b.String()
	o := DefaultPassageOptions
	got, err := Passages(in, o)
	if err != nil {
		t.Fatal(err)
	}
	checkPassages(t, in, o, got)
	for _, p := range got {
		if n := utf8.RuneCountInString(p.Text); n < o.Size/3 && p.Index != len(got)-1 {
			t.Errorf("passage %d has %d characters, want at least a third of %d", p.Index, n, o.Size)
		}
		if strings.HasSuffix(p.Text, "## Section") {
			t.Errorf("passage %d ends with a heading", p.Index)
		}
		last := p.Text[len(p.Text)-1]
		if last != '.' {
			t.Errorf("passage %d ends %q, want the end of a sentence", p.Index, p.Text[max(0, len(p.Text)-20):])
		}
	}
}

func TestPassagesOfATestdataAbstract(t *testing.T) {
	data, err := os.ReadFile("testdata/abstract.md")
	if err != nil {
		t.Fatal(err)
	}
	in := string(data)
	for _, o := range []PassageOptions{DefaultPassageOptions, {Size: 300, Overlap: 50}, {Size: 80, Overlap: 20}} {
		got, err := Passages(in, o)
		if err != nil {
			t.Fatal(err)
		}
		checkPassages(t, in, o, got)
	}
}

func FuzzPassages(f *testing.F) {
	f.Add("One two. Three four.\n\nFive six.", 10, 3)
	f.Add("# H\n\npara\n- a\n- b", 5, 1)
	f.Add("東京は日本の首都です。大阪は商業の中心地です。", 4, 2)
	f.Add("a\xff\xfe b\xe2\x82 c   \n\n\n  d", 3, 2)
	f.Add(strings.Repeat("x", 100), 7, 6)
	if data, err := os.ReadFile("testdata/abstract.md"); err == nil {
		f.Add(string(data), 200, 40)
	}
	f.Fuzz(func(t *testing.T, s string, size, overlap int) {
		o := PassageOptions{Size: size, Overlap: overlap}
		got, err := Passages(s, o)
		if size <= 0 || overlap < 0 || overlap >= size {
			if err == nil {
				t.Fatalf("options %+v accepted", o)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkPassages(t, s, o, got)
	})
}

// checkPassages checks what holds of every result of Passages: offsets map
// back to the input, sizes hold, every non-space character is covered,
// passages advance, and the overlap is bounded and starts at a word boundary.
func checkPassages(t *testing.T, s string, o PassageOptions, ps []Passage) {
	t.Helper()
	covered := make([]bool, len(s))
	boundary := make([]bool, len(s)+1) // where a rune (or an invalid byte) starts
	for i := range s {
		boundary[i] = true
	}
	boundary[len(s)] = true
	for i, p := range ps {
		if p.Index != i {
			t.Fatalf("passage %d has Index %d", i, p.Index)
		}
		if p.Start < 0 || p.End > len(s) || p.Start >= p.End {
			t.Fatalf("passage %d has offsets [%d, %d) in a text of %d bytes", i, p.Start, p.End, len(s))
		}
		if s[p.Start:p.End] != p.Text {
			t.Fatalf("passage %d: s[%d:%d] = %q, Text = %q", i, p.Start, p.End, s[p.Start:p.End], p.Text)
		}
		if strings.TrimSpace(p.Text) != p.Text || strings.TrimFunc(p.Text, unicode.IsSpace) != p.Text {
			t.Fatalf("passage %d is not trimmed: %q", i, p.Text)
		}
		if !boundary[p.Start] || !boundary[p.End] {
			t.Fatalf("passage %d [%d, %d) splits a UTF-8 sequence", i, p.Start, p.End)
		}
		if n := utf8.RuneCountInString(p.Text); n > o.Size {
			t.Fatalf("passage %d has %d characters, more than %d", i, n, o.Size)
		}
		for j := p.Start; j < p.End; j++ {
			covered[j] = true
		}
		if i == 0 {
			continue
		}
		prev := ps[i-1]
		if p.Start <= prev.Start || p.End <= prev.End {
			t.Fatalf("passage %d [%d, %d) does not advance past passage %d [%d, %d)", i, p.Start, p.End, i-1, prev.Start, prev.End)
		}
		if p.Start < prev.End {
			if n := utf8.RuneCountInString(s[p.Start:prev.End]); n > o.Overlap {
				t.Fatalf("passages %d and %d overlap by %d characters, more than %d", i-1, i, n, o.Overlap)
			}
			before, _ := utf8.DecodeLastRuneInString(s[:p.Start])
			first, _ := utf8.DecodeRuneInString(s[p.Start:])
			if !unicode.IsSpace(before) && !spacelessScript(before) && !spacelessScript(first) {
				t.Fatalf("passage %d starts inside a word: %q|%q", i, s[max(0, p.Start-10):p.Start], p.Text[:min(10, len(p.Text))])
			}
		}
	}
	for i, r := range s {
		if !unicode.IsSpace(r) && !covered[i] {
			t.Fatalf("byte %d (%q) of the input is in no passage", i, r)
		}
	}
}

func BenchmarkPassages(b *testing.B) {
	data, err := os.ReadFile("testdata/abstract.md")
	if err != nil {
		b.Fatal(err)
	}
	in := strings.Repeat(string(data)+"\n\n", 100) // about 200 KB
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Passages(in, DefaultPassageOptions); err != nil {
			b.Fatal(err)
		}
	}
}
