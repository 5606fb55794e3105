package catalog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// The gateway lists Default's tools with the schemas of schemas.json, so that
// it never builds them; each must be what the catalog declares now.
func TestSnapshotHoldsEveryToolsSchemas(t *testing.T) {
	snap := snapshot()
	tools := Default().Tools()
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			e, ok := snap[tool.Name]
			if !ok {
				t.Fatalf("%s has no entry for the tool; run go run ./scripts/generate", SnapshotFile)
			}
			for _, s := range []struct {
				name     string
				build    func() *jsonschema.Schema
				snapshot json.RawMessage
				listed   func() json.RawMessage
			}{
				{"input", tool.Input, e.Input, tool.InputJSON},
				{"output", tool.Output, e.Output, tool.OutputJSON},
			} {
				want, err := json.Marshal(s.build())
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(want, s.snapshot) {
					t.Errorf("the %s schema in %s is stale; run go run ./scripts/generate\n(-declared +snapshot):\n%s",
						s.name, SnapshotFile, cmp.Diff(string(want), string(s.snapshot)))
				}
				if got := s.listed(); !bytes.Equal(got, s.snapshot) {
					t.Errorf("%s JSON = %s, want the snapshot's", s.name, got)
				}
			}
		})
	}
	if len(snap) != len(tools) {
		t.Errorf("%s has %d tools, the catalog %d; run go run ./scripts/generate", SnapshotFile, len(snap), len(tools))
	}
}

// A tool that is not Default's, like the conformance fixtures, has its
// schemas encoded when listed.
func TestSchemaJSONOfOtherToolsIsEncoded(t *testing.T) {
	tool := *Default().Tools()[0]
	tool.snapshot = false
	tool.Input = SchemaFor[struct {
		A string `json:"a"`
	}](nil)
	want := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
	if got := string(tool.InputJSON()); got != want {
		t.Errorf("InputJSON = %s, want %s", got, want)
	}
	out, err := json.Marshal(tool.Output())
	if err != nil {
		t.Fatal(err)
	}
	if got := tool.OutputJSON(); !bytes.Equal(got, out) {
		t.Errorf("OutputJSON = %s, want %s", got, out)
	}
}
