// Package documenttest builds documents for tests of the code that reads
// them: PDFs written object by object, as a PDF writer lays them out.
//
//	pdf := documenttest.PDF([]string{
//		"<< /Type /Catalog /Pages 2 0 R >>",
//		...
//	}, "/Root 1 0 R")
package documenttest

import (
	"bytes"
	"fmt"
)

// PDF writes objects 1..n (objs[i] is object i+1) with a classic
// cross-reference table and a trailer with the given entries.
func PDF(objs []string, trailer string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d %s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailer, xref)
	return b.Bytes()
}
