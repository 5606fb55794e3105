package elicit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// deleteReport is a tool that asks for confirmation before it deletes
// anything, when the caller can be asked.
func deleteReport(ctx context.Context, id string) (string, error) {
	round := elicit.FromContext(ctx)
	if round.Supports(elicit.MethodElicit) {
		yes, answered := round.Confirmed("confirm")
		if !answered {
			ask := elicit.Ask("confirm", elicit.Confirm("Delete report "+id+"? This cannot be undone."))
			ask.Once = true
			return "", ask
		}
		if !yes {
			return "kept " + id, nil
		}
	}
	return "deleted " + id, nil
}

// Example shows both rounds of a confirmation, with what the gateway does in
// between: seal the tool's request state, bound to the call, then open it
// when the client comes back with its answer.
func Example() {
	keys, _ := elicit.NewKeyring(map[string]string{"k1": elicit.NewSecret()})
	call := elicit.Binding{
		Caller: tenant.Caller{Tenant: "acme", Principal: "alice"},
		Method: "tools/call", Name: "report_delete", Arguments: json.RawMessage(`{"id":"r7"}`),
	}
	can := []string{elicit.MethodElicit} // from the client's capabilities

	// Round 1: the tool asks.
	_, err := deleteReport(elicit.NewContext(context.Background(), &elicit.Round{Can: can}), "r7")
	var ask *elicit.InputRequired
	if !errors.As(err, &ask) {
		panic(err)
	}
	fmt.Println(ask.Requests["confirm"].(*mcp.ElicitParams).Message)
	token, _ := keys.Seal(call, ask.StateAt(time.Now()))

	// Round 2: the client answers; the gateway opens the state it sends back.
	state, err := keys.Open(token, call, time.Now())
	if err != nil {
		panic(err)
	}
	answer := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	out, _ := deleteReport(elicit.NewContext(context.Background(), &elicit.Round{Can: can, Responses: answer, State: &state}), "r7")
	fmt.Println(out)

	// The same state for another report is refused.
	call.Arguments = json.RawMessage(`{"id":"r8"}`)
	_, err = keys.Open(token, call, time.Now())
	fmt.Println(errors.Is(err, elicit.ErrForeign))
	// Output:
	// Delete report r7? This cannot be undone.
	// deleted r7
	// true
}
