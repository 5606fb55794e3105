package document

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestExtractGolden extracts every fixture under testdata/ (and the PDFs and
// DOCX files built by the test helpers) and compares the Markdown with
// testdata/<name>.golden.md. Run with -update to rewrite the golden files
// after checking the differences by eye.
func TestExtractGolden(t *testing.T) {
	type fixture struct {
		name      string
		data      []byte
		format    string
		wantTitle string
	}
	fixtures := []fixture{
		{name: "report.pdf", format: FormatPDF, wantTitle: "Retrieval Quality Report"},
		{name: "report.docx", format: FormatDOCX, wantTitle: "Retrieval Quality Report"},
		{name: "notes.txt", format: FormatText, wantTitle: "Meeting notes"},
		{name: "guide.md", format: FormatMarkdown, wantTitle: "Installing"},
		{name: "built.pdf", data: documenttest.PDF(testPDFObjects(true), "/Root 1 0 R /Info 12 0 R"), format: FormatPDF, wantTitle: "ABCé fifA"},
		{name: "built-uncompressed.pdf", data: documenttest.PDF(testPDFObjects(false), "/Root 1 0 R /Info 12 0 R"), format: FormatPDF, wantTitle: "ABCé fifA"},
		{name: "built-objstm.pdf", data: buildPDFObjStm(testPDFObjects(true), []int{1, 2, 3, 4, 5, 6, 7, 9, 12}, "/Root 1 0 R /Info 12 0 R"), format: FormatPDF, wantTitle: "ABCé fifA"},
		{name: "metadata-title.pdf", data: documenttest.PDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >> >> >> >>",
			documenttest.Stream("", []byte("BT /F1 12 Tf 72 700 Td (Body text only.) Tj ET"), true),
			"<< /Title <FEFF00C9007400E9> >>",
		}, "/Root 1 0 R /Info 5 0 R"), format: FormatPDF, wantTitle: "Été"},
		{name: "built.docx", data: documenttest.DOCX(testDOCXBody, testDOCXStyles, testDOCXCore), format: FormatDOCX, wantTitle: "Built document"},
		{name: "no-heading.docx", data: documenttest.DOCX(`<w:body><w:p><w:r><w:t>Just text.</w:t></w:r></w:p></w:body>`, "", testDOCXCore), format: FormatDOCX, wantTitle: "Metadata title"},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			data := fx.data
			if data == nil {
				var err error
				if data, err = os.ReadFile(filepath.Join("testdata", fx.name)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Extract(t.Context(), fx.name, data)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if got.Format != fx.format {
				t.Errorf("Format = %q, want %q", got.Format, fx.format)
			}
			if got.Title != fx.wantTitle {
				t.Errorf("Title = %q, want %q", got.Title, fx.wantTitle)
			}
			if Normalize(got.Markdown) != got.Markdown {
				t.Errorf("Markdown is not normalised:\n%s", got.Markdown)
			}
			golden := filepath.Join("testdata", fx.name+".golden.md")
			if *update {
				if err := os.WriteFile(golden, []byte(got.Markdown), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.Markdown); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractFormats(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		data    string
		want    Document
		wantErr error
	}{
		{"the extension decides the format, in any case", "NOTES.TXT", "hi", Document{Format: FormatText, Markdown: "hi\n"}, nil},
		{".markdown is Markdown", "a/b/readme.markdown", "# Hi\n", Document{Format: FormatMarkdown, Markdown: "# Hi\n", Title: "Hi"}, nil},
		{"a Windows path works", `C:\docs\x.md`, "text", Document{Format: FormatMarkdown, Markdown: "text\n"}, nil},
		{"UTF-16 with a byte order mark is decoded", "u.txt", "\xff\xfeh\x00i\x00", Document{Format: FormatText, Markdown: "hi\n"}, nil},
		{"front matter is not a heading, but its title is the title", "post.md", "---\ntitle: \"From front matter\"\ntags: [a]\n---\nBody\n\n---\n", Document{Format: FormatMarkdown, Markdown: "---\ntitle: \"From front matter\"\ntags: [a]\n---\nBody\n\n---\n", Title: "From front matter"}, nil},
		{"a setext heading is the title", "s.md", "Intro\n\nMy Title\n========\n", Document{Format: FormatMarkdown, Markdown: "Intro\n\nMy Title\n========\n", Title: "My Title"}, nil},
		{"an empty text file is an empty document", "empty.txt", "", Document{Format: FormatText}, nil},
		{"an unknown extension is unsupported", "photo.png", "\x89PNG", Document{}, ErrUnsupported},
		{"a legacy Word file is unsupported", "old.doc", "x", Document{}, ErrUnsupported},
		{"a name without an extension is unsupported", "README", "x", Document{}, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(t.Context(), tt.file, []byte(tt.data))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractRejectsDamagedFiles(t *testing.T) {
	report, err := os.ReadFile("testdata/report.docx")
	if err != nil {
		t.Fatal(err)
	}
	reportPDF, err := os.ReadFile("testdata/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	objs := testPDFObjects(true)
	brokenStream := append([]string(nil), objs...)
	good := documenttest.Zlib([]byte("BT /F2 11 Tf (hello) Tj ET"))
	bad := append([]byte(nil), good...)
	for i := 2; i < len(bad)-4; i++ {
		bad[i] ^= 0x5a // damage the deflate data, keep the zlib header
	}
	brokenStream[9] = "<< /Filter /FlateDecode /Length " + strconv.Itoa(len(bad)) + " >>\nstream\n" + string(bad) + "\nendstream"
	lzw := append([]string(nil), objs...)
	lzw[9] = "<< /Filter /LZWDecode /Length 4 >>\nstream\nabcd\nendstream"
	encrypted := documenttest.PDF(objs, "/Root 1 0 R /Encrypt << /Filter /Standard /V 2 /R 3 /O (x) /U (y) /P -4 >>")
	hugeFirst := regexp.MustCompile(`/First \d+`).ReplaceAll(buildPDFObjStm(objs, []int{1, 2}, "/Root 1 0 R"), []byte("/First 1e300"))
	noPages := documenttest.PDF([]string{"<< /Type /Catalog >>"}, "/Root 1 0 R")

	tests := []struct {
		name string
		file string
		data []byte
		want error
		msg  string
	}{
		{"a truncated docx is corrupt", "a.docx", report[:len(report)/2], ErrCorrupt, "zip"},
		{"a docx without word/document.xml is corrupt", "a.docx", documenttest.Zip(map[string]string{"word/other.xml": "<x/>"}), ErrCorrupt, "word/document.xml"},
		{"a docx with broken XML is corrupt", "a.docx", documenttest.Zip(map[string]string{"word/document.xml": "<w:document><w:body><w:p>"}), ErrCorrupt, "main document part"},
		{"a docx whose main part is missing is corrupt", "a.docx", documenttest.Zip(map[string]string{
			"_rels/.rels":       `<Relationships><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document2.xml"/></Relationships>`,
			"word/document.xml": "<w:document><w:body/></w:document>",
		}), ErrCorrupt, "no word/document2.xml"},
		{"a docx that is not a Word document is corrupt", "a.docx", documenttest.Zip(map[string]string{"word/document.xml": "<html/>"}), ErrCorrupt, "no body"},
		{"text named .docx is corrupt", "a.docx", []byte("hello"), ErrCorrupt, "zip"},
		{"garbage named .pdf is corrupt", "a.pdf", []byte("this is not a pdf at all"), ErrCorrupt, "%PDF"},
		{"a truncated pdf is corrupt", "a.pdf", reportPDF[:200], ErrCorrupt, "no pages"},
		{"a pdf without pages is corrupt", "a.pdf", noPages, ErrCorrupt, "no pages"},
		{"a pdf with a broken content stream is corrupt", "a.pdf", documenttest.PDF(brokenStream, "/Root 1 0 R"), ErrCorrupt, "FlateDecode"},
		{"a pdf with an unsupported filter is unsupported", "a.pdf", documenttest.PDF(lzw, "/Root 1 0 R"), ErrUnsupported, "LZWDecode"},
		{"an object stream with an impossible /First is corrupt", "a.pdf", hugeFirst, ErrCorrupt, "bad /N or /First"},
		{"an encrypted pdf is unsupported", "a.pdf", encrypted, ErrUnsupported, "encrypted"},
		{"an encrypted pdf with a cross-reference stream is unsupported", "a.pdf",
			buildPDFObjStm(objs, []int{1, 2}, "/Root 1 0 R /Encrypt << /Filter /Standard /V 4 >>"), ErrUnsupported, "encrypted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract(t.Context(), tt.file, tt.data)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestExtractBoundsInput(t *testing.T) {
	big := make([]byte, MaxBytes+1)
	if _, err := Extract(t.Context(), "big.txt", big); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bytes, more than") {
		t.Errorf("oversize input: error = %v, want ErrTooLarge", err)
	}
	// 65 MiB of spaces compress to well under MaxBytes.
	bomb := bytes.Repeat([]byte(" "), 65<<20)
	t.Run("a zip bomb is refused", func(t *testing.T) {
		data := documenttest.Zip(map[string]string{"word/document.xml": string(bomb)})
		if _, err := Extract(t.Context(), "bomb.docx", data); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "decompresses to more than") {
			t.Errorf("error = %v, want ErrTooLarge", err)
		}
	})
	t.Run("a flate bomb is refused", func(t *testing.T) {
		objs := testPDFObjects(true)
		objs[9] = documenttest.Stream("", bomb, true)
		if _, err := Extract(t.Context(), "bomb.pdf", documenttest.PDF(objs, "/Root 1 0 R")); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "decompresses to more than") {
			t.Errorf("error = %v, want ErrTooLarge", err)
		}
	})
	t.Run("a form drawn from itself stops", func(t *testing.T) {
		objs := testPDFObjects(false)
		objs[9] = documenttest.Stream("", []byte("/X Do /X Do"), false)
		objs[2] = "<< /Type /Page /Parent 2 0 R /Contents 10 0 R /Resources << /XObject << /X 13 0 R >> >> >>"
		objs = append(objs, documenttest.Stream("/Type /XObject /Subtype /Form /Resources << /XObject << /X 13 0 R >> /Font << /F2 6 0 R >> >>",
			[]byte("BT /F2 11 Tf (loop) Tj ET /X Do /X Do"), false))
		doc, err := Extract(t.Context(), "loop.pdf", documenttest.PDF(objs, "/Root 1 0 R"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.Markdown, "loop") {
			t.Errorf("Markdown = %q, want the form's text", doc.Markdown)
		}
	})
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty stays empty", "", ""},
		{"blank lines only become empty", "\n \n\t\n", ""},
		{"CRLF and CR become LF", "a\r\nb\rc", "a\nb\nc\n"},
		{"trailing spaces go", "a  \nb\t\n", "a\nb\n"},
		{"runs of blank lines become one", "a\n\n\n\n b", "a\n\n b\n"},
		{"leading blank lines go", "\n\n\na", "a\n"},
		{"control characters go, tabs stay", "a\x00b\x07\tc\ufeff", "ab\tc\n"},
		{"form feeds and line separators end lines", "a\fb\u2028c", "a\nb\nc\n"},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "a\uFFFDb\n"},
		{"headings and lists are kept", "# T\n\n- a\n- b\n", "# T\n\n- a\n- b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Normalize(tt.in)
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Normalize(got); again != got {
				t.Errorf("Normalize is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func FuzzNormalizeIdempotent(f *testing.F) {
	f.Add("a\r\n\r\n\r\nb  \n\x00\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q, not a fixed point", s, n)
		}
	})
}

// TestExtractDamagedPDFsInLinearTime feeds PDFs made of one damaged object
// header repeated: parsing each from its header to the end of the file would
// take hours (quadratic); skipping what a failed parse read takes
// milliseconds. The test has no timer: a regression shows as a timeout.
func TestExtractDamagedPDFsInLinearTime(t *testing.T) {
	for _, unit := range []string{"1 0 obj (", "1 0 obj [", "1 0 obj <</A ", "trailer (", "1 0 obj <<>> stream\n", "7 0 obj 5 endobj\n"} {
		data := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte(unit), (4<<20)/len(unit))...)
		if _, err := Extract(t.Context(), "x.pdf", data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q repeated: error = %v, want ErrCorrupt", unit, err)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	for _, name := range []string{"report.pdf", "report.docx"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Extract(b.Context(), name, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	objs := testPDFObjects(true)
	var content strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&content, "BT /F2 11 Tf 72 %d Td (Line %d of a long page of text with words.) Tj ET\n", 700-i%50*14, i)
	}
	objs[9] = documenttest.Stream("", []byte(content.String()), true)
	data := documenttest.PDF(objs, "/Root 1 0 R")
	b.Run("1MB-of-content.pdf", func(b *testing.B) {
		b.SetBytes(int64(content.Len()))
		for b.Loop() {
			if _, err := Extract(b.Context(), "big.pdf", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
