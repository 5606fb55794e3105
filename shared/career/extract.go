package career

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Formats are the resume file extensions ingest_resume accepts.
var Formats = []string{".md", ".markdown", ".txt", ".docx", ".pdf"}

// extracted is a resume turned into canonical Markdown.
type extracted struct {
	Format, Markdown, Title string
}

func checkFormat(name string) error {
	ext := strings.ToLower(path.Ext(name))
	for _, f := range Formats {
		if ext == f {
			return nil
		}
	}
	return fmt.Errorf("%q has an unsupported extension %q: use .md, .txt, .docx or .pdf", name, ext)
}

// extract turns a resume file into canonical Markdown. Interim: plain text
// and Markdown only, until shared/document (stream text) lands on main and
// replaces this with document.Extract.
func extract(name string, data []byte) (extracted, error) {
	ext := strings.ToLower(path.Ext(name))
	if ext == ".docx" || ext == ".pdf" {
		return extracted{}, errors.New("this build cannot read " + ext + " yet")
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return extracted{}, errors.New("the file is not UTF-8 text")
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var b strings.Builder
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank || b.Len() == 0 {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		b.WriteString(l + "\n")
	}
	md := strings.TrimRight(b.String(), "\n") + "\n"
	format := "markdown"
	if ext == ".txt" {
		format = "text"
	}
	title := ""
	for _, l := range strings.Split(md, "\n") {
		if t, ok := strings.CutPrefix(l, "# "); ok {
			title = strings.TrimSpace(t)
			break
		}
	}
	return extracted{Format: format, Markdown: md, Title: title}, nil
}
