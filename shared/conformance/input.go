package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// inputFixtures are the tools of the suite's multi round-trip scenarios
// (input-required-result-*, SEP-2322) and of server-stateless's diagnostic
// probes. They ask for input as any tool does, through package elicit: the
// gateway seals their request state, refuses it altered, foreign or expired,
// and answers MissingRequiredClientCapabilityError for a request the client
// cannot answer.
func inputFixtures() []toolFixture {
	pure := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	tool := func(name, title, description string, fn func(context.Context, *elicit.Round) (Result, error)) toolFixture {
		return fixture(name, title, description, nil, pure, `{}`, func(ctx context.Context, _ tenant.Caller, _ NoInput) (Result, error) {
			return fn(ctx, elicit.FromContext(ctx))
		})
	}
	return []toolFixture{
		tool("test_input_required_result_elicitation", "Asks for a name", "Asks for your name (a form), then greets you.", greet),
		tool("test_input_required_result_sampling", "Asks the client's model", "Asks the client's model for the capital of France, then repeats its answer.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				answer, ok := sampled(r, "capital_question")
				if !ok {
					return Result{}, elicit.Ask("capital_question", samplingRequest("What is the capital of France?", 100))
				}
				return text("The client's model answered: " + answer), nil
			}),
		tool("test_input_required_result_list_roots", "Asks for the client's roots", "Asks for the client's roots, then lists them.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				roots, ok := listedRoots(r, "client_roots")
				if !ok {
					//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
					return Result{}, elicit.Ask("client_roots", &mcp.ListRootsParams{})
				}
				return text("Roots: " + roots), nil
			}),
		tool("test_input_required_result_request_state", "Asks with a request state", "Asks for a confirmation with a single-use request state, and answers state-ok once the state comes back verified.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				res, ok := r.Elicited("confirm")
				if !ok || r.State == nil || string(r.State.Data) != "awaiting confirmation" {
					ask := elicit.Ask("confirm", okForm("Please confirm"))
					ask.State, ask.Once = []byte("awaiting confirmation"), true
					return Result{}, ask
				}
				return text(fmt.Sprintf("state-ok: the request state came back verified; answer %s %v", res.Action, res.Content["ok"])), nil
			}),
		tool("test_input_required_result_multiple_inputs", "Asks three things at once", "Asks for a name (form), a greeting (the client's model) and the client's roots in one round.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				name, okName := accepted(r, "user_name", "name")
				greeting, okGreeting := sampled(r, "greeting")
				roots, okRoots := listedRoots(r, "client_roots")
				if !okName || !okGreeting || !okRoots || r.State == nil {
					ask := &elicit.InputRequired{Requests: mcp.InputRequestMap{
						"user_name": nameForm(),
						"greeting":  samplingRequest("Generate a greeting", 50),
						//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
						"client_roots": &mcp.ListRootsParams{},
					}, State: []byte("all three")}
					return Result{}, ask
				}
				return text(fmt.Sprintf("name %s, greeting %q, roots %s", name, greeting, roots)), nil
			}),
		tool("test_input_required_result_multi_round", "Asks twice", "Asks for a name, then for a favourite colour, carrying the step in its request state.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				step := ""
				if r != nil && r.State != nil {
					step = string(r.State.Data)
				}
				if name, ok := accepted(r, "step1", "name"); ok && step == "step1" {
					ask := elicit.Ask("step2", elicit.Form("What is your favourite colour, "+name+"?", object(map[string]any{"color": stringProp}, "color")))
					ask.State = []byte("step2")
					return Result{}, ask
				}
				if color, ok := accepted(r, "step2", "color"); ok && step == "step2" {
					return text("Your favourite colour is " + color + "."), nil
				}
				ask := elicit.Ask("step1", nameForm())
				ask.State = []byte("step1")
				return Result{}, ask
			}),
		tool("test_input_required_result_tampered_state", "Checks its request state", "Asks for a confirmation; a request state that comes back altered is refused.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				if _, ok := r.Elicited("confirm"); !ok || r.State == nil {
					ask := elicit.Ask("confirm", okForm("Please confirm"))
					ask.State = []byte("integrity-protected")
					return Result{}, ask
				}
				return text("The request state came back unaltered."), nil
			}),
		tool("test_input_required_result_capabilities", "Asks only what the client can answer", "Asks for a name (form) and a completion (sampling), each only if the client declares it can answer.",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				ask := &elicit.InputRequired{Requests: mcp.InputRequestMap{}}
				if _, ok := accepted(r, "user_name", "name"); !ok && r.Supports(elicit.MethodElicit) {
					ask.Requests["user_name"] = nameForm()
				}
				if _, ok := sampled(r, "completion"); !ok && r.Supports(elicit.MethodSample) {
					ask.Requests["completion"] = samplingRequest("Say hello", 20)
				}
				if len(ask.Requests) > 0 {
					return Result{}, ask
				}
				return text("Nothing (more) to ask that this client can answer."), nil
			}),
		tool("test_missing_capability", "Needs sampling", "Asks the client's model for a completion; a client that does not declare sampling gets MissingRequiredClientCapabilityError (-32021).",
			func(_ context.Context, r *elicit.Round) (Result, error) {
				answer, ok := sampled(r, "completion")
				if !ok {
					return Result{}, elicit.Ask("completion", samplingRequest("Say hello", 20))
				}
				return text("The client's model answered: " + answer), nil
			}),
		tool("test_streaming_elicitation", "Asks in its result", "Asks for your name in its result (an input request), never with a request of its own on the response stream, then greets you.", greet),
		tool("test_logging_tool", "Logs", "Logs three messages (debug, info, warning) to the client, which receives those at or above the level it asked for, and none if it asked for none.",
			func(ctx context.Context, _ *elicit.Round) (Result, error) {
				for _, level := range []string{"debug", "info", "warning"} {
					lambdafn.LogToClient(ctx, level, Family, "a "+level+" message from test_logging_tool")
				}
				return text("Logged three messages."), nil
			}),
	}
}

// greet asks for a name (a form), then greets whoever answered.
func greet(_ context.Context, r *elicit.Round) (Result, error) {
	name, ok := accepted(r, "user_name", "name")
	if !ok {
		return Result{}, elicit.Ask("user_name", nameForm())
	}
	return text(fmt.Sprintf("Hello, %s!", name)), nil
}

// inputPrompt is the prompt of input-required-result-non-tool-request: it
// asks what context to use before it renders.
func inputPrompt(ctx context.Context, _ map[string]string) (*mcp.GetPromptResult, error) {
	use, ok := accepted(elicit.FromContext(ctx), "user_context", "context")
	if !ok {
		return nil, elicit.Ask("user_context", elicit.Form("What context should the prompt use?", object(map[string]any{"context": stringProp}, "context")))
	}
	return messages(userText("Answer with this context in mind: " + use)), nil
}

var stringProp = map[string]any{"type": "string"}

// object is a form's schema: properties, of which required are required.
func object(properties map[string]any, required ...string) map[string]any {
	return map[string]any{"type": "object", "properties": properties, "required": required}
}

func nameForm() *mcp.ElicitParams {
	return elicit.Form("What is your name?", object(map[string]any{"name": stringProp}, "name"))
}

func okForm(message string) *mcp.ElicitParams {
	return elicit.Form(message, object(map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok"))
}

//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
func samplingRequest(question string, maxTokens int64) *mcp.CreateMessageParams {
	//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
	return &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: question}}}}
}

// accepted returns the string field of an accepted answer to the form id.
func accepted(r *elicit.Round, id, field string) (string, bool) {
	res, ok := r.Elicited(id)
	if !ok || res.Action != "accept" {
		return "", false
	}
	s, ok := res.Content[field].(string)
	return s, ok
}

// sampled returns the text of the client model's answer to request id.
func sampled(r *elicit.Round, id string) (string, bool) {
	answer, _ := r.Response(id)
	//lint:ignore SA1019 sampling (deprecated by SEP-2577) remains an input request clients may answer during its deprecation window
	res, ok := answer.(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return "", false
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " "), true
}

// listedRoots returns the client's roots, answering request id, as text.
func listedRoots(r *elicit.Round, id string) (string, bool) {
	answer, _ := r.Response(id)
	//lint:ignore SA1019 roots (deprecated by SEP-2577) remain an input request clients may answer during their deprecation window
	res, ok := answer.(*mcp.ListRootsResult)
	if !ok {
		return "", false
	}
	var roots []string
	for _, root := range res.Roots {
		roots = append(roots, fmt.Sprintf("%s (%s)", root.URI, root.Name))
	}
	return strings.Join(roots, ", "), true
}
