package documenttest

import (
	"bytes"
	"fmt"
	"strings"
)

// A HostileFile is a small file built to make a reader produce far more
// than it reads: the amplification attacks of issue 10, which took a naive
// extractor from kilobytes of input to gigabytes of heap.
type HostileFile struct {
	// Name is the file name; its extension gives the format.
	Name string
	// What says what the file does, for reports.
	What string
	// Data is the file.
	Data []byte
	// Limit is what the refusal must say: a part of the error message that
	// names the limit the file reaches.
	Limit string
	// ChunkSize, if not zero, is the chunk size of the vector store to ingest
	// it into: some files amplify only through the chunks they are cut into.
	ChunkSize int
	// Metadata is the metadata to ingest it with, if any.
	Metadata map[string]string
}

// Hostile returns every hostile file, each small enough to be sent inline
// in a request of at most 1 MiB.
func Hostile() []HostileFile {
	return []HostileFile{
		{Name: "table-bomb-1.5k.docx", What: "DOCX, one row of 10,000 empty cells, then 10,000 one-cell rows",
			Data: DOCXTableBomb(10_000, 10_000), Limit: "cells, the limit per row"},
		{Name: "table-bomb-7k.docx", What: "DOCX, one row of 100,000 empty cells, then 100,000 one-cell rows",
			Data: DOCXTableBomb(100_000, 100_000), Limit: "cells, the limit per row"},
		{Name: "table-padding.docx", What: "DOCX, one row of 1,000 cells, then 100,000 one-cell rows padded to it",
			Data: DOCXTableBomb(1000, 100_000), Limit: "cells (rows times its widest row), the limit per table"},
		{Name: "tounicode-bfchar.pdf", What: "PDF, a ToUnicode bfchar mapping one code to 4,000 UTF-16 units, shown 100,000 times",
			Data: PDFToUnicodeBomb(4000, 100_000, false), Limit: "UTF-16 units of text, more than 32"},
		{Name: "tounicode-bfrange.pdf", What: "PDF, a ToUnicode bfrange mapping codes to 4,000 UTF-16 units, shown 100,000 times",
			Data: PDFToUnicodeBomb(4000, 100_000, true), Limit: "UTF-16 units of text, more than 32"},
		{Name: "glyph-name.pdf", What: "PDF, a Differences glyph name of 4,000 UTF-16 units, shown 100,000 times",
			Data: PDFGlyphNameBomb(4000, 100_000), Limit: "UTF-16 units of text, more than 32"},
		{Name: "text-operators.pdf", What: "PDF, 64 MiB of plain text operators in one compressed content stream",
			Data: PDFTextOperators(64<<20 - 4096), Limit: "the extracted text exceeds 8 MiB"},
		{Name: "many-chunks.txt", What: "960 KB of text into a store of 100-character chunks",
			Data: Prose(960 << 10), ChunkSize: 100, Limit: "chunks"},
		{Name: "metadata.md", What: "800 KB of Markdown in 200-character chunks with 32 KB of metadata, which every chunk repeats",
			Data: Prose(800 << 10), ChunkSize: 200, Metadata: BulkyMetadata(), Limit: "of metadata"},
	}
}

// DOCXTableBomb writes a .docx whose only table has one row of cells empty
// cells, then rows rows of one cell each: a Markdown table pads every row
// to the widest, so a naive reader writes cells × rows cells.
func DOCXTableBomb(cells, rows int) []byte {
	var b strings.Builder
	b.WriteString(`<w:body><w:tbl><w:tr>`)
	b.WriteString(strings.Repeat(`<w:tc/>`, cells))
	b.WriteString(`</w:tr>`)
	b.WriteString(strings.Repeat(`<w:tr><w:tc/></w:tr>`, rows))
	b.WriteString(`</w:tbl></w:body>`)
	return DOCX(b.String(), "", "")
}

// PDFToUnicodeBomb writes a PDF whose font's ToUnicode map gives the code of
// "A" units UTF-16 units of text (by a bfchar entry, or a bfrange one), and
// whose page shows "A" shows times, a line each.
func PDFToUnicodeBomb(units, shows int, bfrange bool) []byte {
	dst := "<" + strings.Repeat("0042", units) + ">"
	entry := "1 beginbfchar\n<41> " + dst + "\nendbfchar\n"
	if bfrange {
		entry = "1 beginbfrange\n<41> <41> " + dst + "\nendbfrange\n"
	}
	cmap := "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"1 begincodespacerange\n<00> <FF>\nendcodespacerange\n" + entry +
		"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend"
	return onePagePDF("/ToUnicode 5 0 R", Stream("", []byte(cmap), true),
		"BT /F1 12 Tf 14 TL 72 700 Td\n"+strings.Repeat("(A) Tj T*\n", shows)+"ET")
}

// PDFGlyphNameBomb writes a PDF whose font's Differences name the glyph of
// "A" uni followed by units UTF-16 units in hex, and whose page shows "A"
// shows times, a line each.
func PDFGlyphNameBomb(units, shows int) []byte {
	return onePagePDF("/Encoding << /Differences [65 /uni"+strings.Repeat("0042", units)+"] >>", "<< >>",
		"BT /F1 12 Tf 14 TL 72 700 Td\n"+strings.Repeat("(A) Tj T*\n", shows)+"ET")
}

// PDFTextOperators writes a PDF whose one page is about size bytes of plain
// text operators, a line of prose each, in one compressed content stream.
func PDFTextOperators(size int) []byte {
	line := "(" + string(Prose(96)) + ") Tj T*\n"
	content := "BT /F1 12 Tf 14 TL 72 700 Td\n" + strings.Repeat(line, max(size-40, 0)/len(line)) + "ET"
	return onePagePDF("", "<< >>", content)
}

// onePagePDF writes a PDF of one page showing content with font F1
// (Helvetica, with the extra font dictionary entries given) and object 5.
func onePagePDF(fontEntries, obj5, content string) []byte {
	return PDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> >>",
		Stream("", []byte(content), true),
		obj5,
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica " + fontEntries + " >>",
	}, "/Root 1 0 R")
}

// prose is the text Prose repeats: sentences of varied words, so that
// chunking cuts it as it cuts real text.
const prose = "Switchboard reads documents and cuts them into passages. Each passage is embedded and indexed. " +
	"A question finds the passages that answer it, by their words and by their meaning. "

// Prose returns n bytes of English prose, in paragraphs.
func Prose(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString(prose)
		if i%4 == 3 {
			b.WriteString("\n\n")
		}
	}
	return b.Bytes()[:n]
}

// BulkyMetadata returns the most metadata one document may carry: 32 keys
// of 1,000-character values.
func BulkyMetadata() map[string]string {
	md := map[string]string{}
	for i := range 32 {
		md[fmt.Sprintf("key%02d", i)] = strings.Repeat("v", 1000)
	}
	return md
}
