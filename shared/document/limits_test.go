package document

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
)

// maxExtractAlloc bounds what one extraction may allocate in all (garbage
// included, so it bounds the peak too), whatever the file: the limits keep a
// refused file near the size of the limit it reached. Before them, the
// hostile files allocated from 1 GiB up.
const maxExtractAlloc = 512 << 20

// extractAlloc runs Extract and returns what it allocated.
func extractAlloc(ctx context.Context, name string, data []byte) (Document, uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, err := Extract(ctx, name, data)
	runtime.ReadMemStats(&after)
	return doc, after.TotalAlloc - before.TotalAlloc, err
}

// TestExtractRefusesHostileFiles extracts the files built to amplify (a
// table padded to its widest row, fonts mapping a code to thousands of
// characters, megabytes of text operators): each is refused with an error
// naming the limit it reached, having allocated about what the limit allows.
func TestExtractRefusesHostileFiles(t *testing.T) {
	for _, h := range documenttest.Hostile() {
		if h.ChunkSize != 0 || h.Metadata != nil {
			continue // these amplify at ingestion, in the chunks they make
		}
		t.Run(h.Name, func(t *testing.T) {
			_, alloc, err := extractAlloc(t.Context(), h.Name, h.Data)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), h.Limit) {
				t.Fatalf("error = %v, want ErrTooLarge saying %q", err, h.Limit)
			}
			t.Logf("%d bytes: refused after allocating %d MiB: %v", len(h.Data), alloc>>20, err)
			if alloc > maxExtractAlloc {
				t.Errorf("allocated %d MiB, more than %d MiB", alloc>>20, maxExtractAlloc>>20)
			}
		})
	}
}

// table returns the body of a document with one table of rows rows, the
// first with width cells and the others with one.
func table(width, rows int) string {
	cell := `<w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc>`
	return `<w:body><w:tbl><w:tr>` + strings.Repeat(cell, width) + `</w:tr>` +
		strings.Repeat(`<w:tr>`+cell+`</w:tr>`, rows-1) + `</w:tbl></w:body>`
}

// cmapPDF returns a PDF whose font maps the code of "A" to units UTF-16
// units, by a bfchar or a bfrange entry, and shows "A" once.
func cmapPDF(units int, bfrange bool) []byte {
	return documenttest.PDFToUnicodeBomb(units, 1, bfrange)
}

func TestExtractLimits(t *testing.T) {
	tests := []struct {
		name, file string
		data       []byte
		wantErr    string // "" for success
	}{
		{"a table row of MaxTableColumns cells is read", "t.docx", documenttest.DOCX(table(MaxTableColumns, 2), "", ""), ""},
		{"a table row of one cell more is refused", "t.docx", documenttest.DOCX(table(MaxTableColumns+1, 2), "", ""), "more than 1000 cells, the limit per row"},
		{"a table of MaxTableRows rows is read", "t.docx", documenttest.DOCX(table(1, MaxTableRows), "", ""), ""},
		{"a table of one row more is refused", "t.docx", documenttest.DOCX(table(1, MaxTableRows+1), "", ""), "more than 100000 rows, the limit per table"},
		{"a table of MaxTableCells cells as padded is read", "t.docx", documenttest.DOCX(table(10, MaxTableCells/10), "", ""), ""},
		{"a table padded to one cell more is refused", "t.docx", documenttest.DOCX(table(11, MaxTableCells/11+1), "", ""), "cells (rows times its widest row), the limit per table"},
		{"a ToUnicode bfchar of MaxGlyphText units is read", "t.pdf", cmapPDF(MaxGlyphText, false), ""},
		{"a ToUnicode bfchar of one unit more is refused", "t.pdf", cmapPDF(MaxGlyphText+1, false), "33 UTF-16 units of text, more than 32"},
		{"a ToUnicode bfrange of MaxGlyphText units is read", "t.pdf", cmapPDF(MaxGlyphText, true), ""},
		{"a ToUnicode bfrange of one unit more is refused", "t.pdf", cmapPDF(MaxGlyphText+1, true), "33 UTF-16 units of text, more than 32"},
		{"a glyph name of MaxGlyphText units is read", "t.pdf", documenttest.PDFGlyphNameBomb(MaxGlyphText, 1), ""},
		{"a glyph name of one unit more is refused", "t.pdf", documenttest.PDFGlyphNameBomb(MaxGlyphText+1, 1), "33 UTF-16 units of text, more than 32"},
		{"a text file of MaxTextBytes is read", "t.txt", documenttest.Prose(MaxTextBytes), ""},
		{"a text file of one byte more is refused", "t.txt", documenttest.Prose(MaxTextBytes + 1), "the extracted text exceeds 8 MiB"},
		{"Windows-1252 text is counted as it is decoded", "t.txt", bytes.Repeat([]byte{0xE9}, MaxTextBytes/2+1), "the extracted text exceeds 8 MiB"},
		{"UTF-16 text is counted as it is decoded", "t.txt", append([]byte{0xFF, 0xFE}, bytes.Repeat([]byte{0xAC, 0x20}, MaxTextBytes/3+1)...), "the extracted text exceeds 8 MiB"},
		{"a PDF drawing more than MaxTextBytes of text is refused", "t.pdf", documenttest.PDFTextOperators(12 << 20), "the extracted text exceeds 8 MiB"},
		{"a DOCX holding more than MaxTextBytes of text is refused", "t.docx",
			documenttest.DOCX(`<w:body>`+strings.Repeat(`<w:p><w:r><w:t>`+string(documenttest.Prose(4000))+`</w:t></w:r></w:p>`, 2200)+`</w:body>`, "", ""),
			"the extracted text exceeds 8 MiB"},
		{"list items whose breaks would be indented past the limit are refused", "t.docx",
			documenttest.DOCX(`<w:body><w:p><w:pPr><w:numPr><w:ilvl w:val="8"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>a</w:t>`+
				strings.Repeat(`<w:br/>`, MaxTextBytes/10)+`<w:t>b</w:t></w:r></w:p></w:body>`, "", ""), "the extracted text exceeds 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, alloc, err := extractAlloc(t.Context(), tt.file, tt.data)
			if alloc > maxExtractAlloc {
				t.Errorf("allocated %d MiB, more than %d MiB", alloc>>20, maxExtractAlloc>>20)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(doc.Markdown) > MaxTextBytes {
					t.Errorf("Markdown is %d bytes, more than MaxTextBytes", len(doc.Markdown))
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want ErrTooLarge saying %q", err, tt.wantErr)
			}
		})
	}
}

// A table inside a table's cell joins that cell as text: nesting adds no
// padding, so the Markdown grows with the text, not with the nesting.
func TestExtractNestedTablesGrowLinearly(t *testing.T) {
	row := strings.Repeat(`<w:tc><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc>`, MaxTableColumns-1)
	var b strings.Builder
	b.WriteString(`<w:body>`)
	const depth = 40 // 5 elements a level, under the nesting limit
	for range depth {
		b.WriteString(`<w:tbl><w:tr>` + row + `<w:tc>`)
	}
	for range depth {
		b.WriteString(`</w:tc></w:tr></w:tbl>`)
	}
	b.WriteString(`</w:body>`)
	doc, err := Extract(t.Context(), "n.docx", documenttest.DOCX(b.String(), "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if n, want := strings.Count(doc.Markdown, "x"), depth*(MaxTableColumns-1); n != want {
		t.Errorf("%d cells' text, want %d", n, want)
	}
	if len(doc.Markdown) > 8*depth*MaxTableColumns {
		t.Errorf("Markdown is %d bytes for %d one-letter cells", len(doc.Markdown), depth*MaxTableColumns)
	}
}

func TestExtractCutsLongTitles(t *testing.T) {
	long := strings.Repeat("word ", 10_000)
	for _, file := range []string{"t.md", "t.txt"} {
		doc, err := Extract(t.Context(), file, []byte("# "+long+"\n\nBody.\n"))
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(doc.Title); n > MaxTitleChars || n < MaxTitleChars-10 || !strings.HasSuffix(doc.Title, "word…") {
			t.Errorf("%s: title of %d characters %q..., want it cut at a word within %d", file, n, doc.Title[:20], MaxTitleChars)
		}
	}
}

// countdown is a context that ends after its Err has been asked n times,
// and counts how often it is asked afterwards: extraction must check it as it
// goes, and stop at the first check that finds it ended.
type countdown struct {
	context.Context
	left, after atomic.Int64
}

func (c *countdown) Err() error {
	if c.left.Add(-1) < 0 {
		c.after.Add(1)
		return context.Canceled
	}
	return nil
}

func TestExtractStopsWhenTheContextEnds(t *testing.T) {
	report, err := os.ReadFile(filepath.Join("testdata", "report.docx"))
	if err != nil {
		t.Fatal(err)
	}
	big := []struct {
		name string
		data []byte
	}{
		{"text.pdf", documenttest.PDFTextOperators(4 << 20)},
		{"paragraphs.docx", documenttest.DOCX(`<w:body>`+strings.Repeat(`<w:p><w:r><w:t>Some words.</w:t></w:r></w:p>`, 50_000)+`</w:body>`, "", "")},
		{"styles.docx", documenttest.DOCX(`<w:body/>`, strings.Repeat(`<w:style w:styleId="s"><w:name w:val="Normal"/></w:style>`, 50_000), "")},
		{"report.docx", report},
	}
	for _, b := range big {
		t.Run(b.name, func(t *testing.T) {
			for _, after := range []int64{0, 1, 3} {
				ctx := &countdown{Context: t.Context()}
				ctx.left.Store(after)
				_, err := Extract(ctx, b.name, b.data)
				switch {
				case b.name == "report.docx" && after > 0:
					// Too small to be checked more than once.
				case !errors.Is(err, context.Canceled):
					t.Fatalf("with the context ending after %d checks: error = %v", after, err)
				case ctx.after.Load() != 1:
					t.Errorf("the context was checked %d times after it ended, want once", ctx.after.Load())
				}
			}
		})
	}
}

// FuzzExtract feeds every format arbitrary bytes, seeded with the fixtures
// and the hostile files (and testdata/fuzz/FuzzExtract): Extract returns a
// document or an error wrapping ErrCorrupt, ErrUnsupported or ErrTooLarge,
// never panics, never produces more than MaxTextBytes (nor, from plain text,
// more than three bytes of UTF-8 per byte read), and never allocates more
// than maxExtractAlloc in all.
func FuzzExtract(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".golden.md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		for i, ext := range fuzzExts {
			if strings.HasSuffix(e.Name(), ext) {
				f.Add(uint8(i), data)
			}
		}
	}
	f.Add(uint8(2), documenttest.PDF(testPDFObjects(true), "/Root 1 0 R /Info 12 0 R"))
	f.Add(uint8(2), documenttest.PDF(testPDFObjects(false), "/Root 1 0 R /Info 12 0 R"))
	f.Add(uint8(2), buildPDFObjStm(testPDFObjects(true), []int{1, 2, 3, 4, 5, 6, 7, 9, 12}, "/Root 1 0 R"))
	f.Add(uint8(3), documenttest.DOCX(testDOCXBody, testDOCXStyles, testDOCXCore))
	for _, h := range documenttest.Hostile() {
		if len(h.Data) > maxSeedFile { // the others are in testdata/fuzz/FuzzExtract
			f.Add(uint8(slices.Index(fuzzExts, filepath.Ext(h.Name))), h.Data)
		}
	}
	f.Fuzz(func(t *testing.T, ext uint8, data []byte) {
		name := "fuzz" + fuzzExts[int(ext)%len(fuzzExts)]
		doc, alloc, err := extractAlloc(t.Context(), name, data)
		if alloc > maxExtractAlloc {
			t.Fatalf("allocated %d MiB from %d bytes, more than %d MiB", alloc>>20, len(data), maxExtractAlloc>>20)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v wraps none of ErrCorrupt, ErrUnsupported, ErrTooLarge", err)
			}
			return
		}
		if Normalize(doc.Markdown) != doc.Markdown {
			t.Fatalf("Markdown is not normalised: %q", doc.Markdown)
		}
		if len(doc.Markdown) > MaxTextBytes {
			t.Fatalf("Markdown of %d bytes, more than MaxTextBytes", len(doc.Markdown))
		}
		if ext%2 == 0 && len(doc.Markdown) > 3*len(data)+1 {
			t.Fatalf("%d bytes of text gave %d bytes of Markdown", len(data), len(doc.Markdown))
		}
		if utf8.RuneCountInString(doc.Title) > MaxTitleChars {
			t.Fatalf("title of %d characters", utf8.RuneCountInString(doc.Title))
		}
	})
}

// fuzzExts are the formats FuzzExtract's first argument chooses from.
var fuzzExts = []string{".txt", ".md", ".pdf", ".docx"}

// maxSeedFile is the largest hostile file kept as a corpus file.
const maxSeedFile = 32 << 10

// TestWriteFuzzSeeds writes the small hostile files to
// testdata/fuzz/FuzzExtract, in the corpus format of go test -fuzz, when run
// with -update.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz/FuzzExtract")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzExtract")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range documenttest.Hostile() {
		if len(h.Data) > maxSeedFile {
			continue // seeded in code: a corpus file would be too large to keep
		}
		seed := fmt.Sprintf("go test fuzz v1\nuint8(%d)\n[]byte(%q)\n", slices.Index(fuzzExts, filepath.Ext(h.Name)), h.Data)
		if err := os.WriteFile(filepath.Join(dir, h.Name), []byte(seed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
