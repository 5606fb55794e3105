// Package document turns uploaded files into canonical Markdown for indexing:
// plain text, Markdown, PDF and Word (.docx), with the standard library only.
//
//	doc, err := document.Extract(ctx, "paper.pdf", data)
//	switch {
//	case errors.Is(err, document.ErrUnsupported), errors.Is(err, document.ErrCorrupt),
//		errors.Is(err, document.ErrTooLarge):
//		return fault.Invalid("document", "%v", err)
//	case err != nil:
//		return err // the context ended
//	}
//	passages, err := text.Passages(doc.Markdown, text.DefaultPassageOptions)
//
// Extraction is bounded for hostile input, in what it reads and in what it
// produces: at most [MaxBytes] are read and 64 MiB decompressed from a file;
// at most [MaxTextBytes] of text come out, counted before they are
// allocated; tables ([MaxTableColumns], [MaxTableRows], [MaxTableCells]) and
// font maps ([MaxGlyphText]) are bounded where they would amplify; nesting
// is limited; the context is checked as it goes; nothing panics. A file past
// a limit is refused with an error naming it, never cut short silently.
// PDF support covers text drawn with the standard text operators,
// uncompressed or FlateDecode content streams and object streams, fonts with
// a ToUnicode map or a single-byte encoding; it does not run OCR, decrypt, or
// reconstruct tables.
package document

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// The errors Extract wraps. Callers report both as invalid input.
var (
	// ErrUnsupported: the format (the file name's extension) is not one
	// Extract reads, or the file uses a feature it does not support
	// (encryption, a compression filter other than FlateDecode).
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
// Markdown. Errors wrap [ErrUnsupported], [ErrCorrupt] or [ErrTooLarge], or
// the context's error when ctx ends first.
func Extract(ctx context.Context, name string, data []byte) (Document, error) {
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
		return Document{}, fmt.Errorf("document %q: %d bytes, more than the %d allowed: %w", name, len(data), MaxBytes, ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return Document{}, fmt.Errorf("document %q: extraction stopped: %w", name, err)
	}
	lim := newLimits(ctx)
	var (
		md, metaTitle string
		err           error
	)
	switch format {
	case FormatText, FormatMarkdown:
		md, err = decodeText(data, lim)
	case FormatPDF:
		md, metaTitle, err = extractPDF(data, lim)
	case FormatDOCX:
		md, metaTitle, err = extractDOCX(data, lim)
	}
	if err != nil {
		return Document{}, fmt.Errorf("document %q: %w", name, err)
	}
	md = Normalize(md)
	if len(md) > MaxTextBytes { // Normalize may lengthen invalid UTF-8
		return Document{}, fmt.Errorf("document %q: %w", name, tooLarge("the extracted text exceeds %d MiB, the limit per document", MaxTextBytes>>20))
	}
	title := firstHeading(md)
	if title == "" && format == FormatMarkdown {
		metaTitle = frontMatterTitle(md)
	}
	if title == "" {
		title = strings.Join(strings.Fields(metaTitle), " ")
	}
	return Document{Format: format, Markdown: md, Title: cutTitle(title)}, nil
}

// corrupt returns an error wrapping ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrCorrupt)
}

// unsupported returns an error wrapping ErrUnsupported.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrUnsupported)
}
