// Package assistantfn binds the assistant family's functions to packages
// prompt and settings: one [lambdafn.Function] per function, which its main
// starts (functions/assistant/<name>/main.go) and package handlers lists.
//
//	func main() { lambdafn.Start(assistantfn.SettingsGet, lambdafn.Openers{}) }
package assistantfn

import (
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/settings"
)

func prompts(d lambdafn.Deps) *prompt.Store { return prompt.NewStore(d.Table, nil) }

// threadSettings returns the settings store, allowing the generator models
// the configured generator allows (provider.GeneratorFor).
func threadSettings(d lambdafn.Deps) *settings.Store {
	var allow func(string) error
	if d.Generator != nil {
		allow = func(model string) error {
			_, err := provider.GeneratorFor(d.Generator, model)
			return err
		}
	}
	return settings.New(d.Table, &settings.Options{AllowModel: allow})
}

// The assistant family's tool functions.
var (
	PromptOverrideSet   = lambdafn.Method("prompt_override_set", prompts, (*prompt.Store).Set)
	PromptOverrideGet   = lambdafn.Method("prompt_override_get", prompts, (*prompt.Store).Get)
	PromptOverrideReset = lambdafn.Method("prompt_override_reset", prompts, (*prompt.Store).Reset)
	PromptGet           = lambdafn.Method("prompt_get", prompts, (*prompt.Store).Render)
	SettingsGet         = lambdafn.Method("settings_get", threadSettings, (*settings.Store).Current)
	SettingsUpdate      = lambdafn.Method("settings_update", threadSettings, (*settings.Store).Update)
)

// Functions returns every function of the assistant family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{PromptOverrideSet, PromptOverrideGet, PromptOverrideReset, PromptGet, SettingsGet, SettingsUpdate}
}
