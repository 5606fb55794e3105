package document

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// maxXMLDepth bounds element nesting in the XML parts of a DOCX.
const maxXMLDepth = 256

// extractDOCX returns the Markdown of a Word document and the title in its
// metadata. It reads the main part named in _rels/.rels, usually
// word/document.xml (paragraphs, headings, list items, tables, breaks and
// tabs), word/styles.xml (which styles are headings or lists) and
// docProps/core.xml (the title); everything else is ignored.
func extractDOCX(data []byte) (md, title string, err error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return "", "", corrupt("docx: not a zip archive: %v", err)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[strings.TrimPrefix(f.Name, "/")] = f
	}
	b := newBudget()
	mainPart := "word/document.xml"
	if f, ok := files["_rels/.rels"]; ok {
		if x, err := readZipFile(f, b); err == nil {
			if target := officeDocument(x); target != "" {
				mainPart = target
			}
		}
	}
	body, ok := files[mainPart]
	if !ok {
		return "", "", corrupt("docx: no %s (the main document part)", mainPart)
	}
	bodyXML, err := readZipFile(body, b)
	if err != nil {
		return "", "", err
	}
	styles := docxStyles{}
	if f, ok := files["word/styles.xml"]; ok {
		if x, err := readZipFile(f, b); err == nil {
			styles = parseDOCXStyles(x) // styles only refine headings: a broken part is ignored
		} else if errors.Is(err, ErrUnsupported) {
			return "", "", err
		}
	}
	md, err = docxMarkdown(bodyXML, styles)
	if err != nil {
		return "", "", err
	}
	if f, ok := files["docProps/core.xml"]; ok {
		if x, err := readZipFile(f, b); err == nil {
			title = docxTitle(x)
		}
	}
	return md, title, nil
}

// officeDocument returns the main document part named in _rels/.rels, or "".
func officeDocument(rels []byte) string {
	d := xml.NewDecoder(bytes.NewReader(rels))
	for range 10_000 {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "Relationship" &&
			strings.HasSuffix(attr(t, "Type"), "/officeDocument") {
			return strings.TrimPrefix(path.Clean("/"+attr(t, "Target")), "/")
		}
	}
	return ""
}

// readZipFile reads a zip entry, spending its decompressed size from b.
func readZipFile(f *zip.File, b *budget) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, corrupt("docx: open %s: %v", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, b.left+1))
	if err != nil {
		return nil, corrupt("docx: read %s: %v", f.Name, err)
	}
	if err := b.take(len(data)); err != nil {
		return nil, fmt.Errorf("docx: %s: %w", f.Name, err)
	}
	return data, nil
}

// docxStyles maps a paragraph style id to its heading level (1-6), 0 when
// it is not a heading, and to whether it is a list style.
type docxStyles map[string]docxStyle

type docxStyle struct {
	heading int
	list    bool
}

// headingLevelOfName returns the heading level a style name or id stands
// for ("Title", "heading 2", "Heading2"), or 0.
func headingLevelOfName(name string) int {
	n := strings.ToLower(strings.ReplaceAll(name, " ", ""))
	if n == "title" {
		return 1
	}
	if rest, ok := strings.CutPrefix(n, "heading"); ok {
		if l, err := strconv.Atoi(rest); err == nil && l >= 1 && l <= 9 {
			return min(l, 6)
		}
	}
	return 0
}

// parseDOCXStyles reads which paragraph styles are headings (by name, or by
// outline level) and lists, from word/styles.xml.
func parseDOCXStyles(data []byte) docxStyles {
	styles := docxStyles{}
	d := xml.NewDecoder(bytes.NewReader(data))
	var id string
	var st docxStyle
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return styles
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return styles
			}
			switch t.Name.Local {
			case "style":
				id, st = attr(t, "styleId"), docxStyle{}
			case "name":
				if id != "" {
					if l := headingLevelOfName(attr(t, "val")); l > 0 {
						st.heading = l
					}
					if strings.HasPrefix(strings.ToLower(attr(t, "val")), "list bullet") ||
						strings.HasPrefix(strings.ToLower(attr(t, "val")), "list number") {
						st.list = true
					}
				}
			case "outlineLvl":
				if l, err := strconv.Atoi(attr(t, "val")); err == nil && l >= 0 && l < 9 && id != "" && st.heading == 0 {
					st.heading = min(l+1, 6)
				}
			}
		case xml.EndElement:
			depth--
			if t.Name.Local == "style" && id != "" {
				styles[id] = st
				id = ""
			}
		}
	}
}

// attr returns the value of the attribute with the given local name.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// docxTitle returns dc:title from docProps/core.xml.
func docxTitle(data []byte) string {
	d := xml.NewDecoder(bytes.NewReader(data))
	in := false
	var b strings.Builder
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil {
			return b.String()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return ""
			}
			in = t.Name.Local == "title"
		case xml.EndElement:
			depth--
			if in {
				return b.String()
			}
		case xml.CharData:
			if in && b.Len() < 1000 {
				b.Write(t)
			}
		}
	}
}

// docxPara collects one paragraph.
type docxPara struct {
	text    strings.Builder
	heading int
	list    bool
	level   int // list nesting, from w:ilvl
}

// docxTable collects one table: rows of cells.
type docxTable struct {
	rows [][]string
	cell *strings.Builder // the cell being read, or nil
}

// docxMarkdown converts word/document.xml to Markdown.
func docxMarkdown(data []byte, styles docxStyles) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var (
		out     strings.Builder
		paras   []*docxPara  // open paragraphs (a text box opens one inside another)
		tables  []*docxTable // open tables
		depth   int
		skip    int // >0: inside an element whose content is ignored, at that depth
		inText  bool
		prevLst bool // the last block written was a list item
		sawBody bool
	)
	block := func(s string, list bool) {
		if s == "" {
			return
		}
		if out.Len() > 0 {
			if list && prevLst {
				out.WriteString("\n")
			} else {
				out.WriteString("\n\n")
			}
		}
		out.WriteString(s)
		prevLst = list
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", corrupt("docx: main document part: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxXMLDepth {
				return "", corrupt("docx: main document part nests deeper than %d elements", maxXMLDepth)
			}
			if skip > 0 {
				continue
			}
			var p *docxPara
			if len(paras) > 0 {
				p = paras[len(paras)-1]
			}
			switch t.Name.Local {
			case "body":
				sawBody = true
			case "Fallback", "delText", "instrText", "del", "moveFrom", "footnoteReference", "commentReference":
				// Alternate renderings, deleted text, field codes: not text.
				skip = depth
			case "p":
				paras = append(paras, &docxPara{})
			case "pStyle":
				if p != nil {
					id := attr(t, "val")
					st, ok := styles[id]
					if !ok {
						st.heading = headingLevelOfName(id)
					}
					if st.heading > 0 {
						p.heading = st.heading
					}
					if st.list {
						p.list = true
					}
				}
			case "outlineLvl":
				if l, err := strconv.Atoi(attr(t, "val")); p != nil && err == nil && l >= 0 && l < 9 {
					p.heading = min(l+1, 6)
				}
			case "numPr":
				if p != nil {
					p.list = true
				}
			case "ilvl":
				if l, err := strconv.Atoi(attr(t, "val")); p != nil && err == nil && l >= 0 && l < 9 {
					p.level = l
				}
			case "numId":
				// numId 0 removes the numbering a style gave.
				if p != nil && attr(t, "val") == "0" {
					p.list = false
				}
			case "t":
				inText = true
			case "tab":
				// w:tab inside w:tabs (paragraph properties) is a tab stop, not text.
				if p != nil && !isTabStop(t) {
					p.text.WriteByte('\t')
				}
			case "br", "cr":
				if p != nil {
					p.text.WriteByte('\n')
				}
			case "noBreakHyphen":
				if p != nil {
					p.text.WriteByte('-')
				}
			case "tbl":
				tables = append(tables, &docxTable{})
			case "tr":
				if len(tables) > 0 {
					tb := tables[len(tables)-1]
					tb.rows = append(tb.rows, nil)
				}
			case "tc":
				if len(tables) > 0 {
					tables[len(tables)-1].cell = &strings.Builder{}
				}
			}
		case xml.EndElement:
			if skip == depth {
				skip = 0
			}
			depth--
			if skip > 0 {
				continue
			}
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if len(paras) == 0 {
					continue
				}
				p := paras[len(paras)-1]
				paras = paras[:len(paras)-1]
				s := strings.TrimSpace(p.text.String())
				if len(tables) > 0 && tables[len(tables)-1].cell != nil {
					c := tables[len(tables)-1].cell
					if s != "" {
						if c.Len() > 0 {
							c.WriteByte(' ')
						}
						c.WriteString(s)
					}
					continue
				}
				switch {
				case s == "":
				case p.heading > 0:
					block(strings.Repeat("#", p.heading)+" "+strings.Join(strings.Fields(s), " "), false)
				case p.list:
					item := strings.ReplaceAll(s, "\n", "\n"+strings.Repeat("  ", p.level+1))
					block(strings.Repeat("  ", p.level)+"- "+item, true)
				default:
					block(s, false)
				}
			case "tc":
				if len(tables) > 0 {
					tb := tables[len(tables)-1]
					if tb.cell != nil && len(tb.rows) > 0 {
						cell := strings.Join(strings.Fields(tb.cell.String()), " ")
						cell = strings.ReplaceAll(cell, "|", `\|`)
						tb.rows[len(tb.rows)-1] = append(tb.rows[len(tb.rows)-1], cell)
					}
					tb.cell = nil
				}
			case "tbl":
				if len(tables) == 0 {
					continue
				}
				tb := tables[len(tables)-1]
				tables = tables[:len(tables)-1]
				s := tableMarkdown(tb.rows)
				if len(tables) > 0 && tables[len(tables)-1].cell != nil {
					// A table inside a table cell: its text joins the cell.
					c := tables[len(tables)-1].cell
					for _, row := range tb.rows {
						for _, cell := range row {
							c.WriteString(" " + cell)
						}
					}
					continue
				}
				block(s, false)
			}
		case xml.CharData:
			if inText && skip == 0 && len(paras) > 0 {
				paras[len(paras)-1].text.Write(t)
			}
		}
	}
	if !sawBody {
		return "", corrupt("docx: main document part has no body")
	}
	return out.String(), nil
}

// isTabStop reports whether the w:tab element t is a tab stop definition (in
// w:tabs) rather than a tab character: a tab stop has a w:pos attribute.
func isTabStop(t xml.StartElement) bool {
	return attr(t, "pos") != ""
}

// tableMarkdown renders rows as a Markdown table, the first row as header.
func tableMarkdown(rows [][]string) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width == 0 {
		return ""
	}
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("|")
		for j := range width {
			cell := ""
			if j < len(r) {
				cell = r[j]
			}
			b.WriteString(" " + cell + " |")
		}
		if i == 0 {
			b.WriteString("\n|")
			for range width {
				b.WriteString(" --- |")
			}
		}
	}
	return b.String()
}
