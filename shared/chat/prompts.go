package chat

import "github.com/switchboard-dev/switchboard/shared/prompt"

// The system prompts of a turn, seed 000's names: with tools on, and
// without. Their default texts are package prompt's ([prompt.Defaults]), the
// one source of truth, which a turn falls back on when no lookup is
// configured.
const (
	PromptBasic = prompt.Basic
	PromptTools = prompt.Tools
)
