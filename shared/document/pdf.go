package document

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
)

// PDF objects, as parsed: nil (null), bool, float64, pdfName, pdfString,
// pdfArray, pdfDict, pdfRef, *pdfStream, and pdfKeyword in content streams.
type (
	pdfName    string
	pdfString  string // the bytes of a literal or hex string
	pdfKeyword string
	pdfArray   []any
	pdfDict    map[pdfName]any
	pdfRef     struct{ num, gen int }
	pdfStream  struct {
		dict pdfDict
		raw  []byte // the encoded data
	}
)

// Limits on PDF structures, against hostile files.
const (
	maxPDFNesting   = 64      // arrays and dictionaries inside each other
	maxPDFRefChain  = 32      // references to references
	maxPDFTreeDepth = 64      // page tree levels, form XObjects inside each other
	maxPDFOperands  = 1 << 16 // values (array elements included) before an operator
	// maxPDFValues bounds the values (numbers, names, strings, array
	// elements, dictionary entries) of the objects a file defines, which
	// are kept while its pages are read: a value takes 16 to 64 bytes of
	// memory from as little as two bytes of file.
	maxPDFValues = 4 << 20
)

var errPDFSyntax = errors.New("pdf syntax")

// pdfLexer reads PDF tokens from data.
type pdfLexer struct {
	data []byte
	pos  int
	// values, if not nil, counts down the values objects may still hold;
	// below zero, parsing fails with tooMany.
	values  *int
	tooMany error
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// skipSpace skips white space and comments.
func (l *pdfLexer) skipSpace() {
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		if c == '%' {
			for l.pos < len(l.data) && l.data[l.pos] != '\n' && l.data[l.pos] != '\r' {
				l.pos++
			}
			continue
		}
		if !isPDFSpace(c) {
			return
		}
		l.pos++
	}
}

// token kinds besides objects: these delimiters come back as pdfKeyword.
const (
	kwArrayOpen  = pdfKeyword("[")
	kwArrayClose = pdfKeyword("]")
	kwDictOpen   = pdfKeyword("<<")
	kwDictClose  = pdfKeyword(">>")
)

// next returns the next token: a number, name, string, bool, nil for null,
// or a pdfKeyword (including the delimiters above). io.EOF at the end.
func (l *pdfLexer) next() (any, error) {
	l.skipSpace()
	if l.pos >= len(l.data) {
		return nil, io.EOF
	}
	c := l.data[l.pos]
	switch c {
	case '[', ']', '{', '}':
		l.pos++
		return pdfKeyword(c), nil
	case '<':
		if l.pos+1 < len(l.data) && l.data[l.pos+1] == '<' {
			l.pos += 2
			return kwDictOpen, nil
		}
		return l.hexString()
	case '>':
		if l.pos+1 < len(l.data) && l.data[l.pos+1] == '>' {
			l.pos += 2
			return kwDictClose, nil
		}
		l.pos++
		return nil, fmt.Errorf("%w: stray > at %d", errPDFSyntax, l.pos-1)
	case '(':
		return l.literalString()
	case ')':
		l.pos++
		return nil, fmt.Errorf("%w: stray ) at %d", errPDFSyntax, l.pos-1)
	case '/':
		return l.name(), nil
	}
	start := l.pos
	for l.pos < len(l.data) && !isPDFSpace(l.data[l.pos]) && !isPDFDelim(l.data[l.pos]) {
		l.pos++
	}
	word := l.data[start:l.pos]
	if n, ok := parsePDFInt(word); ok {
		return n, nil
	}
	if f, ok := parsePDFNumber(string(word)); ok {
		return f, nil
	}
	if k, ok := commonKeywords()[string(word)]; ok { // no allocation
		return k, nil
	}
	switch string(word) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	return pdfKeyword(word), nil
}

// commonKeywords are the operators content streams repeat most, returned
// without allocating; built on the first PDF, so that the processes that
// link this package and read no PDF do not build it at start.
var commonKeywords = sync.OnceValue(func() map[string]any {
	m := map[string]any{}
	for _, k := range []string{"obj", "endobj", "R", "q", "Q", "cm", "BT", "ET", "Tf", "Td", "TD", "Tm", "T*", "Tj", "TJ",
		"'", "\"", "Tc", "Tw", "Tz", "TL", "Ts", "Do", "re", "f", "m", "l", "c", "h", "S", "n", "W", "gs", "rg", "RG", "g", "G",
		"BDC", "EMC", "BMC", "w", "j", "J", "d", "cs", "CS", "sc", "scn", "SC", "SCN", "k", "K", "i", "ri", "Tr", "v", "y", "B", "b", "F",
		"begincmap", "endcmap", "beginbfchar", "endbfchar", "beginbfrange", "endbfrange", "begincodespacerange", "endcodespacerange",
		"def", "dict", "begin", "end", "findresource", "defineresource", "pop", "currentdict"} {
		m[k] = pdfKeyword(k)
	}
	return m
})

// parsePDFInt parses a plain integer ("12", "-3") without allocating.
func parsePDFInt(w []byte) (float64, bool) {
	if len(w) == 0 || len(w) > 15 {
		return 0, false
	}
	neg := false
	i := 0
	if w[0] == '-' || w[0] == '+' {
		neg, i = w[0] == '-', 1
	}
	if i == len(w) {
		return 0, false
	}
	n := 0.0
	for ; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return 0, false
		}
		n = n*10 + float64(w[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parsePDFNumber parses 4.5, .5, -.002; malformed numbers are keywords.
func parsePDFNumber(w string) (float64, bool) {
	if w == "" {
		return 0, false
	}
	c := w[0]
	if !(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' {
		return 0, false
	}
	f, err := strconv.ParseFloat(w, 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func (l *pdfLexer) name() pdfName {
	l.pos++ // '/'
	start := l.pos
	for l.pos < len(l.data) && !isPDFSpace(l.data[l.pos]) && !isPDFDelim(l.data[l.pos]) && l.data[l.pos] != '#' {
		l.pos++
	}
	if l.pos == len(l.data) || l.data[l.pos] != '#' {
		return pdfName(l.data[start:l.pos])
	}
	b := append([]byte(nil), l.data[start:l.pos]...)
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		if isPDFSpace(c) || isPDFDelim(c) {
			break
		}
		if c == '#' && l.pos+2 < len(l.data) {
			if v, err := strconv.ParseUint(string(l.data[l.pos+1:l.pos+3]), 16, 8); err == nil {
				b = append(b, byte(v))
				l.pos += 3
				continue
			}
		}
		b = append(b, c)
		l.pos++
	}
	return pdfName(b)
}

func (l *pdfLexer) hexString() (any, error) {
	l.pos++ // '<'
	var b []byte
	half, odd := byte(0), false
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		l.pos++
		var v byte
		switch {
		case c == '>':
			if odd {
				b = append(b, half<<4)
			}
			return pdfString(b), nil
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		case isPDFSpace(c):
			continue
		default:
			return nil, fmt.Errorf("%w: bad hex string byte %q at %d", errPDFSyntax, c, l.pos-1)
		}
		if odd {
			b = append(b, half<<4|v)
		} else {
			half = v
		}
		odd = !odd
	}
	return nil, fmt.Errorf("%w: unterminated hex string", errPDFSyntax)
}

func (l *pdfLexer) literalString() (any, error) {
	l.pos++ // '('
	var b []byte
	depth := 1
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		l.pos++
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return pdfString(b), nil
			}
		case '\r':
			// An end of line in a string is a line feed.
			if l.pos < len(l.data) && l.data[l.pos] == '\n' {
				l.pos++
			}
			c = '\n'
		case '\\':
			if l.pos >= len(l.data) {
				continue
			}
			e := l.data[l.pos]
			l.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				// A backslash before an end of line continues the string.
				if l.pos < len(l.data) && l.data[l.pos] == '\n' {
					l.pos++
				}
				continue
			case '\n':
				continue
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(e - '0')
				for k := 0; k < 2 && l.pos < len(l.data) && l.data[l.pos] >= '0' && l.data[l.pos] <= '7'; k++ {
					v = v*8 + int(l.data[l.pos]-'0')
					l.pos++
				}
				c = byte(v)
			default:
				c = e // \( \) \\ and unknown escapes: the character itself
			}
		}
		b = append(b, c)
	}
	return nil, fmt.Errorf("%w: unterminated string", errPDFSyntax)
}

// object parses one object (following "N G R" references when refs is true).
func (l *pdfLexer) object(depth int, refs bool) (any, error) {
	tok, err := l.next()
	if err != nil {
		return nil, err
	}
	return l.objectFrom(tok, depth, refs)
}

// objectFrom completes the object that starts with token tok.
func (l *pdfLexer) objectFrom(tok any, depth int, refs bool) (any, error) {
	if depth > maxPDFNesting {
		return nil, errPDFSyntax // nested deeper than maxPDFNesting
	}
	if err := l.count(); err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case float64:
		if !refs || t != float64(int(t)) || t < 0 {
			return t, nil
		}
		// "12 0 R"?
		save := l.pos
		gen, err1 := l.next()
		kw, err2 := l.next()
		if g, ok := gen.(float64); ok && err1 == nil && err2 == nil && kw == pdfKeyword("R") && g >= 0 && t <= 1<<30 {
			return pdfRef{num: int(t), gen: int(g)}, nil
		}
		l.pos = save
		return t, nil
	case pdfKeyword:
		switch t {
		case kwArrayOpen:
			var a pdfArray
			for {
				tok, err := l.next()
				if err != nil {
					return nil, fmt.Errorf("%w: unterminated array", errPDFSyntax)
				}
				if tok == kwArrayClose {
					return a, nil
				}
				if err := notOperator(tok); err != nil {
					return nil, err
				}
				v, err := l.objectFrom(tok, depth+1, refs)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
		case kwDictOpen:
			d := pdfDict{}
			for {
				tok, err := l.next()
				if err != nil {
					return nil, fmt.Errorf("%w: unterminated dictionary", errPDFSyntax)
				}
				if tok == kwDictClose {
					return d, nil
				}
				k, ok := tok.(pdfName)
				if !ok {
					return nil, errPDFSyntax // a key that is not a name
				}
				if err := l.count(); err != nil {
					return nil, err
				}
				tok, err = l.next()
				if err != nil {
					return nil, fmt.Errorf("%w: unterminated dictionary", errPDFSyntax)
				}
				if tok == kwDictClose {
					d[k] = nil
					return d, nil
				}
				if err := notOperator(tok); err != nil {
					return nil, err
				}
				v, err := l.objectFrom(tok, depth+1, refs)
				if err != nil {
					return nil, err
				}
				d[k] = v
			}
		}
	}
	return tok, nil
}

// count spends one value of the lexer's allowance, if it has one.
func (l *pdfLexer) count() error {
	if l.values == nil {
		return nil
	}
	if *l.values--; *l.values < 0 {
		return l.tooMany
	}
	return nil
}

// notOperator rejects a keyword inside an array or dictionary (other than
// the brackets that open one), so that a damaged container stops at the next
// "endobj" instead of swallowing the objects after it.
func notOperator(tok any) error {
	if k, ok := tok.(pdfKeyword); ok && k != kwArrayOpen && k != kwDictOpen {
		return errPDFSyntax // not formatted: damaged files raise many, and they are skipped
	}
	return nil
}

// pdfFile is a parsed PDF: every object found by scanning for "N G obj",
// and those in object streams.
type pdfFile struct {
	data    []byte
	objs    map[int]pdfEntry
	trailer pdfDict // the last trailer or cross-reference stream dictionary with a Root
	lim     *limits
	values  int // values the file's objects may still hold
}

// errPDFValues is the error of a file whose objects hold too many values.
var errPDFValues = tooLarge("pdf: the file's objects hold more than %d values, the limit per file", maxPDFValues)

// lexer returns a lexer of data from pos that counts the values it parses
// against the file's allowance.
func (f *pdfFile) lexer(data []byte, pos int) *pdfLexer {
	return &pdfLexer{data: data, pos: pos, values: &f.values, tooMany: errPDFValues}
}

// pdfEntry is an object and where it was defined: the latest definition of a
// number wins, as in an incrementally updated file.
type pdfEntry struct {
	pos int
	val any
}

// parsePDF scans data for objects. It does not read the cross-reference
// table: scanning finds objects in damaged files too.
func parsePDF(data []byte, lim *limits) (*pdfFile, error) {
	head := data[:min(len(data), 1024)]
	if !bytes.Contains(head, []byte("%PDF-")) {
		return nil, corrupt("pdf: no %%PDF- header")
	}
	f := &pdfFile{data: data, objs: map[int]pdfEntry{}, lim: lim, values: maxPDFValues}
	trailerPos := -1
	for pos := 0; pos < len(data); {
		if err := lim.tick(); err != nil {
			return nil, err
		}
		i := bytes.Index(data[pos:], []byte("obj"))
		if i < 0 {
			break
		}
		i += pos
		pos = i + 3
		num, ok := objHeader(data, i)
		if !ok || (i+3 < len(data) && !isPDFSpace(data[i+3]) && !isPDFDelim(data[i+3])) {
			continue
		}
		l := f.lexer(data, i+3)
		v, err := l.object(0, true)
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		if err != nil {
			// A damaged object: skip it and what the parser read, so that
			// scanning stays linear in the size of the file.
			pos = max(pos, l.pos)
			continue
		}
		after := l.pos
		if d, ok := v.(pdfDict); ok {
			if s, end, ok := f.streamAfter(d, after); ok {
				v, after = s, end
				if t, _ := d["Type"].(pdfName); t == "XRef" && d["Root"] != nil && i > trailerPos {
					f.trailer, trailerPos = d, i
				}
			}
		}
		f.objs[num] = pdfEntry{pos: i, val: v}
		pos = max(pos, after)
	}
	// Classic trailers.
	for pos := 0; ; {
		if err := lim.tick(); err != nil {
			return nil, err
		}
		i := bytes.Index(data[pos:], []byte("trailer"))
		if i < 0 {
			break
		}
		i += pos
		pos = i + 7
		l := f.lexer(data, i+7)
		v, err := l.object(0, true)
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		pos = max(pos, l.pos)
		if err == nil {
			if d, ok := v.(pdfDict); ok && (d["Root"] != nil || d["Encrypt"] != nil) && i > trailerPos {
				f.trailer, trailerPos = d, i
			}
		}
	}
	if f.trailer != nil && f.trailer["Encrypt"] != nil {
		return nil, unsupported("pdf: encrypted")
	}
	if err := f.loadObjectStreams(); err != nil {
		return nil, err
	}
	return f, nil
}

// objHeader reads "N G " backwards from the "obj" at data[i] and returns N.
func objHeader(data []byte, i int) (num int, ok bool) {
	j := i
	digits := func() (int, bool) {
		end := j
		for j > 0 && data[j-1] >= '0' && data[j-1] <= '9' {
			j--
		}
		if j == end || end-j > 10 {
			return 0, false
		}
		n, err := strconv.Atoi(string(data[j:end]))
		return n, err == nil
	}
	spaces := func() bool {
		end := j
		for j > 0 && isPDFSpace(data[j-1]) {
			j--
		}
		return j < end
	}
	if !spaces() {
		return 0, false
	}
	if _, ok = digits(); !ok || !spaces() {
		return 0, false
	}
	if num, ok = digits(); !ok {
		return 0, false
	}
	if j > 0 && !isPDFSpace(data[j-1]) && !isPDFDelim(data[j-1]) {
		return 0, false
	}
	return num, true
}

// streamAfter reads the stream data following dictionary d, if the keyword
// "stream" follows it at pos. It returns the stream and the offset after
// "endstream".
func (f *pdfFile) streamAfter(d pdfDict, pos int) (*pdfStream, int, bool) {
	data := f.data
	l := &pdfLexer{data: data, pos: pos}
	l.skipSpace()
	if !bytes.HasPrefix(data[l.pos:], []byte("stream")) {
		return nil, 0, false
	}
	start := l.pos + 6
	if start < len(data) && data[start] == '\r' {
		start++
	}
	if start < len(data) && data[start] == '\n' {
		start++
	}
	// Trust a direct /Length when "endstream" follows it.
	if n, ok := d["Length"].(float64); ok && n >= 0 && n <= float64(len(data)-start) {
		end := start + int(n)
		e := &pdfLexer{data: data, pos: end}
		e.skipSpace()
		if bytes.HasPrefix(data[e.pos:], []byte("endstream")) {
			return &pdfStream{dict: d, raw: data[start:end:end]}, e.pos + 9, true
		}
	}
	i := bytes.Index(data[start:], []byte("endstream"))
	if i < 0 {
		return &pdfStream{dict: d, raw: data[start:len(data):len(data)]}, len(data), true
	}
	end := start + i
	if end > start && data[end-1] == '\n' {
		end--
	}
	if end > start && data[end-1] == '\r' {
		end--
	}
	return &pdfStream{dict: d, raw: data[start:end:end]}, start + i + 9, true
}

// loadObjectStreams parses the objects inside every object stream (/Type
// /ObjStm). They count as defined where their stream is.
func (f *pdfFile) loadObjectStreams() error {
	type found struct {
		num int
		e   pdfEntry
	}
	var streams []found
	for num, e := range f.objs {
		if s, ok := e.val.(*pdfStream); ok {
			if t, _ := s.dict["Type"].(pdfName); t == "ObjStm" {
				streams = append(streams, found{num, e})
			}
		}
	}
	slices.SortFunc(streams, func(a, b found) int { return a.e.pos - b.e.pos })
	for _, st := range streams {
		if err := f.lim.tick(); err != nil {
			return err
		}
		s := st.e.val.(*pdfStream)
		data, err := f.decode(s)
		if err != nil {
			return fmt.Errorf("object stream %d: %w", st.num, err)
		}
		nf, _ := f.resolve(s.dict["N"]).(float64)
		firstf, _ := f.resolve(s.dict["First"]).(float64)
		n, ok1 := boundedInt(nf, len(data))
		first, ok2 := boundedInt(firstf, len(data))
		if !ok1 || !ok2 {
			return corrupt("pdf: object stream %d: bad /N or /First", st.num)
		}
		type member struct{ num, at int }
		var members []member
		l := &pdfLexer{data: data[:first]}
		for range n {
			if err := f.lim.tick(); err != nil {
				return err
			}
			numTok, err1 := l.next()
			offTok, err2 := l.next()
			numf, ok1 := numTok.(float64)
			offf, ok2 := offTok.(float64)
			if err1 != nil || err2 != nil || !ok1 || !ok2 {
				break
			}
			num, ok1 := boundedInt(numf, 1<<30)
			off, ok2 := boundedInt(offf, len(data)-first-1)
			if !ok1 || !ok2 {
				continue
			}
			at := first + off
			members = append(members, member{num, at})
		}
		// Each object ends where the next begins: parsing stays linear.
		slices.SortFunc(members, func(a, b member) int { return a.at - b.at })
		for k, m := range members {
			end := len(data)
			if k+1 < len(members) && members[k+1].at > m.at {
				end = members[k+1].at
			}
			if err := f.lim.tick(); err != nil {
				return err
			}
			ol := f.lexer(data[:end], m.at)
			v, err := ol.object(0, true)
			if errors.Is(err, ErrTooLarge) {
				return err
			}
			if err != nil {
				continue
			}
			if old, ok := f.objs[m.num]; ok && old.pos > st.e.pos {
				continue // a later definition in the file wins
			}
			f.objs[m.num] = pdfEntry{pos: st.e.pos, val: v}
		}
	}
	return nil
}

// boundedInt converts a PDF number to an int in [0, max].
func boundedInt(v float64, max int) (int, bool) {
	if !(v >= 0 && v <= float64(max)) { // false for NaN too
		return 0, false
	}
	return int(v), true
}

// resolve follows references.
func (f *pdfFile) resolve(v any) any {
	for range maxPDFRefChain {
		r, ok := v.(pdfRef)
		if !ok {
			return v
		}
		v = f.objs[r.num].val
	}
	return nil
}

func (f *pdfFile) dict(v any) pdfDict {
	switch d := f.resolve(v).(type) {
	case pdfDict:
		return d
	case *pdfStream:
		return d.dict
	}
	return nil
}

func (f *pdfFile) array(v any) pdfArray {
	a, _ := f.resolve(v).(pdfArray)
	return a
}

func (f *pdfFile) number(v any) (float64, bool) {
	n, ok := f.resolve(v).(float64)
	return n, ok
}

// decode returns the decoded data of stream s (see [pdfFile.decoder]).
// Every call decodes anew and counts against the file's limits: callers
// that need a stream more than once keep what it gave.
func (f *pdfFile) decode(s *pdfStream) ([]byte, error) {
	r, err := f.decoder(s)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// decoder returns a reader of the decoded data of stream s: unfiltered or
// FlateDecode (without a predictor); other filters are not supported. What
// it decompresses counts against the file's limits as it is read.
func (f *pdfFile) decoder(s *pdfStream) (io.Reader, error) {
	var filters []pdfName
	switch v := f.resolve(s.dict["Filter"]).(type) {
	case nil:
	case pdfName:
		filters = []pdfName{v}
	case pdfArray:
		for _, x := range v {
			n, ok := f.resolve(x).(pdfName)
			if !ok {
				return nil, corrupt("pdf: stream filter %v is not a name", x)
			}
			filters = append(filters, n)
		}
	default:
		return nil, corrupt("pdf: stream filter %v is not a name", v)
	}
	var r io.Reader = bytes.NewReader(s.raw)
	for i, name := range filters {
		switch name {
		case "FlateDecode", "Fl":
			if parms := f.decodeParms(s.dict, i); parms != nil {
				if p, _ := f.number(parms["Predictor"]); p > 1 {
					return nil, unsupported("pdf: FlateDecode with predictor %v", p)
				}
			}
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil, corrupt("pdf: FlateDecode stream: %v", err)
			}
			r = &inflater{zr: zr, lim: f.lim}
		default:
			return nil, unsupported("pdf: stream filter /%s (only FlateDecode is supported)", name)
		}
	}
	return r, nil
}

// decodeParms returns the DecodeParms dictionary of the i-th filter.
func (f *pdfFile) decodeParms(d pdfDict, i int) pdfDict {
	switch v := f.resolve(d["DecodeParms"]).(type) {
	case pdfDict:
		return v
	case pdfArray:
		if i < len(v) {
			return f.dict(v[i])
		}
	}
	return nil
}

// inflater reads a zlib stream within the file's limits. A stream cut short
// after some output ends there (many writers pad or truncate the checksum);
// one that gives nothing, or is damaged, is corrupt.
type inflater struct {
	zr  io.Reader
	lim *limits
	n   int64 // bytes given so far
}

func (r *inflater) Read(p []byte) (int, error) {
	n, err := r.zr.Read(p)
	r.n += int64(n)
	if lerr := r.lim.inflate(n); lerr != nil {
		return n, fmt.Errorf("pdf: %w", lerr)
	}
	switch {
	case err == nil, err == io.EOF:
		return n, err
	case errors.Is(err, io.ErrUnexpectedEOF) && r.n > 0:
		return n, io.EOF
	}
	return n, corrupt("pdf: FlateDecode stream: %v", err)
}
