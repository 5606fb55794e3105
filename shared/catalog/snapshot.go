package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// SnapshotFile is the path, relative to the repository root, of the snapshot
// of the schemas of [Default]'s tools, which `go run ./scripts/generate`
// writes from [Snapshot] and the package embeds.
const SnapshotFile = "shared/catalog/schemas.json"

//go:embed schemas.json
var schemasJSON []byte

type snapshotEntry struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// snapshot is schemas.json, parsed when a schema's JSON is first asked for.
var snapshot = sync.OnceValue(func() map[string]snapshotEntry {
	var m map[string]snapshotEntry
	if err := json.Unmarshal(schemasJSON, &m); err != nil {
		panic(fmt.Sprintf("catalog: %s: %v; run go run ./scripts/generate", SnapshotFile, err))
	}
	return m
})

// InputJSON returns the JSON of t's input schema, as json.Marshal encodes
// t.Input(): what the gateway lists to hosts. For the tools of [Default] it
// is read from the snapshot [SnapshotFile] without building the schema (a
// test fails when the snapshot is stale); for any other tool, the schema is
// built and encoded. It panics if the schema cannot be encoded.
func (t *Tool) InputJSON() json.RawMessage {
	return t.schemaJSON(t.Input, func(e snapshotEntry) json.RawMessage { return e.Input })
}

// OutputJSON is [Tool.InputJSON] for the output schema.
func (t *Tool) OutputJSON() json.RawMessage {
	return t.schemaJSON(t.Output, func(e snapshotEntry) json.RawMessage { return e.Output })
}

func (t *Tool) schemaJSON(build func() *jsonschema.Schema, field func(snapshotEntry) json.RawMessage) json.RawMessage {
	if t.snapshot {
		if e, ok := snapshot()[t.Name]; ok && len(field(e)) > 0 {
			return field(e)
		}
	}
	b, err := json.Marshal(build())
	if err != nil {
		panic(fmt.Sprintf("catalog: schema of tool %s: %v", t.Name, err))
	}
	return b
}

// Snapshot returns the content of [SnapshotFile] for c: a JSON object
// mapping each tool's name to the JSON of its schemas, {"input": ...,
// "output": ...}, as json.Marshal encodes them. Each tool takes one line, so
// that a diff shows which tools changed.
func Snapshot(c *Catalog) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, t := range c.Tools() {
		name, err := json.Marshal(t.Name)
		if err != nil {
			return nil, err
		}
		e, err := json.Marshal(struct {
			Input  *jsonschema.Schema `json:"input"`
			Output *jsonschema.Schema `json:"output"`
		}{t.Input(), t.Output()})
		if err != nil {
			return nil, fmt.Errorf("catalog: schemas of tool %s: %w", t.Name, err)
		}
		sep := ",\n"
		if i == len(c.Tools())-1 {
			sep = "\n"
		}
		fmt.Fprintf(&buf, "%s: %s%s", name, e, sep)
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
