package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
)

// arg1Values are the completions offered for test_prompt_with_arguments' arg1.
var arg1Values = []string{"paris", "park", "party", "test", "testing"}

func prompts() []*catalog.Prompt {
	return []*catalog.Prompt{
		{
			Name: "test_simple_prompt", Title: "Simple prompt", Description: "A prompt with no arguments and one text message.",
			Render: func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
				return messages(userText("This is a simple prompt for testing.")), nil
			},
		},
		{
			Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "A prompt that repeats its two arguments; arg1 offers completions.",
			Arguments: []*mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
			Render: func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
				if err := require(args, "arg1", "arg2"); err != nil {
					return nil, err
				}
				return messages(userText(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))), nil
			},
			Complete: func(arg, prefix string) []string {
				if arg != "arg1" {
					return nil
				}
				var out []string
				for _, v := range arg1Values {
					if strings.HasPrefix(v, prefix) {
						out = append(out, v)
					}
				}
				return out
			},
		},
		{
			Name: "test_prompt_with_embedded_resource", Title: "Prompt with an embedded resource", Description: "A prompt that embeds a text resource at the URI it is given.",
			Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			Render: func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
				if err := require(args, "resourceUri"); err != nil {
					return nil, err
				}
				return messages(
					&mcp.PromptMessage{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
						URI: args["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
					}}},
					userText("Please process the embedded resource above."),
				), nil
			},
		},
		{
			Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "A prompt with an image message (a 1x1 red PNG) and a text message.",
			Render: func(context.Context, map[string]string) (*mcp.GetPromptResult, error) {
				return messages(
					&mcp.PromptMessage{Role: "user", Content: &mcp.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"}},
					userText("Please analyze the image above."),
				), nil
			},
		},
		{
			Name: "test_input_required_result_prompt", Title: "Prompt that asks", Description: "A prompt that first asks what context to use (an input request), then renders with it.",
			Render: inputPrompt,
		},
	}
}

func messages(m ...*mcp.PromptMessage) *mcp.GetPromptResult { return &mcp.GetPromptResult{Messages: m} }

func userText(s string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: s}}
}

// require reports the first of names missing from args as invalid params.
func require(args map[string]string, names ...string) error {
	for _, n := range names {
		if args[n] == "" {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("argument %s is required", n)}
		}
	}
	return nil
}
