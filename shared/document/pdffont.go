package document

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// pdfFont decodes the strings a font shows into text and widths.
type pdfFont struct {
	toUnicode *pdfCMap    // nil: none
	twoByte   bool        // a composite (Type0) font without a code space: 2-byte codes
	composite bool        // Type0
	enc       [256]string // single-byte fonts: code -> text
	widths    map[int]float64
	dw        float64 // default width, thousandths of text space
	scale     float64 // glyph space to thousandths of text space (Type3 fonts)
}

// pdfGlyph is one character code shown.
type pdfGlyph struct {
	text  string
	width float64 // in thousandths of text space
	space bool    // the single-byte code 32, which word spacing applies to
}

// glyphs splits s into codes and decodes them.
func (ft *pdfFont) glyphs(s pdfString, out []pdfGlyph) []pdfGlyph {
	for i := 0; i < len(s); {
		n := 1
		switch {
		case ft.toUnicode != nil && len(ft.toUnicode.space) > 0:
			n = ft.toUnicode.codeLen(s[i:])
		case ft.twoByte:
			n = 2
		}
		n = min(n, len(s)-i)
		code := 0
		for k := range n {
			code = code<<8 | int(s[i+k])
		}
		i += n
		g := pdfGlyph{space: n == 1 && code == 32}
		if t, ok := ft.toUnicode.lookup(code, n); ok {
			g.text = t
		} else if !ft.composite && code < 256 {
			g.text = ft.enc[code]
		}
		w, ok := ft.widths[code]
		if !ok {
			w = ft.dw
		}
		g.width = w * ft.scale
		out = append(out, g)
	}
	return out
}

// font returns the font of font dictionary v, loading each dictionary once
// however many times content selects it.
func (x *pdfExtractor) font(v any) *pdfFont {
	d := x.f.dict(v)
	if d == nil {
		return defaultFont
	}
	key := reflect.ValueOf(d).Pointer() // maps do not move: the address names the dictionary
	if ft, ok := x.fonts[key]; ok {
		return ft
	}
	ft := x.loadFont(d)
	x.fonts[key] = ft
	return ft
}

func (x *pdfExtractor) loadFont(d pdfDict) *pdfFont {
	f := x.f
	ft := &pdfFont{widths: map[int]float64{}, dw: 500, scale: 1}
	subtype, _ := f.resolve(d["Subtype"]).(pdfName)
	if s, ok := f.resolve(d["ToUnicode"]).(*pdfStream); ok {
		if c, ok := x.cmaps[s]; ok {
			ft.toUnicode = c
		} else if data, err := f.decode(s); err == nil {
			c, err := parseCMap(data, x.lim)
			if err != nil {
				x.lim.fail(err)
				return defaultFont
			}
			ft.toUnicode = c
			x.cmaps[s] = c
		} else if errors.Is(err, ErrTooLarge) {
			x.lim.fail(err)
		}
	}
	if subtype == "Type0" {
		ft.composite, ft.twoByte = true, true
		// Predefined CJK encodings other than Identity-H/V mix code
		// lengths; without their tables (and a ToUnicode map), codes are
		// read as two bytes and their text is lost.
		ft.dw = 1000
		if desc := f.array(d["DescendantFonts"]); len(desc) > 0 {
			dd := f.dict(desc[0])
			if w, ok := f.number(dd["DW"]); ok {
				ft.dw = w
			}
			x.cidWidths(ft, f.array(dd["W"]))
		}
		return ft
	}
	// A simple font: one byte per code.
	base := winAnsiEncoding()
	var diffs pdfArray
	switch e := f.resolve(d["Encoding"]).(type) {
	case pdfName:
		if e == "MacRomanEncoding" || e == "StandardEncoding" {
			base = standardishEncoding()
		}
	case pdfDict:
		if be, _ := f.resolve(e["BaseEncoding"]).(pdfName); be == "MacRomanEncoding" || be == "StandardEncoding" {
			base = standardishEncoding()
		}
		diffs = f.array(e["Differences"])
	}
	ft.enc = base
	code := 0
	for _, v := range diffs {
		switch t := f.resolve(v).(type) {
		case float64:
			code = int(t)
		case pdfName:
			if code >= 0 && code < 256 {
				if s, ok := glyphText(string(t)); ok {
					if n := utf16Len(s); n > MaxGlyphText {
						x.lim.fail(glyphTooLong(n))
						return defaultFont
					}
					ft.enc[code] = s
				}
			}
			code++
		}
	}
	first, _ := f.number(d["FirstChar"])
	for i, w := range f.array(d["Widths"]) {
		if n, ok := f.number(w); ok && i < 65536 {
			ft.widths[int(first)+i] = n
		}
	}
	if fd := f.dict(d["FontDescriptor"]); fd != nil {
		if mw, ok := f.number(fd["MissingWidth"]); ok && mw > 0 {
			ft.dw = mw
		}
	}
	if subtype == "Type3" {
		if m := f.array(d["FontMatrix"]); len(m) == 6 {
			if a, ok := f.number(m[0]); ok {
				ft.scale = a * 1000
			}
		}
	}
	return ft
}

// cidWidths reads a composite font's W array: "c [w1 w2 ...]" or "c1 c2 w".
func (x *pdfExtractor) cidWidths(ft *pdfFont, w pdfArray) {
	f := x.f
	for i := 0; i < len(w) && len(ft.widths) < 1<<16; {
		c, ok := f.number(w[i])
		if !ok || i+1 >= len(w) {
			return
		}
		if list := f.array(w[i+1]); list != nil {
			for k, v := range list {
				if n, ok := f.number(v); ok {
					ft.widths[int(c)+k] = n
				}
			}
			i += 2
			continue
		}
		if i+2 >= len(w) {
			return
		}
		c2, ok1 := f.number(w[i+1])
		n, ok2 := f.number(w[i+2])
		if !ok1 || !ok2 {
			return
		}
		for k := int(c); k <= int(c2) && k-int(c) < 1<<16 && len(ft.widths) < 1<<16; k++ {
			ft.widths[k] = n
		}
		i += 3
	}
}

// winAnsiEncoding returns Windows-1252 as a code -> text table.
func winAnsiEncoding() [256]string {
	var e [256]string
	for c := 32; c < 256; c++ {
		if r := winAnsiRune(byte(c)); r != '\uFFFD' && r != 0x7f {
			e[c] = string(r)
		}
	}
	e[0xAD] = "-" // the soft hyphen shows as a hyphen
	return e
}

// standardishEncoding returns the ASCII part shared by the standard and Mac
// encodings, with the curly quotes of the standard encoding; the upper half
// is not mapped (it holds accented letters only in the Mac encoding).
func standardishEncoding() [256]string {
	var e [256]string
	for c := 32; c < 127; c++ {
		e[c] = string(rune(c))
	}
	e['`'] = "‘"
	e['\''] = "’"
	return e
}

// glyphNames maps the glyph names of the standard Latin character set that
// are not single letters or "uniXXXX" to their text (built on first use, as
// latin1Decomposition is).
var glyphNames = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"space": " ", "exclam": "!", "quotedbl": `"`, "numbersign": "#", "dollar": "$", "percent": "%",
		"ampersand": "&", "quotesingle": "'", "quoteright": "’", "quoteleft": "‘", "parenleft": "(", "parenright": ")",
		"asterisk": "*", "plus": "+", "comma": ",", "hyphen": "-", "minus": "−", "period": ".", "slash": "/",
		"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
		"eight": "8", "nine": "9", "colon": ":", "semicolon": ";", "less": "<", "equal": "=", "greater": ">",
		"question": "?", "at": "@", "bracketleft": "[", "backslash": `\`, "bracketright": "]", "asciicircum": "^",
		"underscore": "_", "grave": "`", "braceleft": "{", "bar": "|", "braceright": "}", "asciitilde": "~",
		"endash": "–", "emdash": "—", "quotedblleft": "“", "quotedblright": "”", "quotesinglbase": "‚",
		"quotedblbase": "„", "bullet": "•", "ellipsis": "…", "dagger": "†", "daggerdbl": "‡", "degree": "°",
		"fi": "fi", "fl": "fl", "ff": "ff", "ffi": "ffi", "ffl": "ffl", "copyright": "©", "registered": "®",
		"trademark": "™", "section": "§", "paragraph": "¶", "periodcentered": "·", "multiply": "×", "divide": "÷",
		"plusminus": "±", "mu": "µ", "germandbls": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "oslash": "ø",
		"Oslash": "Ø", "dotlessi": "ı", "lslash": "ł", "Lslash": "Ł", "Euro": "€", "sterling": "£", "yen": "¥",
		"cent": "¢", "guillemotleft": "«", "guillemotright": "»", "exclamdown": "¡", "questiondown": "¿",
		"nbspace": " ", "uni00A0": " ",
	}
})

// glyphText returns the text of a glyph name: "a", "eacute", "uni00E9",
// "u1F600", "period", "f_i".
func glyphText(name string) (string, bool) {
	if s, ok := glyphNames()[name]; ok {
		return s, true
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i] // "a.sc" is a small-capital a
	}
	if utf8.RuneCountInString(name) == 1 {
		return name, true
	}
	if strings.Contains(name, "_") {
		var b strings.Builder
		for part := range strings.SplitSeq(name, "_") {
			s, ok := glyphText(part)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	if hex, ok := strings.CutPrefix(name, "uni"); ok && len(hex) >= 4 && len(hex)%4 == 0 {
		var u []uint16
		for i := 0; i < len(hex); i += 4 {
			v, err := strconv.ParseUint(hex[i:i+4], 16, 16)
			if err != nil {
				return "", false
			}
			u = append(u, uint16(v))
		}
		return string(utf16.Decode(u)), true
	}
	if hex, ok := strings.CutPrefix(name, "u"); ok && len(hex) >= 4 && len(hex) <= 6 {
		if v, err := strconv.ParseUint(hex, 16, 32); err == nil && utf8.ValidRune(rune(v)) {
			return string(rune(v)), true
		}
	}
	// Accented Latin letters: "eacute", "Udieresis", "ccedilla".
	for suffix, mark := range accents {
		if base, ok := strings.CutSuffix(name, suffix); ok && len(base) == 1 {
			return composeAccent(base[0], mark), true
		}
	}
	return "", false
}

// accents maps accent glyph-name suffixes to combining marks.
var accents = map[string]rune{
	"acute": '\u0301', "grave": '\u0300', "circumflex": '\u0302', "dieresis": '\u0308', "tilde": '\u0303',
	"cedilla": '\u0327', "ring": '\u030A', "caron": '\u030C',
}

// composeAccent returns base with mark, precomposed when Latin-1 has it.
func composeAccent(base byte, mark rune) string {
	decomposed := latin1Decomposition()
	for c := rune(0xC0); c <= 0xFF; c++ {
		if d, ok := decomposed[c]; ok && d[0] == rune(base) && d[1] == mark {
			return string(c)
		}
	}
	return string(rune(base)) + string(mark)
}

// latin1Decomposition lists the accented letters of Latin-1. It is built on
// first use: the processes that link this package and read no PDF font
// should not build it at start.
var latin1Decomposition = sync.OnceValue(func() map[rune][2]rune {
	const (
		grave, acute, circ, tilde, diaer, ring, cedil = '\u0300', '\u0301', '\u0302', '\u0303', '\u0308', '\u030A', '\u0327'
	)
	// From 0xC0 (upper case) and 0xE0 (lower case); 0 marks a gap.
	bases := "AAAAAA\x00CEEEEIIII\x00NOOOOO\x00\x00UUUUY"
	marks := []rune{grave, acute, circ, tilde, diaer, ring, 0, cedil, grave, acute, circ, diaer, grave, acute, circ, diaer,
		0, tilde, grave, acute, circ, tilde, diaer, 0, 0, grave, acute, circ, diaer, acute}
	m := map[rune][2]rune{0xFF: {'y', diaer}}
	for i := range len(bases) {
		if bases[i] == 0 || marks[i] == 0 {
			continue
		}
		m[0xC0+rune(i)] = [2]rune{rune(bases[i]), marks[i]}
		m[0xE0+rune(i)] = [2]rune{rune(bases[i] + 'a' - 'A'), marks[i]}
	}
	return m
})

// pdfCMap is a ToUnicode map: code space ranges (which give code lengths)
// and code -> text mappings.
type pdfCMap struct {
	space  []cmapRange // lo/hi codes with their byte length
	single map[cmapKey]string
	ranges []cmapBFRange
}

type cmapKey struct{ code, n int }

type cmapRange struct{ lo, hi, n int }

type cmapBFRange struct {
	lo, hi, n int
	dst       []uint16 // first destination, incremented along the range
	list      []string // or one destination per code
}

// maxCMapEntries bounds a ToUnicode map.
const maxCMapEntries = 1 << 17

// codeLen returns the length of the code at the start of s: the shortest
// code space range it falls in, else the shortest length.
func (c *pdfCMap) codeLen(s pdfString) int {
	shortest := 4
	for _, r := range c.space {
		shortest = min(shortest, r.n)
		if r.n > len(s) {
			continue
		}
		code := 0
		for k := range r.n {
			code = code<<8 | int(s[k])
		}
		if code >= r.lo && code <= r.hi {
			return r.n
		}
	}
	return shortest
}

// lookup returns the text of code (n bytes long).
func (c *pdfCMap) lookup(code, n int) (string, bool) {
	if c == nil {
		return "", false
	}
	if s, ok := c.single[cmapKey{code, n}]; ok {
		return s, true
	}
	// The ranges are sorted by their first code; they rarely overlap, and
	// when they do only the last one starting at or before code is tried.
	i, _ := slices.BinarySearchFunc(c.ranges, code+1, func(r cmapBFRange, c int) int { return cmp.Compare(r.lo, c) })
	if i > 0 {
		r := c.ranges[i-1]
		if r.n != n || code > r.hi {
			return "", false
		}
		off := code - r.lo
		if r.list != nil {
			if off < len(r.list) {
				return r.list[off], true
			}
			return "", false
		}
		if len(r.dst) == 0 {
			return "", false
		}
		d := append([]uint16(nil), r.dst...)
		d[len(d)-1] += uint16(off)
		return string(utf16.Decode(d)), true
	}
	return "", false
}

// maxCodeSpaceRanges bounds the code space ranges tried for each code.
const maxCodeSpaceRanges = 16

// glyphTooLong is the error of a font that gives one character code n
// UTF-16 units of text.
func glyphTooLong(n int) error {
	return tooLarge("pdf: a font gives one character code %d UTF-16 units of text, more than %d, the limit per code", n, MaxGlyphText)
}

// utf16Len returns the length of s in UTF-16 units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cmapText returns the text of a destination string of a ToUnicode map, or
// an error when it is longer than MaxGlyphText UTF-16 units.
func cmapText(s pdfString) ([]uint16, error) {
	if n := (len(s) + 1) / 2; n > MaxGlyphText {
		return nil, glyphTooLong(n)
	}
	return utf16BE(s), nil
}

// utf16BE decodes a destination string of a ToUnicode map.
func utf16BE(s pdfString) []uint16 {
	u := make([]uint16, len(s)/2)
	for i := range u {
		u[i] = uint16(s[2*i])<<8 | uint16(s[2*i+1])
	}
	if len(s)%2 == 1 {
		u = append(u, uint16(s[len(s)-1]))
	}
	return u
}

func cmapCode(s pdfString) int {
	code := 0
	for _, c := range []byte(s[:min(len(s), 4)]) {
		code = code<<8 | int(c)
	}
	return code
}

// parseCMap reads a ToUnicode CMap: codespace ranges, bfchar and bfrange.
// A destination longer than MaxGlyphText UTF-16 units is an error wrapping
// ErrTooLarge; other damage ends the map where it starts.
func parseCMap(data []byte, lim *limits) (*pdfCMap, error) {
	c := &pdfCMap{single: map[cmapKey]string{}}
	values := maxPDFOperands
	l := &pdfLexer{data: data, values: &values, tooMany: errPDFSyntax}
	var operands []any
	entries := 0
	for entries < maxCMapEntries {
		if err := lim.tick(); err != nil {
			return nil, err
		}
		tok, err := l.next()
		if err != nil {
			break
		}
		kw, ok := tok.(pdfKeyword)
		if !ok || kw == kwArrayOpen || kw == kwDictOpen {
			v, err := l.objectFrom(tok, 0, false)
			if err != nil {
				break
			}
			operands = append(operands, v)
			continue
		}
		switch kw {
		case "endcodespacerange":
			for i := 0; i+1 < len(operands); i += 2 {
				lo, ok1 := operands[i].(pdfString)
				hi, ok2 := operands[i+1].(pdfString)
				if ok1 && ok2 && len(lo) >= 1 && len(lo) <= 4 && len(c.space) < maxCodeSpaceRanges {
					c.space = append(c.space, cmapRange{cmapCode(lo), cmapCode(hi), len(lo)})
					entries++
				}
			}
		case "endbfchar":
			for i := 0; i+1 < len(operands); i += 2 {
				src, ok1 := operands[i].(pdfString)
				dst, ok2 := operands[i+1].(pdfString)
				if ok1 && ok2 && len(src) >= 1 && len(src) <= 4 {
					u, err := cmapText(dst)
					if err != nil {
						return nil, err
					}
					c.single[cmapKey{cmapCode(src), len(src)}] = string(utf16.Decode(u))
					entries++
				}
			}
		case "endbfrange":
			for i := 0; i+2 < len(operands); i += 3 {
				lo, ok1 := operands[i].(pdfString)
				hi, ok2 := operands[i+1].(pdfString)
				if !ok1 || !ok2 || len(lo) < 1 || len(lo) > 4 {
					continue
				}
				r := cmapBFRange{lo: cmapCode(lo), hi: cmapCode(hi), n: len(lo)}
				switch d := operands[i+2].(type) {
				case pdfString:
					u, err := cmapText(d)
					if err != nil {
						return nil, err
					}
					r.dst = u
				case pdfArray:
					for _, v := range d {
						s, _ := v.(pdfString)
						u, err := cmapText(s)
						if err != nil {
							return nil, err
						}
						r.list = append(r.list, string(utf16.Decode(u)))
					}
				}
				c.ranges = append(c.ranges, r)
				entries++
			}
		}
		operands, values = operands[:0], maxPDFOperands
	}
	slices.SortStableFunc(c.ranges, func(a, b cmapBFRange) int { return cmp.Compare(a.lo, b.lo) })
	return c, nil
}
