package document

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
)

// This file builds small PDFs for tests: the fixtures made by LibreOffice
// cover what it writes; these cover what other writers do (object streams,
// composite fonts, kerned TJ arrays, escapes) and damaged files.

// buildPDFObjStm writes objects 1..n like buildPDF, but packs the objects
// whose numbers are in packed into one object stream (object n+1) and
// replaces the table with a cross-reference stream (object n+2), as PDF 1.5
// writers do.
func buildPDFObjStm(objs []string, packed []int, trailer string) []byte {
	isPacked := map[int]bool{}
	for _, n := range packed {
		isPacked[n] = true
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs)+3)
	index := map[int]int{}
	var header, body strings.Builder
	for i, o := range objs {
		num := i + 1
		if isPacked[num] {
			index[num] = len(index)
			fmt.Fprintf(&header, "%d %d ", num, body.Len())
			body.WriteString(o + "\n")
			continue
		}
		offsets[num] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, o)
	}
	stmNum, xrefNum := len(objs)+1, len(objs)+2
	data := header.String() + body.String()
	offsets[stmNum] = b.Len()
	fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", stmNum,
		documenttest.Stream(fmt.Sprintf("/Type /ObjStm /N %d /First %d", len(index), header.Len()), []byte(data), true))
	offsets[xrefNum] = b.Len()
	var rows bytes.Buffer
	for num := 0; num <= xrefNum; num++ {
		switch {
		case num == 0:
			rows.Write([]byte{0, 0, 0, 0, 0, 0xff, 0xff})
		case isPacked[num]:
			rows.Write([]byte{2, 0, 0, byte(stmNum >> 8), byte(stmNum), 0, byte(index[num])})
		default:
			o := offsets[num]
			rows.Write([]byte{1, byte(o >> 24), byte(o >> 16), byte(o >> 8), byte(o), 0, 0})
		}
	}
	fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", xrefNum,
		documenttest.Stream(fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] %s", xrefNum+1, trailer), rows.Bytes(), true))
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", offsets[xrefNum])
	return b.Bytes()
}

// testPDFObjects returns the objects of a two-page document: page 1 uses a
// composite font with a ToUnicode map (bfchar and bfrange), page 2 a
// standard font with a Differences encoding, kerned TJ arrays, string
// escapes and the ' operator. Object 1 is the catalog.
func testPDFObjects(compress bool) []string {
	cmap := `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CMapName /Test-UCS def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
2 beginbfchar
<0001> <0020>
<0002> <00E9>
endbfchar
2 beginbfrange
<0010> <0019> <0041>
<0020> <0021> [<0066> <FB01>]
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end`
	// "ABC" 'é' " " "fi" over codes: 0010 0011 0012 0002 0001 0021 0020
	page1 := "BT /F1 20 Tf 72 720 Td <0010001100120002> Tj <0001002100200010> Tj ET\n" +
		"BT /F2 11 Tf 72 690 Td (First line of text) Tj 0 -13 Td (continues here.) Tj ET\n" +
		"BT /F2 11 Tf 72 650 Td (A new \\(escaped\\) paragraph\\056) Tj ET\n"
	page2 := "BT /F2 11 Tf 14 TL 72 720 Td [(Ker)20(ned)-600(words)] TJ\n" +
		"(next line via quote) ' T* (\\101\\102C \\\\ back\\\nslash) Tj\n" +
		"/F3 11 Tf 0 -28 Td (\\001\\002) Tj ET\n" +
		"BI /W 2 /H 1 /BPC 8 /CS /G ID \x00EI\n EI\n" +
		"BT /F2 11 Tf 72 600 Td (after the image) Tj ET\n"
	return []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /Resources << /Font << /F2 6 0 R /F3 9 0 R >> >> >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 10 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [11 0 R] >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H /DescendantFonts [7 0 R] /ToUnicode 8 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type /Encoding /Differences [39 /quoteright 96 /quoteleft] >> >>",
		"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /DW 600 /W [16 [700 700 700] 32 33 500] >>",
		documenttest.Stream("", []byte(cmap), compress),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Custom /Encoding << /Differences [1 /eacute /uni2013] >> >>",
		documenttest.Stream("", []byte(page1), compress),
		documenttest.Stream("", []byte(page2), compress),
		"<< /Title (Test \\(metadata\\) title) /Producer (switchboard tests) >>",
	}
}
