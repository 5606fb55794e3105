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

func toolFixtures() []toolFixture {
	pure := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	return []toolFixture{
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
		fixture("test_tool_with_progress", "Tool with progress", "Reports progress 0, 50 and 100 of 100, about 50 ms apart, then returns.", nil, pure, `{}`,
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
			}),
		fixture("test_error_handling", "Error handling", "Always fails with a tool error.", nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{}, &fault.Error{Kind: fault.KindInternal, Message: "This tool intentionally returns an error for testing"}
			}),
		fixture("test_sampling", "Sampling", "Would ask the client's model to complete prompt (sampling/createMessage); always fails here, since a stateless server cannot wait for the client's answer.",
			nil, pure, `{"prompt":"Test prompt for sampling"}`,
			func(context.Context, tenant.Caller, SamplingInput) (Result, error) {
				return Result{}, needsClientRequest("test_sampling", "sampling/createMessage")
			}),
		fixture("test_elicitation", "Elicitation", "Would ask the user for a username and an email (elicitation/create); always fails here, since a stateless server cannot wait for the client's answer.",
			nil, pure, `{"message":"Please provide your information"}`,
			func(context.Context, tenant.Caller, ElicitationInput) (Result, error) {
				return Result{}, needsClientRequest("test_elicitation", "elicitation/create")
			}),
		fixture("test_elicitation_sep1034_defaults", "Elicitation with defaults", "Would ask the user for values with defaults for every primitive type (SEP-1034); always fails here, since a stateless server cannot wait for the client's answer.",
			nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{}, needsClientRequest("test_elicitation_sep1034_defaults", "elicitation/create")
			}),
		fixture("test_elicitation_sep1330_enums", "Elicitation with enums", "Would ask the user to pick from each kind of enum (SEP-1330); always fails here, since a stateless server cannot wait for the client's answer.",
			nil, pure, `{}`,
			func(context.Context, tenant.Caller, NoInput) (Result, error) {
				return Result{}, needsClientRequest("test_elicitation_sep1330_enums", "elicitation/create")
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
	}
}

// needsClientRequest is the tool error of a fixture that would send the
// client a request and wait for its answer.
func needsClientRequest(tool, method string) error {
	return fault.Invalid("", "%s cannot run on Switchboard: it needs the server to send %s to the client and wait for the answer, "+
		"and Switchboard's gateway is stateless (every HTTP request is served on its own, possibly by another instance), "+
		"so there is no session to carry a request from server to client. Use a stateful MCP server for this.", tool, method)
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
