package lambdafn

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
)

func TestSchemaFailuresNameTheFieldAndTheRule(t *testing.T) {
	for _, tc := range []struct {
		tool, args  string
		field, text string
	}{
		{"memory_add_message", `{"conversation_id":"a#b","role":"user","content":"x"}`, "conversation_id", "conversation_id: must match ^[A-Za-z0-9]"},
		{"memory_add_message", `{"conversation_id":"c","role":"robot","content":"x"}`, "role", "role: must be one of: user, assistant, system"},
		{"memory_add_message", `{"conversation_id":"c","role":"user","content":""}`, "content", "content: must not be empty"},
		{"memory_add_message", `{"conversation_id":"c","role":"user"}`, "content", "content: is required"},
		{"memory_get_context", `{"conversation_id":"c","max_messages":500}`, "max_messages", "max_messages: must be at most 100"},
		{"memory_get_context", `{"conversation_id":5}`, "conversation_id", "conversation_id: must be of type string"},
		{"memory_get_context", `{"conversation_id":"c","extra":1}`, "extra", "extra: is not a known argument"},
		{"memory_get_context", `[]`, "arguments", "arguments: must be of type object"},
		{"memory_get_or_create_summary", `{"conversation_id":"c","old_messages":[{"role":"bot","content":"x"}]}`, "old_messages[].role", "old_messages[].role: must be one of"},
		{"memory_get_or_create_summary", `{"conversation_id":"c","old_messages":[{"role":"user"}]}`, "old_messages[].content", "old_messages[].content: is required"},
	} {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			tool, _ := catalog.Default().Tool(tc.tool)
			schema := &jsonschema.Schema{}
			if err := json.Unmarshal(tool.InputSchema, schema); err != nil {
				t.Fatal(err)
			}
			rs, err := schema.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			json.Unmarshal([]byte(tc.args), &v)
			verr := rs.Validate(v)
			if verr == nil {
				t.Fatal("the schema accepted it")
			}
			err = schemaFault(verr, schema)
			var fe *fault.Error
			if !asFault(err, &fe) || fe.Kind != fault.KindInvalid || fe.Field != tc.field || len(err.Error()) < len(tc.text) || err.Error()[:len(tc.text)] != tc.text {
				t.Errorf("schemaFault = %q (field %q), want field %q and a message starting %q", err, fe.Field, tc.field, tc.text)
			}
		})
	}
}

func asFault(err error, target **fault.Error) bool {
	fe, ok := err.(*fault.Error)
	*target = fe
	return ok
}
