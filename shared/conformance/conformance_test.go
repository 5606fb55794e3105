package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/conformance"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/launch"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// TestExtrasJoinTheDefaultCatalog checks the fixtures the way the conformance
// build of the gateway uses them: added to the default catalog, with a
// function for every entry.
func TestExtrasJoinTheDefaultCatalog(t *testing.T) {
	x := conformance.Extras()
	def := catalog.Default()
	cat, err := catalog.New(slices.Concat(def.Tools(), x.Tools), slices.Concat(def.Resources(), x.Resources), slices.Concat(def.Prompts(), x.Prompts))
	if err != nil {
		t.Fatalf("catalog.New with the conformance fixtures: %v", err)
	}
	for _, f := range cat.Functions() {
		if f.Family != conformance.Family {
			continue
		}
		if !slices.ContainsFunc(x.Functions, func(fn lambdafn.Function) bool { return fn.Path == f.Path }) {
			t.Errorf("function %s (serving %v %v) has no constructor", f.Path, f.Tools, f.Resources)
		}
	}
	for _, tool := range x.Tools {
		var s jsonschema.Schema
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Errorf("%s: input schema does not decode: %v", tool.Name, err)
		} else if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: input schema does not resolve: %v", tool.Name, err)
		}
	}
	for _, p := range x.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "v"
		}
		var ask *elicit.InputRequired
		if _, err := p.Render(context.Background(), args); err != nil && !errors.As(err, &ask) {
			t.Errorf("prompt %s: %v", p.Name, err)
		}
	}
}

// TestToolsThroughTheInvoker calls each fixture tool with its example
// arguments through the in-process invoker, as the gateway does, and checks
// the kinds of content it answers.
func TestToolsThroughTheInvoker(t *testing.T) {
	x := conformance.Extras()
	inv := stack(t, x)
	// Called without a round, as on a protocol before 2026-07-28, the tools
	// that ask for input answer a tool error saying so, and the question for
	// the gateway beside it.
	tests := []struct {
		tool          string
		wantTypes     []string
		wantError     bool
		wantAsk       bool
		wantNotes     int
		wantFirstText string
	}{
		{tool: "test_simple_text", wantTypes: []string{"text"}, wantFirstText: "This is a simple text response for testing."},
		{tool: "test_image_content", wantTypes: []string{"image"}},
		{tool: "test_audio_content", wantTypes: []string{"audio"}},
		{tool: "test_embedded_resource", wantTypes: []string{"resource"}},
		{tool: "test_multiple_content_types", wantTypes: []string{"text", "image", "resource"}},
		{tool: "test_tool_with_logging", wantTypes: []string{"text"}, wantNotes: 3},
		{tool: "test_tool_with_progress", wantTypes: []string{"text"}, wantNotes: 3},
		{tool: "test_error_handling", wantTypes: []string{"text"}, wantError: true, wantFirstText: "This tool intentionally returns an error for testing"},
		{tool: "test_sampling", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_elicitation", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_elicitation_sep1034_defaults", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_elicitation_sep1330_enums", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "json_schema_2020_12_tool", wantTypes: []string{"text"}, wantFirstText: `name="Ada" street="1 Main St" city="Springfield"`},
		{tool: "test_input_required_result_elicitation", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_sampling", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_list_roots", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_request_state", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_multiple_inputs", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_multi_round", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_tampered_state", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_input_required_result_capabilities", wantTypes: []string{"text"}, wantFirstText: "Nothing (more) to ask that this client can answer."},
		{tool: "test_missing_capability", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_streaming_elicitation", wantTypes: []string{"text"}, wantError: true, wantAsk: true},
		{tool: "test_logging_tool", wantTypes: []string{"text"}, wantNotes: 3},
	}
	var tested []string
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			i := slices.IndexFunc(x.Tools, func(c *catalog.Tool) bool { return c.Name == tc.tool })
			if i < 0 {
				t.Fatalf("no fixture tool %s", tc.tool)
			}
			tool := x.Tools[i]
			resp, err := inv.Invoke(context.Background(), tool.Function, &invoke.Request{
				Method: invoke.MethodCallTool, Tool: tool.Name, Arguments: tool.Example,
				Caller: tenant.Caller{Tenant: tenant.Local, Principal: "test"}, RequestID: "r1", TraceID: "t1",
			})
			if err != nil {
				t.Fatal(err)
			}
			var res mcp.CallToolResult
			if err := json.Unmarshal(resp.Result, &res); err != nil {
				t.Fatalf("result %s: %v", resp.Result, err)
			}
			var types []string
			for _, c := range res.Content {
				b, _ := json.Marshal(c)
				var typed struct{ Type string }
				json.Unmarshal(b, &typed)
				types = append(types, typed.Type)
			}
			if diff := cmp.Diff(tc.wantTypes, types); diff != "" {
				t.Errorf("content types mismatch (-want +got):\n%s", diff)
			}
			if res.IsError != tc.wantError {
				t.Errorf("isError = %v, want %v: %s", res.IsError, tc.wantError, resp.Result)
			}
			if (resp.InputRequired != nil) != tc.wantAsk {
				t.Errorf("asks for input: %v, want %v", resp.InputRequired != nil, tc.wantAsk)
			}
			if len(resp.Notifications) != tc.wantNotes {
				t.Errorf("%d notifications, want %d", len(resp.Notifications), tc.wantNotes)
			}
			if tc.wantFirstText != "" {
				if tc0, ok := res.Content[0].(*mcp.TextContent); !ok || tc0.Text != tc.wantFirstText {
					t.Errorf("first content = %s, want text %q", resp.Result, tc.wantFirstText)
				}
			}
		})
		tested = append(tested, tc.tool)
	}
	for _, tool := range x.Tools {
		if !slices.Contains(tested, tool.Name) {
			t.Errorf("fixture tool %s is not tested here", tool.Name)
		}
	}
}

func TestResources(t *testing.T) {
	x := conformance.Extras()
	inv := stack(t, x)
	for _, r := range x.Resources {
		t.Run(r.Example, func(t *testing.T) {
			resp, err := inv.Invoke(context.Background(), r.Function, &invoke.Request{
				Method: invoke.MethodReadResource, URI: r.Example,
				Caller: tenant.Caller{Tenant: tenant.Local, Principal: "test"}, RequestID: "r1", TraceID: "t1",
			})
			if err != nil {
				t.Fatal(err)
			}
			var res mcp.ReadResourceResult
			if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.Contents) != 1 {
				t.Fatalf("result %s: %v", resp.Result, err)
			}
			if c := res.Contents[0]; c.URI != r.Example || c.MIMEType != r.MIMEType || (c.Text == "") == (len(c.Blob) == 0) {
				t.Errorf("contents = %+v, want the URI read, MIME type %s and either text or a blob", c, r.MIMEType)
			}
		})
	}
}

// stack runs the fixtures' functions in process, as the local server does.
func stack(t *testing.T, x launch.Extras) *local.Stack {
	t.Helper()
	s, err := local.New(local.Options{Functions: x.Functions})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
