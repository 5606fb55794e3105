// Package document turns uploaded files into canonical Markdown for indexing:
// plain text, Markdown, PDF and Word (.docx), with the standard library only.
//
//	doc, err := document.Extract("paper.pdf", data)
//	switch {
//	case errors.Is(err, document.ErrUnsupported), errors.Is(err, document.ErrCorrupt):
//		return fault.Invalid("document", "%v", err)
//	case err != nil:
//		return err
//	}
//	passages, err := text.Passages(doc.Markdown, text.DefaultPassageOptions)
//
// Extraction is bounded for hostile input: at most [MaxBytes] are read, at
// most 64 MiB are decompressed from a file, nesting is limited, and nothing
// panics. PDF support covers text drawn with the standard text operators,
// uncompressed or FlateDecode content streams and object streams, fonts with
// a ToUnicode map or a single-byte encoding; it does not run OCR, decrypt, or
// reconstruct tables.
package document

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// MaxBytes is the largest file Extract reads.
const MaxBytes = 32 << 20

// maxDecoded bounds how many bytes Extract decompresses from one file (zip
// entries, PDF streams), against zip and flate bombs.
const maxDecoded = 64 << 20

// The errors Extract wraps. Callers report both as invalid input.
var (
	// ErrUnsupported: the format (the file name's extension) is not one
	// Extract reads, or the file uses a feature it does not support
	// (encryption, a compression filter other than FlateDecode), or it is
	// too large.
	ErrUnsupported = errors.New("unsupported document")
	// ErrCorrupt: the file claims a supported format but cannot be parsed.
	ErrCorrupt = errors.New("corrupt document")
)

// The formats Extract reads, as reported in [Document.Format].
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatPDF      = "pdf"
	FormatDOCX     = "docx"
)

// Document is the text of a file as canonical Markdown.
type Document struct {
	// Format is one of FormatText, FormatMarkdown, FormatPDF, FormatDOCX.
	Format string
	// Markdown is the text, normalised by [Normalize]: headings, list items,
	// paragraphs and tables kept where the format marks them.
	Markdown string
	// Title is the first heading, else the title in the file's metadata
	// (DOCX core properties, PDF document information, Markdown front
	// matter), else "".
	Title string
}

// Extract reads a file named name (only its extension matters, in any case:
// .txt, .md, .markdown, .pdf, .docx) and returns its text as canonical
// Markdown. Errors wrap [ErrUnsupported] or [ErrCorrupt].
func Extract(name string, data []byte) (Document, error) {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
	var format string
	switch ext {
	case ".txt", ".text":
		format = FormatText
	case ".md", ".markdown":
		format = FormatMarkdown
	case ".pdf":
		format = FormatPDF
	case ".docx":
		format = FormatDOCX
	case "":
		return Document{}, fmt.Errorf("document %q: no file extension (want .txt, .md, .pdf or .docx): %w", name, ErrUnsupported)
	default:
		return Document{}, fmt.Errorf("document %q: format %s (want .txt, .md, .pdf or .docx): %w", name, ext, ErrUnsupported)
	}
	if len(data) > MaxBytes {
		return Document{}, fmt.Errorf("document %q: %d bytes, more than the %d allowed: %w", name, len(data), MaxBytes, ErrUnsupported)
	}
	var (
		md, metaTitle string
		err           error
	)
	switch format {
	case FormatText, FormatMarkdown:
		md = decodeText(data)
	case FormatPDF:
		md, metaTitle, err = extractPDF(data)
	case FormatDOCX:
		md, metaTitle, err = extractDOCX(data)
	}
	if err != nil {
		return Document{}, fmt.Errorf("document %q: %w", name, err)
	}
	md = Normalize(md)
	title := firstHeading(md)
	if title == "" && format == FormatMarkdown {
		metaTitle = frontMatterTitle(md)
	}
	if title == "" {
		title = strings.Join(strings.Fields(metaTitle), " ")
	}
	return Document{Format: format, Markdown: md, Title: title}, nil
}

// corrupt returns an error wrapping ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)
}

// unsupported returns an error wrapping ErrUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
}

// budget counts decompressed bytes against maxDecoded.
type budget struct{ left int64 }

func newBudget() *budget { return &budget{left: maxDecoded} }

// take spends n bytes, or reports that the file decompresses to too much.
func (b *budget) take(n int) error {
	b.left -= int64(n)
	if b.left < 0 {
		return unsupported("decompresses to more than %d MiB", maxDecoded>>20)
	}
	return nil
}
