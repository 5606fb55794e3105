package lambdafn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// inputSchema decodes tool's input schema, failing the test if it is missing.
func inputSchema(t *testing.T, tool *catalog.Tool) *jsonschema.Schema {
	t.Helper()
	s := &jsonschema.Schema{}
	if err := json.Unmarshal(tool.InputSchema, s); err != nil {
		t.Fatalf("input schema of %s: %v; run go run ./scripts/generate", tool.Name, err)
	}
	return s
}

// TestEveryToolsInputSchemaCompilesToACheck keeps the quick check in use:
// a schema keyword it does not follow would silently turn it off.
func TestEveryToolsInputSchemaCompilesToACheck(t *testing.T) {
	for _, tool := range catalog.Default().Tools() {
		if compileCheck(tool.InputSchema) == nil {
			t.Errorf("the input schema of %s does not compile to a check", tool.Name)
		}
	}
}

// argsSamples are arguments of every kind a check meets: each tool's
// example, and variations on it.
func argsSamples(tool *catalog.Tool) []string {
	samples := []string{`{}`, `[]`, `null`, `"x"`, `{"x":1}`, ` {} `, `{"a":1,"a":2}`}
	ex := string(tool.Example)
	if ex == "" {
		return samples
	}
	samples = append(samples, ex, " "+ex+" ", ex+"x")
	var m map[string]any
	if json.Unmarshal(tool.Example, &m) != nil {
		return samples
	}
	for k, v := range m {
		for _, repl := range []any{nil, "", "x", strings.Repeat("é", 300), "a#b", "<b>&", 0, -1, 1.5, 1e300, json.Number("1e400"), 5, 101, true, []any{}, []any{"a"}, map[string]any{}, map[string]any{strings.Repeat("k", 65): "v"}, map[string]any{"k": "v"}} {
			mm := map[string]any{}
			for k2, v2 := range m {
				mm[k2] = v2
			}
			mm[k] = repl
			b, _ := json.Marshal(mm)
			samples = append(samples, string(b))
		}
		delete(m, k)
		b, _ := json.Marshal(m)
		samples = append(samples, string(b))
		m[k] = v
	}
	return samples
}

func TestAChecksCertaintyImpliesTheSchemaAccepts(t *testing.T) {
	for _, tool := range catalog.Default().Tools() {
		c := compileCheck(tool.InputSchema)
		if c == nil {
			continue
		}
		rs, err := inputSchema(t, tool).Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		certain := 0
		for _, args := range argsSamples(tool) {
			if !c.certainlyValid([]byte(args)) {
				continue
			}
			certain++
			var v any
			if err := json.Unmarshal([]byte(args), &v); err != nil {
				t.Errorf("%s: the check is certain of %s, which does not decode: %v", tool.Name, args, err)
			} else if err := rs.Validate(v); err != nil {
				t.Errorf("%s: the check is certain of %s, which the schema refuses: %v", tool.Name, args, err)
			}
		}
		if len(tool.Example) > 0 && !c.certainlyValid(tool.Example) {
			t.Errorf("%s: the check is not certain of the tool's example %s", tool.Name, tool.Example)
		}
	}
}

func FuzzArgsCheck(f *testing.F) {
	tools := catalog.Default().Tools()
	for i, tool := range tools {
		for _, args := range argsSamples(tool) {
			f.Add(i, args)
		}
	}
	f.Fuzz(func(t *testing.T, i int, args string) {
		if i < 0 {
			i = -i
		}
		tool := tools[i%len(tools)]
		c := compileCheck(tool.InputSchema)
		if c == nil || !c.certainlyValid([]byte(args)) {
			return
		}
		rs, _ := inputSchema(t, tool).Resolve(nil)
		var v any
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			t.Fatalf("%s: the check is certain of %q, which does not decode: %v", tool.Name, args, err)
		}
		if err := rs.Validate(v); err != nil {
			t.Fatalf("%s: the check is certain of %q, which the schema refuses: %v", tool.Name, args, err)
		}
	})
}

// TestAnAnswerStaysAsItWasAfterTheNextCall: results are built in reused
// buffers, so an answer must not share one.
func TestAnAnswerStaysAsItWasAfterTheNextCall(t *testing.T) {
	tool, _ := catalog.Default().Tool("memory_get_context")
	h := Tool(tool, Deps{}, func(_ context.Context, _ tenant.Caller, in memory.GetContextInput) (memory.GetContextOutput, error) {
		return memory.GetContextOutput{ConversationID: in.ConversationID, Summary: strings.Repeat(in.ConversationID, 100)}, nil
	})
	call := func(conv string) []byte {
		payload, err := invoke.Encode(&invoke.Request{Method: invoke.MethodCallTool, Tool: tool.Name,
			Arguments: json.RawMessage(`{"conversation_id":"` + conv + `"}`), Caller: tenant.Caller{Tenant: "acme", Principal: "p"}, TraceID: conv})
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Invoke(context.Background(), payload)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := call("first-and-longest")
	kept := string(first)
	for _, conv := range []string{"second", "third"} {
		call(conv)
	}
	if string(first) != kept {
		t.Errorf("the first answer changed after later calls:\n%s\nwas\n%s", first, kept)
	}
}
