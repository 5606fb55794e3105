// Package documenttest builds documents for tests of the code that reads
// them: PDFs written object by object, as a PDF writer lays them out; Word
// files from their body XML; and the hostile files of [Hostile], small
// files built to expand to gigabytes in a naive reader.
//
//	pdf := documenttest.PDF([]string{
//		"<< /Type /Catalog /Pages 2 0 R >>",
//		...
//	}, "/Root 1 0 R")
//	docx := documenttest.DOCX(`<w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body>`, "", "")
package documenttest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"fmt"
	"io"
	"maps"
	"slices"
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

// Stream returns the text of a stream object: dict entries (without << >>)
// and data, compressed with FlateDecode when compress is true.
func Stream(dict string, data []byte, compress bool) string {
	if compress {
		data = Zlib(data)
		dict += " /Filter /FlateDecode"
	}
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// Zlib compresses data with zlib, as FlateDecode expects, at the best
// compression (what an attacker would choose).
func Zlib(data []byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// wordNamespaces are the XML namespaces Word declares on its parts.
const wordNamespaces = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ` +
	`xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" ` +
	`xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" ` +
	`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`

// DOCX writes a minimal .docx with the given w:body element, styles part
// (the w:style elements) and core properties part (the dc: elements), each
// left out when empty.
func DOCX(body, styles, core string) []byte {
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ` + wordNamespaces + `>` + body + `</w:document>`,
	}
	if styles != "" {
		files["word/styles.xml"] = `<?xml version="1.0" encoding="UTF-8"?><w:styles ` + wordNamespaces + `>` + styles + `</w:styles>`
	}
	if core != "" {
		files["docProps/core.xml"] = `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties ` +
			`xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
			`xmlns:dc="http://purl.org/dc/elements/1.1/">` + core + `</cp:coreProperties>`
	}
	return Zip(files)
}

// Zip writes a zip archive of files (name to content), deflated at the
// best compression, in name order.
func Zip(files map[string]string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fw, err := w.Create(name)
		if err != nil {
			panic(err) // a bytes.Buffer never fails
		}
		io.WriteString(fw, files[name])
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}
