package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/catalog/toolschema"
	"github.com/switchboard-dev/switchboard/shared/elicit"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// NoInput is the input of the fixture tools that take no arguments.
type NoInput struct{}

// SamplingInput is the input of test_sampling.
type SamplingInput struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

// ElicitationInput is the input of test_elicitation.
type ElicitationInput struct {
	Message string `json:"message" jsonschema:"the message to show the user"`
}

// Address is the $defs entry of json_schema_2020_12_tool's input schema.
type Address struct {
	Street string `json:"street,omitempty"`
	City   string `json:"city,omitempty"`
}

// SchemaInput is the input of json_schema_2020_12_tool.
type SchemaInput struct {
	Name    string   `json:"name,omitempty"`
	Address *Address `json:"address,omitempty"`
}

// Content is one item of a tool result's content, in MCP's wire shape.
type Content struct {
	Type     string            `json:"type" jsonschema:"text, image, audio or resource"`
	Text     string            `json:"text,omitempty" jsonschema:"the text, for type text"`
	Data     string            `json:"data,omitempty" jsonschema:"base64-encoded bytes, for types image and audio"`
	MIMEType string            `json:"mimeType,omitempty" jsonschema:"the media type of data"`
	Resource *ResourceContents `json:"resource,omitempty" jsonschema:"the embedded resource, for type resource"`
}

// ResourceContents is a resource embedded in a tool result.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty" jsonschema:"base64-encoded bytes"`
}

// Result is what every fixture tool returns: the content its scenario
// expects. It is shown as the call's MCP content ([Result.MCPContent]) and
// kept as the structured content too.
type Result struct {
	Content []Content `json:"content"`
}

// MCPContent implements [lambdafn.Contenter].
func (r Result) MCPContent() []mcp.Content {
	out := make([]mcp.Content, 0, len(r.Content))
	for _, c := range r.Content {
		data, _ := base64.StdEncoding.DecodeString(c.Data)
		switch c.Type {
		case "image":
			out = append(out, &mcp.ImageContent{Data: data, MIMEType: c.MIMEType})
		case "audio":
			out = append(out, &mcp.AudioContent{Data: data, MIMEType: c.MIMEType})
		case "resource":
			rc := &mcp.ResourceContents{URI: c.Resource.URI, MIMEType: c.Resource.MIMEType, Text: c.Resource.Text}
			if c.Resource.Blob != "" {
				rc.Blob, _ = base64.StdEncoding.DecodeString(c.Resource.Blob)
			}
			out = append(out, &mcp.EmbeddedResource{Resource: rc})
		default:
			out = append(out, &mcp.TextContent{Text: c.Text})
		}
	}
	return out
}

func text(s string) Result { return Result{Content: []Content{{Type: "text", Text: s}}} }

// toolFixture is one fixture tool's catalog entry and the constructor of the
// function that serves it.
type toolFixture struct {
	tool  *catalog.Tool
	build func(lambdafn.Deps) lambda.Handler
}

var resultSchema = toolschema.JSON[Result](func(s *jsonschema.Schema) {
	s.Properties["content"].Items.Properties["type"].Enum = []any{"text", "image", "audio", "resource"}
})

// fixture returns a tool named name served by fn, with an input schema
// inferred from In and adjusted by patch.
func fixture[In any](name, title, description string, patch func(*jsonschema.Schema), ann *mcp.ToolAnnotations, example string, fn lambdafn.Func[In, Result]) toolFixture {
	t := &catalog.Tool{
		Name: name, Title: title, Description: description,
		Family: Family, Function: "conformance/" + name,
		InputSchema: toolschema.JSON[In](patch), OutputSchema: resultSchema, Annotations: ann,
		Visibility: catalog.Public, Limits: limits, Example: json.RawMessage(example),
	}
	return toolFixture{tool: t, build: func(d lambdafn.Deps) lambda.Handler {
		return lambdafn.Tool(t, d, fn)
	}}
}

// reportingProgress marks f's tool as one that reports progress
// ([catalog.Tool.Progress]).
func reportingProgress(f toolFixture) toolFixture {
	f.tool.Progress = true
	return f
}

func toolFixtures() []toolFixture {
	pure := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	return append([]toolFixture{
		fixture("test_simple_text", "Simple text", "Returns one text item.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return text("This is a simple text response for testing."), nil
			}),
		fixture("test_image_content", "Image content", "Returns one image item: a 1x1 red PNG.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{Content: []Content{{Type: "image", Data: base64Of(redPixelPNG()), MIMEType: "image/png"}}}, nil
			}),
		fixture("test_audio_content", "Audio content", "Returns one audio item: a short silent WAV.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{Content: []Content{{Type: "audio", Data: base64Of(silentWAV()), MIMEType: "audio/wav"}}}, nil
			}),
		fixture("test_embedded_resource", "Embedded resource", "Returns one embedded text resource.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{Content: []Content{{Type: "resource", Resource: &ResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
				}}}}, nil
			}),
		fixture("test_multiple_content_types", "Mixed content", "Returns a text, an image and an embedded JSON resource.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{Content: []Content{
					{Type: "text", Text: "Multiple content types test:"},
					{Type: "image", Data: base64Of(redPixelPNG()), MIMEType: "image/png"},
					{Type: "resource", Resource: &ResourceContents{
						URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
					}},
				}}, nil
			}),
		fixture("test_tool_with_logging", "Tool with logging", "Sends three info log messages about 50 ms apart, then returns.", nil, pure, `{}`,
			func(ctx context.Context, _ tenant.Caller, _ NoInput) (Result, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := pause(ctx, 50*time.Millisecond); err != nil {
							return Result{}, err
						}
					}
					lambdafn.LogToClient(ctx, "info", Family, msg)
				}
				return text("Tool with logging executed successfully"), nil
			}),
		reportingProgress(fixture("test_tool_with_progress", "Tool with progress", "Reports progress 0, 50 and 100 of 100, about 50 ms apart, then returns.", nil, pure, `{}`,
			func(ctx context.Context, _ tenant.Caller, _ NoInput) (Result, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := pause(ctx, 50*time.Millisecond); err != nil {
							return Result{}, err
						}
					}
					lambdafn.ReportProgress(ctx, p, 100, fmt.Sprintf("%g of 100", p))
				}
				return text("Tool with progress executed successfully"), nil
			})),
		fixture("test_error_handling", "Error handling", "Always fails with a tool error.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{}, &fault.Error{Kind: fault.KindInternal, Message: "This tool intentionally returns an error for testing"}
			}),
		fixture("test_sampling", "Sampling", "Asks the client's model to complete prompt, through an input request in its result (protocol 2026-07-28); older protocols get a tool error, since a stateless server cannot send the client a request and wait for the reply.",
			nil, pure, `{"prompt":"Test prompt for sampling"}`,
			func(ctx context.Context, _ tenant.Caller, in SamplingInput) (Result, error) {
				answer, ok := sampled(elicit.FromContext(ctx), "completion")
				if !ok {
					return Result{}, elicit.Ask("completion", samplingRequest(in.Prompt, 100))
				}
				return text("LLM response: " + answer), nil
			}),
		fixture("test_elicitation", "Elicitation", "Asks the user for a username and an email (a form), through an input request in its result (protocol 2026-07-28); older protocols get a tool error, since a stateless server cannot send the client a request and wait for the reply.",
			nil, pure, `{"message":"Please provide your information"}`,
			func(ctx context.Context, _ tenant.Caller, in ElicitationInput) (Result, error) {
				return formAnswer(ctx, elicit.Form(in.Message, object(map[string]any{
					"username": map[string]any{"type": "string", "description": "your username"},
					"email":    map[string]any{"type": "string", "format": "email", "description": "your email address"},
				}, "username", "email")))
			}),
		fixture("test_elicitation_sep1034_defaults", "Elicitation with defaults", "Asks for values with a default for every primitive type (SEP-1034), as test_elicitation asks.",
			nil, pure, `{}`,
			func(ctx context.Context, _ tenant.Caller, _ NoInput) (Result, error) {
				return formAnswer(ctx, elicit.Form("Please review and update the form fields with defaults", object(map[string]any{
					"name":     map[string]any{"type": "string", "default": "John Doe"},
					"age":      map[string]any{"type": "integer", "default": 30},
					"score":    map[string]any{"type": "number", "default": 95.5},
					"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": map[string]any{"type": "boolean", "default": true},
				})))
			}),
		fixture("test_elicitation_sep1330_enums", "Elicitation with enums", "Asks to pick from each kind of enum (SEP-1330), as test_elicitation asks.",
			nil, pure, `{}`,
			func(ctx context.Context, _ tenant.Caller, _ NoInput) (Result, error) {
				options := []string{"option1", "option2", "option3"}
				titled := []map[string]any{{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}}
				return formAnswer(ctx, elicit.Form("Please select options from the enum fields", object(map[string]any{
					"untitledSingle": map[string]any{"type": "string", "enum": options},
					"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
					"legacyEnum":     map[string]any{"type": "string", "enum": options, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": options}},
					"titledMulti":    map[string]any{"type": "array", "items": map[string]any{"anyOf": titled}},
				})))
			}),
		fixture("json_schema_2020_12_tool", "JSON Schema 2020-12", "Tool with JSON Schema 2020-12 features: $schema, $defs with a $ref, additionalProperties false.",
			func(s *jsonschema.Schema) {
				// SEP-1613: the suite checks that $schema, $defs and
				// additionalProperties reach tools/list unchanged.
				s.Schema = "https://json-schema.org/draft/2020-12/schema"
				s.Defs = map[string]*jsonschema.Schema{"address": toolschema.For[Address](nil)}
				s.Properties["address"] = &jsonschema.Schema{Ref: "#/$defs/address"}
				s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
			}, pure, `{"name":"Ada","address":{"street":"1 Main St","city":"Springfield"}}`,
			func(_ context.Context, _ tenant.Caller, in SchemaInput) (Result, error) {
				var addr Address
				if in.Address != nil {
					addr = *in.Address
				}
				return text(fmt.Sprintf("name=%q street=%q city=%q", in.Name, addr.Street, addr.City)), nil
			}),
	}, inputFixtures()...)
}

// formAnswer asks form, then answers with what the user did with it.
func formAnswer(ctx context.Context, form *mcp.ElicitParams) (Result, error) {
	res, ok := elicit.FromContext(ctx).Elicited("form")
	if !ok {
		return Result{}, elicit.Ask("form", form)
	}
	content, _ := json.Marshal(res.Content)
	return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)), nil
}

// pause waits for d or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
