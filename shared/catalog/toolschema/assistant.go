package toolschema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func promptName(p map[string]*jsonschema.Schema) {
	p["name"].Enum = enum(prompt.Names()...)
}

func threadField(p map[string]*jsonschema.Schema) {
	p["thread_id"].Pattern, p["thread_id"].MaxLength = tenant.KeyIDPattern, ptr(128)
}

// assistantSchemas returns the schemas of the assistant family's tools.
func assistantSchemas() map[string]pair {
	override := schemaFor[prompt.OverrideOutput](nil)
	current := schemaFor[settings.Settings](nil)
	return map[string]pair{
		"prompt_override_set": {schemaFor[prompt.SetInput](func(p map[string]*jsonschema.Schema) {
			promptName(p)
			textField(p["text"], prompt.MaxTextChars)
		}), override},
		"prompt_override_get":   {schemaFor[prompt.GetInput](promptName), override},
		"prompt_override_reset": {schemaFor[prompt.ResetInput](promptName), override},
		"prompt_get": {schemaFor[prompt.RenderInput](func(p map[string]*jsonschema.Schema) {
			p["name"].MaxLength = ptr(256)
			p["arguments"].MaxProperties = ptr(16)
			p["arguments"].AdditionalProperties.MaxLength = ptr(prompt.MaxTextChars)
		}), schemaFor[prompt.RenderOutput](nil)},
		"settings_get": {schemaFor[settings.GetInput](threadField), current},
		"settings_update": {schemaFor[settings.UpdateInput](func(p map[string]*jsonschema.Schema) {
			threadField(p)
			p["tools_enabled"].MaxItems = ptr(len(settings.ToolNames))
			p["tools_enabled"].Items.Enum = enum(settings.ToolNames...)
			v := p["vector_search"].Properties
			v["stores"].MaxItems = ptr(settings.MaxStores)
			v["stores"].Items.Pattern = settings.AliasPattern
			v["mode"].Enum = enum(settings.Modes...)
			v["top_k"].Minimum, v["top_k"].Maximum = ptr(1.0), ptr(float64(settings.MaxTopK))
			m := p["model"].Properties
			m["generator"].MaxLength = ptr(256)
			m["temperature"].Minimum, m["temperature"].Maximum = ptr(0.0), ptr(settings.MaxTemperature)
			m["max_tokens"].Minimum, m["max_tokens"].Maximum = ptr(1.0), ptr(float64(settings.MaxTokens))
			p["prompts"].Properties["system"].Enum = enum(settings.SystemPrompts...)
			p["version"].Minimum = ptr(0.0)
		}), current},
	}
}
