package handlers_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/deploy"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func TestEveryCatalogFunctionHasAHandlerAndAMain(t *testing.T) {
	var want []string
	for _, f := range catalog.Default().Functions() {
		want = append(want, f.Path)
	}
	var got []string
	for _, f := range handlers.All() {
		got = append(got, f.Path)
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handlers.All and the catalog's functions differ (-catalog +handlers):\n%s", diff)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	var mains []string
	filepath.WalkDir(filepath.Join(root, "functions"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "main.go" {
			rel, _ := filepath.Rel(filepath.Join(root, "functions"), filepath.Dir(path))
			mains = append(mains, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, path := range want {
		if !slices.Contains(mains, path) {
			t.Errorf("functions/%s/main.go is missing", path)
		}
	}
	for _, m := range mains {
		// The gateway and the key rings' custom resource serve no tool.
		if m != "gateway" && m != deploy.KeyringPath && !slices.Contains(want, m) {
			t.Errorf("functions/%s/main.go serves nothing in the catalog", m)
		}
	}
}

// function returns the function of handlers.All at path.
func function(t *testing.T, path string) lambdafn.Function {
	t.Helper()
	i := slices.IndexFunc(handlers.All(), func(f lambdafn.Function) bool { return f.Path == path })
	if i < 0 {
		t.Fatalf("handlers.All has no function %s", path)
	}
	return handlers.All()[i]
}
