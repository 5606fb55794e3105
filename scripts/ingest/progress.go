package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports on w how far the ingestion is: on a terminal one line
// redrawn after each file (a bar, files, chunks, rate, time left), elsewhere
// a plain line per file.
type progress struct {
	w     io.Writer
	tty   bool
	now   func() time.Time
	start time.Time

	files, doneFiles int
	bytes, doneBytes int64
	chunks           int
}

func newProgress(w io.Writer, files []file) *progress {
	p := &progress{w: w, tty: isTerminal(w), now: time.Now, files: len(files)}
	for _, f := range files {
		p.bytes += f.size
	}
	p.start = p.now()
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K"+p.bar(""))
	}
	return p
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// step records one file's result and reports it.
func (p *progress) step(r result) {
	p.doneFiles++
	p.doneBytes += r.file.size
	if r.status == "added" || r.status == "replaced" {
		p.chunks += r.chunks
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K"+p.bar(r.file.rel))
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.doneFiles, p.files, r.file.rel, describe(r))
}

// done ends the bar's line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

// describe says what became of a file, in a few words.
func describe(r result) string {
	switch r.status {
	case "added", "replaced":
		return fmt.Sprintf("%s, %d chunks", r.status, r.chunks)
	case "empty":
		return "skipped, no text to index"
	case "refused":
		return "refused: " + r.reason
	}
	return r.status
}

// bar renders the progress line, naming the file last done.
func (p *progress) bar(last string) string {
	const width = 24
	filled := 0
	if p.bytes > 0 {
		filled = int(int64(width) * p.doneBytes / p.bytes)
	} else if p.files > 0 {
		filled = width * p.doneFiles / p.files
	}
	elapsed := p.now().Sub(p.start)
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%s%s] %d/%d files  %d chunks", strings.Repeat("#", filled), strings.Repeat("-", width-filled), p.doneFiles, p.files, p.chunks)
	if secs := elapsed.Seconds(); secs > 0 && p.doneFiles > 0 {
		fmt.Fprintf(&sb, "  %.1f files/s  %.0f chunks/s", float64(p.doneFiles)/secs, float64(p.chunks)/secs)
	}
	if p.doneBytes > 0 && p.doneBytes < p.bytes {
		left := time.Duration(float64(elapsed) * float64(p.bytes-p.doneBytes) / float64(p.doneBytes))
		fmt.Fprintf(&sb, "  %v left", left.Round(time.Second))
	}
	if last != "" {
		if len(last) > 40 {
			last = "..." + last[len(last)-37:]
		}
		sb.WriteString("  " + last)
	}
	return sb.String()
}
