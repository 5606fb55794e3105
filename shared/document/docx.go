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
func extractDOCX(data []byte, lim *limits) (md, title string, err error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return "", "", corrupt("docx: not a zip archive: %v", err)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[strings.TrimPrefix(f.Name, "/")] = f
	}
	mainPart := "word/document.xml"
	if f, ok := files["_rels/.rels"]; ok {
		if x, err := readZipFile(f, lim); err == nil {
			if target := officeDocument(x); target != "" {
				mainPart = target
			}
		}
	}
	body, ok := files[mainPart]
	if !ok {
		return "", "", corrupt("docx: no %s (the main document part)", mainPart)
	}
	bodyXML, err := readZipFile(body, lim)
	if err != nil {
		return "", "", err
	}
	styles := docxStyles{}
	if f, ok := files["word/styles.xml"]; ok {
		if x, err := readZipFile(f, lim); err == nil {
			// Styles only refine headings: a broken part is ignored.
			if styles, err = parseDOCXStyles(x, lim); err != nil {
				return "", "", err
			}
		} else if errors.Is(err, ErrTooLarge) {
			return "", "", err
		}
	}
	md, err = docxMarkdown(bodyXML, styles, lim)
	if err != nil {
		return "", "", err
	}
	if f, ok := files["docProps/core.xml"]; ok {
		if x, err := readZipFile(f, lim); err == nil {
			title = docxTitle(x, lim)
		}
	}
	return md, title, lim.err
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

// readZipFile reads a zip entry, spending its decompressed size from lim.
func readZipFile(f *zip.File, lim *limits) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, corrupt("docx: open %s: %v", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, lim.decoded+1))
	if err != nil {
		return nil, corrupt("docx: read %s: %v", f.Name, err)
	}
	if err := lim.inflate(len(data)); err != nil {
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

// maxDOCXStyles bounds the styles read from word/styles.xml (Word's
// built-in ones number about 375).
const maxDOCXStyles = 10_000

// parseDOCXStyles reads which paragraph styles are headings (by name, or by
// outline level) and lists, from word/styles.xml. A damaged part gives the
// styles read before the damage; one defining more than maxDOCXStyles styles
// is refused.
func parseDOCXStyles(data []byte, lim *limits) (docxStyles, error) {
	styles := docxStyles{}
	d := xml.NewDecoder(bytes.NewReader(data))
	var id string
	var st docxStyle
	depth := 0
	for {
		if err := lim.tick(); err != nil {
			return nil, err
		}
		tok, err := d.Token()
		if err != nil {
			return styles, nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return styles, nil
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
				if len(styles) >= maxDOCXStyles {
					return nil, tooLarge("docx: word/styles.xml defines more than %d styles, the limit", maxDOCXStyles)
				}
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
func docxTitle(data []byte, lim *limits) string {
	d := xml.NewDecoder(bytes.NewReader(data))
	in := false
	var b strings.Builder
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil || lim.tick() != nil {
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
	text    textBuf
	heading int
	list    bool
	level   int // list nesting, from w:ilvl
}

// docxTable collects one table: rows of cells.
type docxTable struct {
	rows  [][]string
	width int      // cells in the widest row
	cell  *textBuf // the cell being read, or nil
}

// docxReader converts word/document.xml to Markdown, one XML token at a
// time. Every byte it writes is reserved from lim first; a limit crossed is
// kept there, and reading stops at the next token.
type docxReader struct {
	styles   docxStyles
	lim      *limits
	out      textBuf
	paras    []*docxPara  // open paragraphs (a text box opens one inside another)
	tables   []*docxTable // open tables
	depth    int
	skip     int // >0: inside an element whose content is ignored, at that depth
	inText   bool
	prevList bool // the last block written was a list item
	sawBody  bool
}

// docxMarkdown converts word/document.xml to Markdown.
func docxMarkdown(data []byte, styles docxStyles, lim *limits) (string, error) {
	r := &docxReader{styles: styles, lim: lim, out: textBuf{lim: lim}}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", corrupt("docx: main document part: %v", err)
		}
		if err := r.token(tok); err != nil {
			return "", fmt.Errorf("docx: %w", err)
		}
	}
	if !r.sawBody {
		return "", corrupt("docx: main document part has no body")
	}
	return r.out.String(), nil
}

// token takes one token of the main document part.
func (r *docxReader) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		if r.depth++; r.depth > maxXMLDepth {
			return corrupt("main document part nests deeper than %d elements", maxXMLDepth)
		}
		if r.skip == 0 {
			r.start(t)
		}
	case xml.EndElement:
		if r.skip == r.depth {
			r.skip = 0
		}
		r.depth--
		if r.skip == 0 {
			r.end(t.Name.Local)
		}
	case xml.CharData:
		if p := r.para(); r.inText && r.skip == 0 && p != nil {
			p.text.write(string(t))
		}
	}
	return r.lim.tick()
}

// para returns the innermost open paragraph, or nil.
func (r *docxReader) para() *docxPara {
	if len(r.paras) == 0 {
		return nil
	}
	return r.paras[len(r.paras)-1]
}

// table returns the innermost open table, or nil.
func (r *docxReader) table() *docxTable {
	if len(r.tables) == 0 {
		return nil
	}
	return r.tables[len(r.tables)-1]
}

// start opens an element.
func (r *docxReader) start(t xml.StartElement) {
	switch t.Name.Local {
	case "body":
		r.sawBody = true
	case "Fallback", "delText", "instrText", "del", "moveFrom", "footnoteReference", "commentReference":
		// Alternate renderings, deleted text, field codes: not text.
		r.skip = r.depth
	case "p":
		r.paras = append(r.paras, &docxPara{text: textBuf{lim: r.lim}})
	case "pStyle", "outlineLvl", "numPr", "ilvl", "numId":
		if p := r.para(); p != nil {
			r.paraProperty(p, t)
		}
	case "t":
		r.inText = true
	case "tab", "br", "cr", "noBreakHyphen":
		if p := r.para(); p != nil {
			paraChar(p, t)
		}
	case "tbl":
		r.tables = append(r.tables, &docxTable{})
	case "tr":
		if tb := r.table(); tb != nil {
			r.startRow(tb)
		}
	case "tc":
		if tb := r.table(); tb != nil {
			tb.cell = &textBuf{lim: r.lim}
		}
	}
}

// paraProperty applies a paragraph property: its style, outline level or
// numbering.
func (r *docxReader) paraProperty(p *docxPara, t xml.StartElement) {
	val := attr(t, "val")
	level, err := strconv.Atoi(val)
	levelOK := err == nil && level >= 0 && level < 9
	switch t.Name.Local {
	case "pStyle":
		st, ok := r.styles[val]
		if !ok {
			st.heading = headingLevelOfName(val)
		}
		if st.heading > 0 {
			p.heading = st.heading
		}
		if st.list {
			p.list = true
		}
	case "outlineLvl":
		if levelOK {
			p.heading = min(level+1, 6)
		}
	case "numPr":
		p.list = true
	case "ilvl":
		if levelOK {
			p.level = level
		}
	case "numId":
		// numId 0 removes the numbering a style gave.
		if val == "0" {
			p.list = false
		}
	}
}

// paraChar writes the character an empty run element stands for.
func paraChar(p *docxPara, t xml.StartElement) {
	switch t.Name.Local {
	case "tab":
		// w:tab inside w:tabs (paragraph properties) is a tab stop, not text.
		if !isTabStop(t) {
			p.text.writeByte('\t')
		}
	case "br", "cr":
		p.text.writeByte('\n')
	case "noBreakHyphen":
		p.text.writeByte('-')
	}
}

// end closes an element.
func (r *docxReader) end(local string) {
	switch local {
	case "t":
		r.inText = false
	case "p":
		if p := r.para(); p != nil {
			r.paras = r.paras[:len(r.paras)-1]
			r.endParagraph(p)
		}
	case "tc":
		if tb := r.table(); tb != nil {
			r.endCell(tb)
		}
	case "tbl":
		if tb := r.table(); tb != nil {
			r.tables = r.tables[:len(r.tables)-1]
			r.endTable(tb)
		}
	}
}

// endParagraph writes a finished paragraph: into the table cell being read,
// or as a heading, list item or paragraph block.
func (r *docxReader) endParagraph(p *docxPara) {
	s := strings.TrimSpace(p.text.String())
	if tb := r.table(); tb != nil && tb.cell != nil {
		if s != "" {
			if tb.cell.Len() > 0 {
				tb.cell.writeByte(' ')
			}
			tb.cell.move(s)
		}
		return
	}
	switch {
	case s == "":
	case p.heading > 0:
		r.block(strings.Repeat("#", p.heading)+" ", strings.Join(strings.Fields(s), " "), false)
	case p.list:
		indent := strings.Repeat("  ", p.level+1)
		if r.lim.produce(strings.Count(s, "\n")*len(indent)) != nil {
			return
		}
		r.block(strings.Repeat("  ", p.level)+"- ", strings.ReplaceAll(s, "\n", "\n"+indent), true)
	default:
		r.block("", s, false)
	}
}

// block writes a block of text already counted, after a line break (between
// list items) or a blank line, and a prefix (the heading's #s, the list
// item's dash) not yet counted.
func (r *docxReader) block(prefix, s string, list bool) {
	sep := ""
	if r.out.Len() > 0 {
		sep = "\n\n"
		if list && r.prevList {
			sep = "\n"
		}
	}
	if r.lim.produce(len(sep)+len(prefix)) != nil {
		return
	}
	r.out.move(sep + prefix)
	r.out.move(s)
	r.prevList = list
}

// startRow opens a row, within the table's limits.
func (r *docxReader) startRow(tb *docxTable) {
	switch {
	case len(tb.rows) >= MaxTableRows:
		r.lim.fail(tooLarge("a table has more than %d rows, the limit per table", MaxTableRows))
	case (len(tb.rows)+1)*tb.width > MaxTableCells:
		r.lim.fail(tooLarge("a table has more than %d cells (rows times its widest row), the limit per table", MaxTableCells))
	default:
		tb.rows = append(tb.rows, nil)
	}
}

// endCell adds the cell being read to the last row, within the table's
// limits.
func (r *docxReader) endCell(tb *docxTable) {
	c := tb.cell
	tb.cell = nil
	if c == nil || len(tb.rows) == 0 {
		return
	}
	row := &tb.rows[len(tb.rows)-1]
	width := max(tb.width, len(*row)+1)
	switch {
	case len(*row) >= MaxTableColumns:
		r.lim.fail(tooLarge("a table row has more than %d cells, the limit per row", MaxTableColumns))
		return
	case width*len(tb.rows) > MaxTableCells:
		r.lim.fail(tooLarge("a table has more than %d cells (rows times its widest row), the limit per table", MaxTableCells))
		return
	}
	cell := strings.Join(strings.Fields(c.String()), " ")
	if r.lim.produce(strings.Count(cell, "|")) != nil {
		return
	}
	*row = append(*row, strings.ReplaceAll(cell, "|", `\|`))
	tb.width = width
}

// endTable writes a finished table: its text joins the enclosing table's
// cell, if any, else it is a Markdown table block.
func (r *docxReader) endTable(tb *docxTable) {
	if outer := r.table(); outer != nil && outer.cell != nil {
		for _, row := range tb.rows {
			for _, cell := range row {
				outer.cell.writeByte(' ')
				outer.cell.move(cell)
			}
		}
		return
	}
	if tb.width == 0 {
		return
	}
	// The cells' text is counted; the padding and rules are not yet.
	rows := len(tb.rows)
	if r.lim.produce(rows*(1+3*tb.width)+rows-1+2+6*tb.width) != nil {
		return
	}
	r.block("", tableMarkdown(tb.rows, tb.width), false)
}

// isTabStop reports whether the w:tab element t is a tab stop definition (in
// w:tabs) rather than a tab character: a tab stop has a w:pos attribute.
func isTabStop(t xml.StartElement) bool {
	return attr(t, "pos") != ""
}

// tableMarkdown renders rows as a Markdown table of width columns, the first
// row as header, padding shorter rows with empty cells.
func tableMarkdown(rows [][]string, width int) string {
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
