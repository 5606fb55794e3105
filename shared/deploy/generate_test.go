package deploy

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
)

func TestGeneratedFilesMatchTheCatalog(t *testing.T) {
	files, err := Generate(root, catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				t.Fatalf("%v: run go run ./scripts/generate", err)
			}
			if !bytes.Equal(got, files[p]) {
				t.Errorf("%s differs from what the catalog generates; run go run ./scripts/generate\n(-generated +on disk):\n%s",
					p, cmp.Diff(string(files[p]), string(got)))
			}
		})
	}
	stale, err := Stale(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("events the catalog no longer has: %v; run go run ./scripts/generate", stale)
	}
}

func TestSpliceReplacesOnlyTheMarkedLines(t *testing.T) {
	tests := []struct {
		name, doc, body, want, wantErr string
	}{
		{"EmptySection", "a\n<b>\n<e>\nz\n", "x\n", "a\n<b>\nx\n<e>\nz\n", ""},
		{"OldSectionReplaced", "a\n<b>\nold\nolder\n<e>\nz\n", "new", "a\n<b>\nnew\n<e>\nz\n", ""},
		{"EmptyBody", "<b>\nold\n<e>\n", "", "<b>\n<e>\n", ""},
		{"MissingEnd", "<b>\nold\n", "x", "", `marker "<e>" appears 0 times`},
		{"TwoBegins", "<b>\n<b>\n<e>\n", "x", "", `marker "<b>" appears 2 times`},
		{"EndFirst", "<e>\n<b>\n", "x", "", "comes before"},
		{"MarkerInsideALine", "see <b>\n<e>\n", "x", "", "line of its own"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Splice([]byte(tc.doc), "<b>", "<e>", tc.body)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstSentenceEndsAtTheFirstFullStop(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Appends a message. Messages are numbered.", "Appends a message."},
		{"Returns the summary, empty if there is none yet.", "Returns the summary, empty if there is none yet."},
		{"Reads memory://conversation/chat.1 whole", "Reads memory://conversation/chat.1 whole"},
	}
	for _, tc := range tests {
		if got := FirstSentence(tc.in); got != tc.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// makeRules returns the Makefile's rules: target -> recipe lines.
func makeRules(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, MakefileFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := map[string][]string{}
	var target string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t") && target != "":
			rules[target] = append(rules[target], strings.TrimSpace(line))
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.Contains(line, ":") && !strings.Contains(line, "=") && !strings.HasPrefix(line, "."):
			target = strings.TrimSpace(line[:strings.Index(line, ":")])
			rules[target] = rules[target][:0:0]
		default:
			target = ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestTheMakefileBuildsEveryFunctionOfTheTemplate(t *testing.T) {
	rules := makeRules(t)
	p := readTemplate(t)
	paths := map[string]string{}
	for _, f := range Functions(catalog.Default()) {
		paths[f.LogicalID] = f.Path
	}
	paths[invoke.LogicalID(KeyringPath)] = KeyringPath
	for _, id := range p.serverlessFunctions() {
		t.Run(id, func(t *testing.T) {
			recipe, ok := rules["build-"+id]
			if !ok {
				t.Fatalf("the Makefile has no target build-%s for sam build", id)
			}
			want := []string{LambdaBuild + " -o $(ARTIFACTS_DIR)/bootstrap ./functions/" + paths[id]}
			if diff := cmp.Diff(want, recipe); diff != "" {
				t.Errorf("recipe mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, target := range []string{"run", "test", "generate", "build", "deploy"} {
		if _, ok := rules[target]; !ok {
			t.Errorf("the Makefile has no %s target", target)
		}
	}
	if got := rules["deploy"]; !cmp.Equal(got, []string{"sam build && sam deploy --guided"}) {
		t.Errorf("deploy runs %q, want sam build && sam deploy --guided", got)
	}
}
