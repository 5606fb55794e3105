package prompt

// GetInput is the input of prompt_override_get.
type GetInput struct {
	Name string `json:"name" jsonschema:"the prompt's name, such as optimizer_vs-grade"`
}

// SetInput is the input of prompt_override_set.
type SetInput struct {
	Name string `json:"name" jsonschema:"the prompt's name, such as optimizer_vs-grade"`
	Text string `json:"text" jsonschema:"the new text; it must keep the {placeholders} of the prompt's required arguments"`
}

// ResetInput is the input of prompt_override_reset.
type ResetInput struct {
	Name string `json:"name" jsonschema:"the prompt's name, such as optimizer_vs-grade"`
}

// OverrideOutput is the output of prompt_override_get, prompt_override_set and
// prompt_override_reset: the prompt as now in force for the tenant.
type OverrideOutput struct {
	Name       string `json:"name"`
	Text       string `json:"text" jsonschema:"the text in force: the override, or the default"`
	Version    int64  `json:"version" jsonschema:"incremented by every set and reset; 0 if the prompt was never changed"`
	Overridden bool   `json:"overridden" jsonschema:"whether an override is in force"`
	UpdatedAt  string `json:"updated_at,omitempty" jsonschema:"when the last set or reset happened (RFC 3339)"`
	UpdatedBy  string `json:"updated_by,omitempty" jsonschema:"the principal who made it"`
}

// RenderInput is the input of the internal tool prompt_get: a prompts/get request.
type RenderInput struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// RenderOutput is the output of prompt_get: an MCP GetPromptResult.
type RenderOutput struct {
	Description string    `json:"description,omitempty"`
	Messages    []Message `json:"messages"`
}

// Message is one message of a [RenderOutput].
type Message struct {
	Role    string      `json:"role"`
	Content TextContent `json:"content"`
}

// TextContent is a message's text.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}
