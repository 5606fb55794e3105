package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

// The files the generator writes whole, and the markers around the parts it
// writes of hand-written files.
const (
	TemplateFile = "template.yaml"
	MakefileFile = "Makefile"
	ReadmeFile   = "README.md"
	EventsDir    = "events"

	ReadmeBegin = "<!-- tools:begin -->"
	ReadmeEnd   = "<!-- tools:end -->"
	MakeBegin   = "# generated:begin (go run ./scripts/generate writes this part from the catalog; do not edit)"
	MakeEnd     = "# generated:end"
)

// LambdaBuild is the command that builds one function for Lambda, without
// its -o and package arguments.
const LambdaBuild = "CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w'"

// Generate returns every file the generator owns under the repository root,
// keyed by slash-separated path relative to root, with the content it should
// have now. README.md and the Makefile are read from root and only their
// generated parts replaced.
func Generate(root string, cat *catalog.Catalog) (map[string][]byte, error) {
	files := map[string][]byte{}
	tmpl, err := Template(cat)
	if err != nil {
		return nil, err
	}
	files[TemplateFile] = tmpl
	if files[catalog.SnapshotFile], err = toolschema.Snapshot(cat); err != nil {
		return nil, err
	}
	for name, part := range map[string]struct {
		begin, end, body string
	}{
		ReadmeFile:   {ReadmeBegin, ReadmeEnd, ToolTable(cat)},
		MakefileFile: {MakeBegin, MakeEnd, MakeTargets(cat)},
	} {
		doc, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		out, err := Splice(doc, part.begin, part.end, part.body)
		if err != nil {
			return nil, fmt.Errorf("deploy: %s: %w", name, err)
		}
		files[name] = out
	}
	evs, err := Events(cat)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		files[e.Path] = e.Payload
	}
	env, err := SAMLocalEnv()
	if err != nil {
		return nil, err
	}
	files[SAMLocalEnvFile] = env
	return files, nil
}

// Stale returns the JSON files under root's events/ that files does not
// contain: events of functions or tools the catalog no longer has.
func Stale(root string, files map[string][]byte) ([]string, error) {
	var stale []string
	err := filepath.WalkDir(filepath.Join(root, EventsDir), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			stale = append(stale, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("deploy: listing %s: %w", EventsDir, err)
	}
	sort.Strings(stale)
	return stale, nil
}

// Splice returns doc with the lines between the marker lines begin and end
// replaced by body. Each marker must appear once, on a line of its own.
func Splice(doc []byte, begin, end, body string) ([]byte, error) {
	find := func(marker string) (int, error) {
		n := bytes.Count(doc, []byte(marker))
		if n != 1 {
			return 0, fmt.Errorf("marker %q appears %d times, want once", marker, n)
		}
		i := bytes.Index(doc, []byte(marker))
		if (i > 0 && doc[i-1] != '\n') || (i+len(marker) < len(doc) && doc[i+len(marker)] != '\n') {
			return 0, fmt.Errorf("marker %q must be on a line of its own", marker)
		}
		return i, nil
	}
	i, err := find(begin)
	if err != nil {
		return nil, err
	}
	j, err := find(end)
	if err != nil {
		return nil, err
	}
	if j < i {
		return nil, fmt.Errorf("marker %q comes before %q", end, begin)
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	var b bytes.Buffer
	b.Write(doc[:i+len(begin)])
	b.WriteString("\n")
	b.WriteString(body)
	b.Write(doc[j:])
	return b.Bytes(), nil
}

// ToolTable returns the README's markdown table of the catalog's public tools.
func ToolTable(cat *catalog.Catalog) string {
	var b strings.Builder
	b.WriteString("| Tool | Title | Family | What it does | Effect |\n|---|---|---|---|---|\n")
	for _, t := range cat.Tools() {
		if t.Visibility != catalog.Public {
			continue
		}
		effect := "read-only"
		if t.Mutates {
			effect = "mutates (audited)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", t.Name, cell(t.Title), t.Family, cell(FirstSentence(t.Description)), effect)
	}
	return b.String()
}

// FirstSentence returns s up to and including the first full stop that ends a sentence.
func FirstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// MakeTargets returns the Makefile's generated part: the list of functions
// and one build-<LogicalID> target per function, which SAM's makefile
// builder runs with ARTIFACTS_DIR set.
func MakeTargets(cat *catalog.Catalog) string {
	fns := Functions(cat)
	var b strings.Builder
	b.WriteString("FUNCTIONS =")
	paths, ids := []string{}, []string{}
	for _, f := range fns {
		paths, ids = append(paths, f.Path), append(ids, f.LogicalID)
	}
	// The key rings' custom resource function (KeyStore ssm).
	paths, ids = append(paths, KeyringPath), append(ids, invoke.LogicalID(KeyringPath))
	for _, p := range paths {
		b.WriteString(" \\\n\t" + p)
	}
	b.WriteString("\n")
	for i, p := range paths {
		fmt.Fprintf(&b, "\nbuild-%s:\n\t%s -o $(ARTIFACTS_DIR)/bootstrap ./functions/%s\n", ids[i], LambdaBuild, p)
	}
	return b.String()
}

// jsonEncoder returns an encoder that leaves <, > and & as they are, for files people read.
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// marshalIndent encodes v as indented JSON with a final newline, leaving <, > and & as they are.
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := jsonEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
