package statemachine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/statemachine"
)

// A Task that fails is caught, and the execution falls back instead of
// failing: the pattern of the RAG pipeline's steps.
func Example() {
	def, err := statemachine.Substitute([]byte(`{
		"StartAt": "Lookup",
		"States": {
			"Lookup": {
				"Type": "Task", "Resource": "${LookupArn}",
				"Parameters": {"key.$": "$.key"},
				"ResultPath": "$.value",
				"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Fallback"}],
				"End": true
			},
			"Fallback": {"Type": "Pass", "Result": "default", "ResultPath": "$.value", "End": true}
		}
	}`), map[string]string{"LookupArn": "lookup"})
	if err != nil {
		panic(err)
	}
	m, err := statemachine.Parse(def)
	if err != nil {
		panic(err)
	}
	lookup := func(ctx context.Context, resource string, params json.RawMessage) (json.RawMessage, error) {
		if string(params) == `{"key":"known"}` {
			return json.RawMessage(`"found"`), nil
		}
		return nil, &statemachine.Error{Name: "Lookup.NotFound", Cause: "no such key"}
	}
	for _, in := range []string{`{"key":"known"}`, `{"key":"other"}`} {
		out, err := m.Run(context.Background(), json.RawMessage(in), statemachine.RunOptions{Task: lookup})
		fmt.Println(string(out), err)
	}
	// Output:
	// {"key":"known","value":"found"} <nil>
	// {"error":{"Cause":"no such key","Error":"Lookup.NotFound"},"key":"other","value":"default"} <nil>
}
