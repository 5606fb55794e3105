package toolschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// The catalog gives Default's tools the schemas of schemas.json, which the
// functions validate with and the gateway lists; each must be what the
// domain types infer now.
func TestTheSnapshotHoldsEveryToolsSchemas(t *testing.T) {
	for _, tool := range catalog.Default().Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			in, out, err := Of(tool.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []struct {
				name     string
				inferred any
				snapshot json.RawMessage
			}{{"input", in, tool.InputSchema}, {"output", out, tool.OutputSchema}} {
				want, err := json.Marshal(s.inferred)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, s.snapshot) {
					t.Errorf("tool %s: the %s schema in %s is stale; run go run ./scripts/generate\n(-inferred +snapshot):\n%s",
						tool.Name, s.name, catalog.SnapshotFile, cmp.Diff(string(want), string(s.snapshot)))
				}
			}
		})
	}
}

func TestEveryToolHasSchemasAndNoOtherDoes(t *testing.T) {
	var tools []string
	for _, tool := range catalog.Default().Tools() {
		tools = append(tools, tool.Name)
	}
	slices.Sort(tools)
	names := Names()
	slices.Sort(names)
	if diff := cmp.Diff(tools, names); diff != "" {
		t.Errorf("the catalog's tools and those with schemas here differ (-catalog +toolschema):\n%s", diff)
	}
}

// The catalog reads schemas.json line by line; what it reads must be what
// decoding the file gives.
func TestTheCatalogReadsTheSnapshotAsJSONDecodes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]struct{ Input, Output json.RawMessage }
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatalf("%s is not JSON: %v", catalog.SnapshotFile, err)
	}
	tools := catalog.Default().Tools()
	if len(decoded) != len(tools) {
		t.Errorf("%s has %d tools, the catalog %d; run go run ./scripts/generate", catalog.SnapshotFile, len(decoded), len(tools))
	}
	for _, tool := range tools {
		e := decoded[tool.Name]
		if !bytes.Equal(e.Input, tool.InputSchema) || !bytes.Equal(e.Output, tool.OutputSchema) {
			t.Errorf("tool %s: the catalog read input %.60s..., output %.60s...; the file holds input %.60s..., output %.60s...",
				tool.Name, tool.InputSchema, tool.OutputSchema, e.Input, e.Output)
		}
	}
}
