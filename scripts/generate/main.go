// Command generate writes, from the catalog, what must never drift from it:
// template.yaml, the sample events under events/, the Makefile's build
// targets, the README's tool table and the snapshot of the tools' schemas
// that the gateway lists (shared/catalog/schemas.json). Run it from the
// repository root after changing the catalog:
//
//	go run ./scripts/generate
//
// The tests of shared/deploy fail until it has been run.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/deploy"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("run it from the repository root, or pass --root: %w", err)
	}
	files, err := deploy.Generate(root, catalog.Default())
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	changed := 0
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		old, err := os.ReadFile(full)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if bytes.Equal(old, files[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", p)
		changed++
	}
	stale, err := deploy.Stale(root, files)
	if err != nil {
		return err
	}
	for _, p := range stale {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			return err
		}
		fmt.Println("removed", p)
		changed++
	}
	if changed == 0 {
		fmt.Println("up to date")
	}
	return nil
}
