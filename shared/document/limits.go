package document

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what Extract reads and produces. A real document stays far below
// each; a file built to amplify (a few kilobytes that expand to gigabytes of
// text, as table padding or font maps can) reaches one and is refused with
// an error wrapping [ErrTooLarge] that names it. What Extract produces is
// counted before it is allocated, so a refused file costs about as much
// memory as the limit, never what the file would have expanded to.
const (
	// MaxBytes is the largest file Extract reads.
	MaxBytes = 32 << 20
	// MaxTextBytes bounds the canonical Markdown of one document: 8 MiB is
	// about 4,000 pages of dense text, four times a long technical reference.
	MaxTextBytes = 8 << 20
	// MaxTableColumns bounds the cells of one table row (Word allows 63).
	MaxTableColumns = 1000
	// MaxTableRows bounds the rows of one table.
	MaxTableRows = 100_000
	// MaxTableCells bounds the cells of one table as Markdown writes it:
	// its rows times its widest row, since every row is padded to the widest.
	MaxTableCells = 1_000_000
	// MaxGlyphText bounds the text one character code of a PDF font stands
	// for (a ToUnicode destination, a glyph name), in UTF-16 units: a
	// ligature is two or three, the longest Unicode decomposition (U+FDFA)
	// eighteen.
	MaxGlyphText = 32
	// MaxTitleChars bounds [Document.Title]: a longer first heading is cut at
	// a word boundary, since the title travels with every passage indexed.
	MaxTitleChars = 256
)

// maxDecoded bounds how many bytes Extract decompresses from one file (zip
// entries, PDF streams), against zip and flate bombs.
const maxDecoded = 64 << 20

// ctxEvery is how many units of work (XML tokens, PDF operators, objects)
// pass between two checks of the context.
const ctxEvery = 4096

// limits accounts for one extraction: the bytes it may still decompress and
// produce, and the context that may stop it. The first limit crossed (or the
// context's end) is kept in err, and every later charge fails with it, so
// the loops that produce text need only check err now and then.
type limits struct {
	ctx     context.Context
	decoded int64 // bytes left to decompress
	text    int64 // bytes of text left to produce
	work    int   // units of work since the last context check
	err     error
}

func newLimits(ctx context.Context) *limits {
	return &limits{ctx: ctx, decoded: maxDecoded, text: MaxTextBytes}
}

// inflate spends n decompressed bytes, or reports that the file decompresses
// to too much.
func (l *limits) inflate(n int) error {
	l.decoded -= int64(n)
	if l.decoded < 0 {
		return tooLarge("decompresses to more than %d MiB, the limit per file", maxDecoded>>20)
	}
	return nil
}

// produce reserves n bytes of text before they are written. Past
// MaxTextBytes it fails, and keeps failing.
func (l *limits) produce(n int) error {
	if l.err != nil {
		return l.err
	}
	l.text -= int64(n)
	if l.text < 0 {
		l.err = tooLarge("the extracted text exceeds %d MiB, the limit per document", MaxTextBytes>>20)
	}
	return l.err
}

// fail records err as the extraction's outcome, unless one is recorded.
func (l *limits) fail(err error) error {
	if l.err == nil {
		l.err = err
	}
	return l.err
}

// tick counts one unit of work and, every ctxEvery units, checks the
// context. It returns the extraction's error, if any.
func (l *limits) tick() error {
	if l.err != nil {
		return l.err
	}
	if l.work++; l.work >= ctxEvery {
		l.work = 0
		if err := l.ctx.Err(); err != nil {
			l.err = fmt.Errorf("extraction stopped: %w", err)
		}
	}
	return l.err
}

// textBuf is a strings.Builder whose growth is reserved from the
// extraction's limits before it happens: a write past the limit is dropped
// and the limits keep the error.
type textBuf struct {
	b   strings.Builder
	lim *limits
}

// write writes s, if the limits allow.
func (t *textBuf) write(s string) {
	if t.lim.produce(len(s)) == nil {
		t.b.WriteString(s)
	}
}

// writeByte writes c, if the limits allow.
func (t *textBuf) writeByte(c byte) {
	if t.lim.produce(1) == nil {
		t.b.WriteByte(c)
	}
}

// writeRune writes r, if the limits allow.
func (t *textBuf) writeRune(r rune) {
	if t.lim.produce(utf8.RuneLen(r)) == nil {
		t.b.WriteRune(r)
	}
}

// move writes s, which the limits already counted (text moving from one
// buffer to another), without counting it again.
func (t *textBuf) move(s string) { t.b.WriteString(s) }

func (t *textBuf) Len() int       { return t.b.Len() }
func (t *textBuf) String() string { return t.b.String() }
func (t *textBuf) Reset()         { t.b.Reset() }
func (t *textBuf) HasSuffix(s string) bool {
	return strings.HasSuffix(t.b.String(), s)
}

// ErrTooLarge is what Extract wraps when a file is, or would produce, more
// than a limit allows (see [MaxBytes] and the limits beside it). Callers
// report it as invalid input: the content is the problem, not its format.
var ErrTooLarge = errors.New("document too large")

// tooLarge returns an error wrapping ErrTooLarge.
func tooLarge(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrTooLarge)
}

// cutTitle returns s cut to at most MaxTitleChars characters, an ellipsis
// included, at the last word boundary within them when there is one.
func cutTitle(s string) string {
	if utf8.RuneCountInString(s) <= MaxTitleChars {
		return s
	}
	end, n := 0, 0
	for i := range s {
		if n == MaxTitleChars-1 {
			end = i
			break
		}
		n++
	}
	if sp := strings.LastIndexByte(s[:end], ' '); sp > 0 {
		end = sp
	}
	return strings.TrimSpace(s[:end]) + "…"
}
