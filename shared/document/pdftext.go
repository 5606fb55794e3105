package document

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxPDFWork bounds the content bytes interpreted, counting a form XObject
// each time it is drawn, against files that draw one form many times.
const maxPDFWork = 128 << 20

// maxPDFPages bounds the pages read.
const maxPDFPages = 100_000

// extractPDF returns the Markdown of a PDF's text and the title in its
// document information dictionary.
func extractPDF(data []byte, lim *limits) (md, title string, err error) {
	f, err := parsePDF(data, lim)
	if err != nil {
		return "", "", err
	}
	pages := f.pages()
	if len(pages) == 0 {
		return "", "", corrupt("pdf: no pages found")
	}
	x := &pdfExtractor{f: f, lim: lim, fonts: map[uintptr]*pdfFont{}, cmaps: map[*pdfStream]*pdfCMap{},
		forms: map[*pdfStream][]byte{}}
	x.cur.lim = lim
	src := &contentReader{}
	for _, p := range pages {
		x.newPage = true
		r, err := f.pageContent(p)
		if err != nil {
			return "", "", err
		}
		src.reset(r)
		if err := x.run(nil, src, p.res, 0); err != nil {
			return "", "", err
		}
		x.endLine()
		if lim.err != nil {
			return "", "", lim.err
		}
	}
	if info := f.dict(f.trailer["Info"]); info != nil {
		if s, ok := f.resolve(info["Title"]).(pdfString); ok {
			title = pdfTextString(s)
		}
	}
	md = x.markdown()
	return md, title, lim.err
}

// pageContent returns a reader of the content of page p: its content
// streams, decoded as they are read, each followed by a line break.
func (f *pdfFile) pageContent(p pdfPage) (io.Reader, error) {
	var streams []any
	switch c := f.resolve(p.dict["Contents"]).(type) {
	case *pdfStream:
		streams = []any{c}
	case pdfArray:
		streams = c
	}
	var readers []io.Reader
	for _, s := range streams {
		st, ok := f.resolve(s).(*pdfStream)
		if !ok {
			continue
		}
		r, err := f.decoder(st)
		if err != nil {
			return nil, fmt.Errorf("page content: %w", err)
		}
		readers = append(readers, r, strings.NewReader("\n"))
	}
	return io.MultiReader(readers...), nil
}

// The window through which the interpreter reads a page's content: a page's
// content is never held whole, since a hostile file decompresses to 64 MiB
// of content that a limit cuts short long before its end.
const (
	contentWindow = 1 << 20  // bytes read at a time
	contentMargin = 64 << 10 // bytes left in the window when it slides on
)

// contentReader feeds content to the interpreter a window at a time. Parsed
// values never point into a window (the lexer copies what it keeps), so the
// two buffers it reads into serve every page.
type contentReader struct {
	r         io.Reader
	done      bool
	err       error // the error that ended the content early
	cur, next []byte
}

func (c *contentReader) reset(r io.Reader) {
	c.r, c.done, c.err = r, false, nil
}

// more returns keep, a part of the current window, followed by more of the
// content: a window's worth, or as much again as keep when that is more, so
// that reading a value longer than a window costs time linear in its size.
func (c *contentReader) more(keep []byte) []byte {
	need := len(keep) + max(contentWindow, len(keep))
	buf := c.next
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:need]
	copy(buf, keep)
	n, err := io.ReadFull(c.r, buf[len(keep):])
	if err != nil {
		c.done = true
		if err != io.EOF && err != io.ErrUnexpectedEOF {
			c.err = err
		}
	}
	c.cur, c.next = buf, c.cur
	return buf[:len(keep)+n]
}

// pdfPage is a page dictionary with its (possibly inherited) resources.
type pdfPage struct {
	dict, res pdfDict
}

// pages returns the pages in order, from the page tree when there is one,
// else every /Type /Page object in object-number order.
func (f *pdfFile) pages() []pdfPage {
	root := f.dict(f.trailer["Root"])
	if root == nil {
		best := -1
		for _, e := range f.objs {
			if d, ok := e.val.(pdfDict); ok && d["Type"] == pdfName("Catalog") && e.pos > best {
				root, best = d, e.pos
			}
		}
	}
	var out []pdfPage
	visited := map[int]bool{}
	var walk func(v any, res pdfDict, depth int)
	walk = func(v any, res pdfDict, depth int) {
		if depth > maxPDFTreeDepth || len(out) >= maxPDFPages {
			return
		}
		if r, ok := v.(pdfRef); ok {
			if visited[r.num] {
				return
			}
			visited[r.num] = true
		}
		d := f.dict(v)
		if d == nil {
			return
		}
		if r := f.dict(d["Resources"]); r != nil {
			res = r
		}
		kids := f.array(d["Kids"])
		if t, _ := f.resolve(d["Type"]).(pdfName); t == "Pages" || (t != "Page" && kids != nil) {
			for _, k := range kids {
				walk(k, res, depth+1)
			}
			return
		}
		out = append(out, pdfPage{dict: d, res: res})
	}
	if root != nil {
		walk(root["Pages"], nil, 0)
	}
	if len(out) > 0 {
		return out
	}
	nums := make([]int, 0, len(f.objs))
	for n, e := range f.objs {
		if d, ok := e.val.(pdfDict); ok && d["Type"] == pdfName("Page") {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums[:min(len(nums), maxPDFPages)] {
		d := f.objs[n].val.(pdfDict)
		out = append(out, pdfPage{dict: d, res: f.dict(d["Resources"])})
	}
	return out
}

// matrix is a PDF transformation matrix [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul returns m × n (apply m, then n).
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func translate(tx, ty float64) matrix { return matrix{1, 0, 0, 1, tx, ty} }

// pdfLine is one line of text as drawn.
type pdfLine struct {
	text    string
	size    float64 // the largest font size on the line, in device space
	gap     float64 // how far below the previous line its baseline is
	up      bool    // it is above the previous line (a new column or block)
	newPage bool
}

// pdfExtractor interprets content streams into lines of text.
type pdfExtractor struct {
	f     *pdfFile
	lim   *limits
	fonts map[uintptr]*pdfFont // by font dictionary
	cmaps map[*pdfStream]*pdfCMap
	forms map[*pdfStream][]byte // decoded form XObjects, drawn perhaps many times
	work  int
	ctm   matrix
	lines []pdfLine

	// The line being built.
	cur       textBuf
	curSize   float64
	curGap    float64
	curUp     bool
	curPage   bool
	has       bool // a glyph has been placed on this page
	newPage   bool
	lastEnd   [2]float64
	lastSize  float64
	glyphsBuf []pdfGlyph
}

// textState is the text state of one content stream.
type textState struct {
	tm, tlm                  matrix
	font                     *pdfFont
	fs, tc, tw, th, tl, rise float64
}

var defaultFont = &pdfFont{enc: winAnsiEncoding(), widths: map[int]float64{}, dw: 500, scale: 1}

// run interprets a content stream with resources res: content, or what
// src reads when it is not nil.
func (x *pdfExtractor) run(content []byte, src *contentReader, res pdfDict, depth int) error {
	if err := x.interpret(len(content)); err != nil {
		return err
	}
	if depth == 0 {
		x.ctm = identity
	}
	f := x.f
	ts := textState{tm: identity, tlm: identity, font: defaultFont, th: 1}
	var stack []matrix
	var ops []any
	// Operands, array elements included, are bounded between operators.
	operands := maxPDFOperands
	l := &pdfLexer{data: content, values: &operands, tooMany: errPDFSyntax}
	num := func(i int) float64 {
		if i < len(ops) {
			if v, ok := ops[i].(float64); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v
			}
		}
		return 0
	}
	// last returns the operands an operator takes, as the last n on the stack.
	last := func(n int) bool {
		if len(ops) < n {
			return false
		}
		ops = ops[len(ops)-n:]
		return true
	}
	// slide moves the window of src on to start at from, reading more
	// content; it reports false at the content's end.
	slide := func(from int) (bool, error) {
		if src == nil || src.done {
			return false, nil
		}
		kept := len(l.data) - from
		l.data, l.pos = src.more(l.data[from:]), l.pos-from
		return true, x.interpret(len(l.data) - kept)
	}
	// cut reports whether what was read from start ran into the end of the
	// window with more content to come, and if so widens the window to
	// read it again whole.
	cut := func(start int) (bool, error) {
		if l.pos < len(l.data) || src == nil || src.done {
			return false, nil
		}
		l.pos = start
		return slide(start)
	}
	for {
		if err := x.lim.tick(); err != nil {
			return err
		}
		if len(l.data)-l.pos < contentMargin {
			if _, err := slide(l.pos); err != nil {
				return err
			}
		}
		start := l.pos
		tok, err := l.next()
		if again, err := cut(start); again || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if err == io.EOF {
			if src != nil {
				return src.err
			}
			return nil
		}
		if err != nil {
			// A syntax error in content: skip it, as viewers do.
			if l.pos == start {
				l.pos++
			}
			ops, operands = ops[:0], maxPDFOperands
			continue
		}
		kw, isKw := tok.(pdfKeyword)
		if !isKw || kw == kwArrayOpen || kw == kwDictOpen {
			before := operands
			v, err := l.objectFrom(tok, 0, false)
			if again, werr := cut(start); again || werr != nil {
				if werr != nil {
					return werr
				}
				operands = before
				continue
			}
			if err != nil {
				ops, operands = ops[:0], maxPDFOperands
				continue
			}
			ops = append(ops, v)
			continue
		}
		switch kw {
		case "q":
			if len(stack) < 1024 {
				stack = append(stack, x.ctm)
			}
		case "Q":
			if len(stack) > 0 {
				x.ctm = stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		case "cm":
			if last(6) {
				x.ctm = matrix{num(0), num(1), num(2), num(3), num(4), num(5)}.mul(x.ctm)
			}
		case "BT":
			ts.tm, ts.tlm = identity, identity
		case "Tf":
			if last(2) {
				if name, ok := ops[0].(pdfName); ok {
					ts.font = x.font(f.dict(res["Font"])[name])
				}
				ts.fs = num(1)
			}
		case "Tc":
			if last(1) {
				ts.tc = num(0)
			}
		case "Tw":
			if last(1) {
				ts.tw = num(0)
			}
		case "Tz":
			if last(1) {
				ts.th = num(0) / 100
			}
		case "TL":
			if last(1) {
				ts.tl = num(0)
			}
		case "Ts":
			if last(1) {
				ts.rise = num(0)
			}
		case "Td", "TD":
			if last(2) {
				if kw == "TD" {
					ts.tl = -num(1)
				}
				ts.tlm = translate(num(0), num(1)).mul(ts.tlm)
				ts.tm = ts.tlm
			}
		case "Tm":
			if last(6) {
				ts.tlm = matrix{num(0), num(1), num(2), num(3), num(4), num(5)}
				ts.tm = ts.tlm
			}
		case "T*":
			ts.tlm = translate(0, -ts.tl).mul(ts.tlm)
			ts.tm = ts.tlm
		case "Tj":
			if last(1) {
				x.show(&ts, ops[0])
			}
		case "'":
			if last(1) {
				ts.tlm = translate(0, -ts.tl).mul(ts.tlm)
				ts.tm = ts.tlm
				x.show(&ts, ops[0])
			}
		case "\"":
			if last(3) {
				ts.tw, ts.tc = num(0), num(1)
				ts.tlm = translate(0, -ts.tl).mul(ts.tlm)
				ts.tm = ts.tlm
				x.show(&ts, ops[2])
			}
		case "TJ":
			if last(1) {
				a, _ := ops[0].(pdfArray)
				for _, e := range a {
					if n, ok := e.(float64); ok {
						if !math.IsNaN(n) && !math.IsInf(n, 0) {
							ts.tm = translate(-n/1000*ts.fs*ts.th, 0).mul(ts.tm)
						}
						continue
					}
					x.show(&ts, e)
				}
			}
		case "Do":
			if last(1) && depth < 8 {
				name, _ := ops[0].(pdfName)
				xs, ok := f.resolve(f.dict(res["XObject"])[name]).(*pdfStream)
				if !ok || xs.dict["Subtype"] != pdfName("Form") {
					break
				}
				data, err := x.form(xs)
				if err != nil {
					return fmt.Errorf("form XObject %s: %w", name, err)
				}
				xres := f.dict(xs.dict["Resources"])
				if xres == nil {
					xres = res
				}
				saved := x.ctm
				if m := f.array(xs.dict["Matrix"]); len(m) == 6 {
					var mm matrix
					for i := range mm {
						mm[i], _ = f.number(m[i])
					}
					x.ctm = mm.mul(x.ctm)
				}
				if err := x.run(data, nil, xres, depth+1); err != nil {
					return err
				}
				x.ctm = saved
			}
		case "BI":
			x.skipInlineImage(l)
			if again, err := cut(start); again || err != nil {
				if err != nil {
					return err
				}
				continue
			}
		}
		ops, operands = ops[:0], maxPDFOperands
	}
}

// interpret counts n more bytes of content interpreted against maxPDFWork.
func (x *pdfExtractor) interpret(n int) error {
	x.work += n
	if x.work > maxPDFWork {
		return x.lim.fail(tooLarge("pdf: more than %d MiB of page content to interpret (forms counted each time drawn), the limit per file", maxPDFWork>>20))
	}
	return nil
}

// form returns the decoded content of form XObject s, decoding it once
// however many times it is drawn.
func (x *pdfExtractor) form(s *pdfStream) ([]byte, error) {
	if d, ok := x.forms[s]; ok {
		return d, nil
	}
	d, err := x.f.decode(s)
	if err == nil {
		x.forms[s] = d
	}
	return d, err
}

// skipInlineImage skips from after BI past the image data and its EI.
func (x *pdfExtractor) skipInlineImage(l *pdfLexer) {
	for {
		tok, err := l.next()
		if err == io.EOF {
			return
		}
		if tok == pdfKeyword("ID") {
			break
		}
	}
	l.pos++ // the white space after ID
	for l.pos < len(l.data) {
		i := bytes.Index(l.data[l.pos:], []byte("EI"))
		if i < 0 {
			l.pos = len(l.data)
			return
		}
		at := l.pos + i
		l.pos = at + 2
		if at > 0 && isPDFSpace(l.data[at-1]) && (at+2 == len(l.data) || isPDFSpace(l.data[at+2]) || isPDFDelim(l.data[at+2])) {
			return
		}
	}
}

// show draws string v with the text state.
func (x *pdfExtractor) show(ts *textState, v any) {
	s, ok := v.(pdfString)
	if !ok {
		return
	}
	font := ts.font
	if font == nil {
		font = defaultFont
	}
	x.glyphsBuf = font.glyphs(s, x.glyphsBuf[:0])
	// Glyphs only move the text matrix along its x axis: in device space,
	// glyph i starts at the origin plus advance × the matrix's first row.
	m := ts.tm.mul(x.ctm)
	size := math.Abs(ts.fs) * math.Hypot(m[2], m[3])
	dx, dy := m[0], m[1]
	if n := math.Hypot(dx, dy); n > 0 {
		dx, dy = dx/n, dy/n
	} else {
		dx, dy = 1, 0
	}
	advance := 0.0
	for _, g := range x.glyphsBuf {
		if g.text != "" {
			x.place(g.text, m[4]+advance*m[0], m[5]+advance*m[1], dx, dy, size)
		}
		tx := (g.width/1000*ts.fs + ts.tc) * ts.th
		if g.space {
			tx += ts.tw * ts.th
		}
		advance += tx
		if g.text != "" {
			x.lastEnd = [2]float64{m[4] + advance*m[0], m[5] + advance*m[1]}
		}
	}
	ts.tm = translate(advance, 0).mul(ts.tm)
}

// place adds text drawn at (px, py) in direction (dx, dy) at a font size,
// starting a new line when the baseline moves and adding a space when
// there is a gap.
func (x *pdfExtractor) place(text string, px, py, dx, dy, size float64) {
	if !x.has || x.newPage {
		x.endLine()
		x.curPage, x.newPage, x.has = x.newPage, false, true
	} else {
		vx, vy := px-x.lastEnd[0], py-x.lastEnd[1]
		across := vx*-dy + vy*dx // along the normal, up is positive
		along := vx*dx + vy*dy
		if math.Abs(across) > 0.5*max(size, x.lastSize) {
			x.endLine()
			x.curGap, x.curUp = -across, across > 0
		} else if along > 0.15*size && x.cur.Len() > 0 {
			if !x.cur.HasSuffix(" ") && !strings.HasPrefix(text, " ") {
				x.cur.writeByte(' ')
			}
		}
	}
	x.cur.write(text)
	x.curSize = max(x.curSize, size)
	x.lastSize = size
}

// ligatures spells out the Latin ligatures fonts map glyphs to, so that
// "ﬁnd" is found by "find".
var ligatures = strings.NewReplacer("ﬀ", "ff", "ﬁ", "fi", "ﬂ", "fl", "ﬃ", "ffi", "ﬄ", "ffl", "ﬅ", "st", "ﬆ", "st")

// endLine finishes the line being built.
func (x *pdfExtractor) endLine() {
	t := strings.Join(strings.Fields(ligatures.Replace(x.cur.String())), " ")
	// Symbol and Wingdings bullets map to the Private Use Area (U+F0B7).
	if r, n := utf8.DecodeRuneInString(t); unicode.Is(unicode.Co, r) && strings.HasPrefix(t[n:], " ") {
		t = "•" + t[n:]
	}
	if t != "" && x.lim.err == nil {
		x.lines = append(x.lines, pdfLine{text: t, size: x.curSize, gap: x.curGap, up: x.curUp, newPage: x.curPage})
	}
	x.cur.Reset()
	x.curSize, x.curGap, x.curUp, x.curPage = 0, 0, false, false
}

// markdown groups the lines into headings (lines in a larger font than the
// body text), list items (lines starting with a bullet) and paragraphs
// (lines closer to each other than 1.4 times the font size).
func (x *pdfExtractor) markdown() string {
	round := func(s float64) float64 { return math.Round(s*2) / 2 }
	weight := map[float64]int{}
	for _, ln := range x.lines {
		weight[round(ln.size)] += utf8.RuneCountInString(ln.text)
	}
	body, best := 0.0, -1
	for s, w := range weight {
		if w > best || (w == best && s < body) {
			body, best = s, w
		}
	}
	isHeading := func(ln pdfLine) bool {
		return body > 0 && round(ln.size) >= body*1.15 && utf8.RuneCountInString(ln.text) <= 200 &&
			strings.IndexFunc(ln.text, unicode.IsLetter) >= 0 && !isBullet(ln.text)
	}
	rank := map[float64]int{} // heading size -> level
	var sizes []float64
	for _, ln := range x.lines {
		if s := round(ln.size); isHeading(ln) && rank[s] == 0 {
			rank[s] = -1
			sizes = append(sizes, s)
		}
	}
	slices.SortFunc(sizes, func(a, b float64) int { return cmp.Compare(b, a) })
	for i, s := range sizes {
		rank[s] = min(i+1, 6)
	}
	level := func(ln pdfLine) int {
		if !isHeading(ln) {
			return 0
		}
		return rank[round(ln.size)]
	}

	type block struct {
		text  strings.Builder
		level int
		list  bool
	}
	var blocks []*block
	var prev pdfLine
	for i, ln := range x.lines {
		lv := level(ln)
		bullet := isBullet(ln.text)
		var b *block
		if len(blocks) > 0 {
			b = blocks[len(blocks)-1]
		}
		if x.lim.tick() != nil {
			return ""
		}
		if b == nil || i == 0 || ln.newPage || ln.up || bullet || lv != b.level ||
			ln.gap > 1.4*max(ln.size, prev.size) {
			b = &block{level: lv, list: bullet}
			blocks = append(blocks, b)
			t := ln.text
			if bullet {
				_, size := utf8.DecodeRuneInString(t)
				t = strings.TrimSpace(t[size:])
			}
			b.text.WriteString(t)
		} else {
			// The lines' text is counted; the spaces joining them are not.
			if !strings.HasSuffix(b.text.String(), "-") && x.lim.produce(1) == nil {
				b.text.WriteByte(' ')
			}
			b.text.WriteString(ln.text)
		}
		prev = ln
	}
	out := textBuf{lim: x.lim}
	for i, b := range blocks {
		if i > 0 {
			if b.list && blocks[i-1].list {
				out.write("\n")
			} else {
				out.write("\n\n")
			}
		}
		switch {
		case b.level > 0:
			out.write(strings.Repeat("#", b.level) + " ")
		case b.list:
			out.write("- ")
		}
		if x.lim.err != nil {
			return ""
		}
		out.move(b.text.String())
	}
	return out.String()
}

// isBullet reports whether a line starts with a bullet character and a space.
func isBullet(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	if !strings.ContainsRune("•●◦▪▫■□‣⁃∙·–-*", r) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[n:])
	return n < len(s) && unicode.IsSpace(next)
}

// pdfDocEncoding80 maps PDFDocEncoding bytes 0x80-0xA0; the rest are Latin-1.
var pdfDocEncoding80 = [33]rune{
	'•', '†', '‡', '…', '—', '–', 'ƒ', '⁄', '‹', '›', '−', '‰', '„', '“', '”', '‘',
	'’', '‚', '™', 'ﬁ', 'ﬂ', 'Ł', 'Œ', 'Š', 'Ÿ', 'Ž', 'ı', 'ł', 'œ', 'š', 'ž', '\uFFFD', '€',
}

// pdfTextString decodes a PDF text string (document metadata): UTF-16BE or
// UTF-8 with a byte order mark, else PDFDocEncoding.
func pdfTextString(s pdfString) string {
	switch {
	case strings.HasPrefix(string(s), "\xFE\xFF"):
		return string(utf16.Decode(utf16BE(s[2:])))
	case strings.HasPrefix(string(s), "\xEF\xBB\xBF"):
		return strings.ToValidUTF8(string(s[3:]), "\uFFFD")
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 0x80 && c <= 0xA0 {
			b.WriteRune(pdfDocEncoding80[c-0x80])
		} else {
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}
