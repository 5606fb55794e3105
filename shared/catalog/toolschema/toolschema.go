// Package toolschema infers the JSON Schemas of the catalog's tools from the
// domain types that serve them (jsonschema.For), tightened with what Go types
// cannot express (lengths, patterns, enums, ranges), taken from the domain
// packages' own limits. It is the generator's side of the catalog:
// go run ./scripts/generate writes its [Snapshot] to the catalog's
// schemas.json, from which the catalog gives every tool its schemas at run
// time. So no binary links the domain packages to describe a tool it does not
// serve; only the generator and tests import this package.
//
//	in, out, err := toolschema.Of("memory_add_message")
//	snap, err := toolschema.Snapshot(catalog.Default()) // shared/catalog/schemas.json
//
// A test fails, naming the tool, when the snapshot is stale.
package toolschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// pair builds a tool's input and output schemas.
type pair struct{ in, out func() *jsonschema.Schema }

// byTool holds every tool's schemas, family by family, keyed by tool name.
var byTool = sync.OnceValue(func() map[string]pair {
	m := map[string]pair{}
	for _, family := range []map[string]pair{memorySchemas(), operationsSchemas(), vectorSchemas(), ragSchemas(), careerSchemas(), connectorSchemas(), assistantSchemas(), chatSchemas()} {
		for name := range family {
			if _, dup := m[name]; dup {
				panic("toolschema: schemas of " + name + " defined twice")
			}
		}
		maps.Copy(m, family)
	}
	return m
})

// Of returns the input and output schemas of the tool named name, inferred
// now. It fails for a tool this package has no schemas for.
func Of(name string) (in, out *jsonschema.Schema, err error) {
	p, ok := byTool()[name]
	if !ok {
		return nil, nil, fmt.Errorf("toolschema: no schemas for tool %s: add them to its family's file", name)
	}
	return p.in(), p.out(), nil
}

// Names returns the names of every tool this package has schemas for.
func Names() []string {
	var names []string
	for name := range byTool() {
		names = append(names, name)
	}
	return names
}

// For infers the JSON Schema of T and lets patch tighten it. It panics if T
// has no schema: the types are fixed, and the tests infer every one.
func For[T any](patch func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: rawJSON})
	if err != nil {
		panic(fmt.Sprintf("toolschema: schema of %T: %v", *new(T), err))
	}
	singleTypes(s)
	if patch != nil {
		patch(s)
	}
	return s
}

// rawJSON describes JSON passed through as it is (json.RawMessage: a tool's
// arguments, tool calls) as any JSON value, rather than as the bytes it is in Go.
var rawJSON = map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}

// JSON is [For], encoded: a tool's schema as the catalog holds it.
func JSON[T any](patch func(*jsonschema.Schema)) json.RawMessage {
	b, err := json.Marshal(For[T](patch))
	if err != nil {
		panic(fmt.Sprintf("toolschema: encoding the schema of %T: %v", *new(T), err))
	}
	return b
}

// schemaFor returns a builder of T's schema whose patch adjusts its
// top-level properties.
func schemaFor[T any](patch func(props map[string]*jsonschema.Schema)) func() *jsonschema.Schema {
	return func() *jsonschema.Schema {
		return For[T](func(s *jsonschema.Schema) {
			if patch != nil {
				patch(s.Properties)
			}
		})
	}
}

// schemaOf returns a builder of T's schema with patch applied to the whole schema.
func schemaOf[T any](patch func(*jsonschema.Schema)) func() *jsonschema.Schema {
	return func() *jsonschema.Schema { return For[T](patch) }
}

// singleTypes replaces the ["null", X] types inferred for Go slices, maps and
// pointers with X: Switchboard omits such a field or sends it empty, never
// null, and a single type is what every MCP client handles.
func singleTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		singleTypes(p)
	}
	singleTypes(s.Items)
	singleTypes(s.AdditionalProperties)
}

func ptr[T any](v T) *T { return &v }

func enum(vals ...string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// Snapshot returns the content of [catalog.SnapshotFile] for cat's tools:
// a JSON object mapping each tool's name to its schemas, {"input": ...,
// "output": ...}, as json.Marshal encodes them. Each schema takes one line of
// its own, in the layout [catalog.Default] reads without decoding the file,
// and so that a diff shows which tools changed.
func Snapshot(cat *catalog.Catalog) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, t := range cat.Tools() {
		in, out, err := Of(t.Name)
		if err != nil {
			return nil, err
		}
		name, err := json.Marshal(t.Name)
		if err != nil {
			return nil, err
		}
		inJSON, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("toolschema: input schema of tool %s: %w", t.Name, err)
		}
		outJSON, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("toolschema: output schema of tool %s: %w", t.Name, err)
		}
		sep := ","
		if i == len(cat.Tools())-1 {
			sep = ""
		}
		fmt.Fprintf(&buf, "%s: {\n\"input\": %s,\n\"output\": %s\n}%s\n", name, inJSON, outJSON, sep)
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
