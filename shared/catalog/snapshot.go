package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
)

// SnapshotFile is the path, relative to the repository root, of the snapshot
// of the schemas of [Default]'s tools, which `go run ./scripts/generate`
// writes (package catalog/toolschema infers them from the domain types) and
// this package embeds. A test fails, naming the tool, when it is stale.
const SnapshotFile = "shared/catalog/schemas.json"

//go:embed schemas.json
var schemasJSON []byte

// withSnapshot gives each of tools the schemas snapshot holds for it.
//
// It reads the generator's layout, line by line, rather than decoding the
// JSON: decoding the whole file took about a millisecond of every cold start,
// and a tool function needs one tool's schema. The layout is a JSON object
// with one member per tool, each schema on a line of its own:
//
//	"memory_add_message": {
//	"input": {"type":"object",...},
//	"output": {"type":"object",...}
//	},
//
// The tests of package catalog/toolschema check that what this reads is what
// decoding the file gives. A tool the snapshot lacks keeps empty schemas.
func withSnapshot(tools []*Tool, snapshot []byte) {
	byName := make(map[string]*Tool, len(tools))
	for _, t := range tools {
		byName[t.Name] = t
	}
	var cur *Tool
	for len(snapshot) > 0 {
		var line []byte
		line, snapshot, _ = bytes.Cut(snapshot, []byte("\n"))
		if v, ok := bytes.CutPrefix(line, []byte(`"input": `)); ok && cur != nil {
			cur.InputSchema = json.RawMessage(bytes.TrimSuffix(v, []byte(",")))
		} else if v, ok := bytes.CutPrefix(line, []byte(`"output": `)); ok && cur != nil {
			cur.OutputSchema = json.RawMessage(v)
		} else if name, ok := bytes.CutSuffix(line, []byte(`": {`)); ok && len(name) > 1 && name[0] == '"' {
			cur = byName[string(name[1:])]
		}
	}
}
