package career

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/document"
)

// Formats are the resume file extensions ingest_resume accepts.
var Formats = []string{".md", ".markdown", ".txt", ".docx", ".pdf"}

// checkFormat refuses a file name whose extension no resume has, before
// anything is read.
func checkFormat(name string) error {
	ext := strings.ToLower(path.Ext(name))
	for _, f := range Formats {
		if ext == f {
			return nil
		}
	}
	return fmt.Errorf("%q has an unsupported extension %q: use .md, .txt, .docx or .pdf", name, ext)
}

// extract turns a resume file into canonical Markdown with [document.Extract].
// Text formats are decoded leniently there, so a binary file misnamed .md or
// .txt (NUL bytes without a UTF-16 byte order mark) is refused here first.
func extract(ctx context.Context, name string, data []byte) (document.Document, error) {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".txt":
		utf16 := bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff})
		if !utf16 && bytes.IndexByte(data, 0) >= 0 {
			return document.Document{}, fmt.Errorf("document %q: binary data, not text: %w", name, document.ErrCorrupt)
		}
	}
	return document.Extract(ctx, name, data)
}
