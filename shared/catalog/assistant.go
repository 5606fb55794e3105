package catalog

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/prompt"
)

// AssistantFamily names the tools a chat application configures Switchboard
// with: prompt overrides and thread settings (seed 000).
const AssistantFamily = "assistant"

// PromptGetTool is the internal tool the gateway renders its prompts with
// (prompts/get), with the caller's tenant's overrides in force.
const PromptGetTool = "prompt_get"

var assistantLimits = Limits{Timeout: 10 * time.Second, MemoryMB: 256}

// assistantTool completes t as an assistant tool: public, with the family's
// limits, reading the table or, if it mutates, writing it.
func assistantTool(t *Tool) *Tool {
	t.Family, t.Visibility, t.Limits = AssistantFamily, Public, assistantLimits
	t.Table = Read
	if t.Mutates {
		t.Table = ReadWrite
	}
	return t
}

func assistantTools() []*Tool {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	idempotent := &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	replaces := &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
	name := json.RawMessage(`{"name":"optimizer_vs-grade"}`)
	return []*Tool{
		assistantTool(&Tool{
			Name: "prompt_override_set", Function: "assistant/prompt_override_set", Title: "Override a prompt",
			Description: "Replaces the text of one of Switchboard's prompts (optimizer_basic-default, optimizer_tools-default, optimizer_context-default, optimizer_vs-table-selection, optimizer_vs-grade, optimizer_vs-rephrase, switchboard_answer-default, switchboard_graph-extract, switchboard_graph-report) for your tenant. In force from the next call on, in prompts/get and wherever the pipeline and the answers use it. The text (at most 20,000 characters) must keep the {placeholders} of the prompt's required arguments. Each change increments the prompt's version and is audited.",
			Mutates:     true, Annotations: replaces,
			Example: json.RawMessage(`{"name":"optimizer_vs-grade","text":"Reply yes if any document helps answer the question, else no. One word."}`),
		}),
		assistantTool(&Tool{
			Name: "prompt_override_get", Function: "assistant/prompt_override_get", Title: "Read a prompt",
			Description: "Returns the text of one of Switchboard's prompts as in force for your tenant: your override if set, else the default; with its version and whether it is overridden.",
			Annotations: readOnly, Example: name,
		}),
		assistantTool(&Tool{
			Name: "prompt_override_reset", Function: "assistant/prompt_override_reset", Title: "Reset a prompt",
			Description: "Removes your tenant's override of a prompt, putting the default text back in force from the next call on. Counts as a change: the version increments and the change is audited.",
			Mutates:     true, Annotations: replaces, Example: name,
		}),
		{
			Name: PromptGetTool, Function: "assistant/prompt_get", Title: "Render a prompt",
			Description: "Internal: renders a prompt for prompts/get, with the caller's tenant's override in force and its arguments filled in.",
			Family:      AssistantFamily, Visibility: Internal, GatewayCalls: true, Limits: assistantLimits, Table: Read,
			Annotations: readOnly,
			Example:     json.RawMessage(`{"name":"optimizer_vs-rephrase","arguments":{"question":"And for version 2?"}}`),
		},
		assistantTool(&Tool{
			Name: "settings_get", Function: "assistant/settings_get", Title: "Read thread settings",
			Description: "Returns a thread's settings: tools_enabled (Vector Search, Connectors, Web Search), vector_search (stores, mode, top_k, rephrase, grade), model (generator, temperature, max_tokens) and prompts (system), with their version. A thread never configured has the defaults (version 0). Without thread_id, your default thread.",
			Annotations: readOnly, Example: json.RawMessage(`{"thread_id":"chat_demo"}`),
		}),
		assistantTool(&Tool{
			Name: "settings_update", Function: "assistant/settings_update", Title: "Change thread settings",
			Description: "Changes some of a thread's settings and returns them all: only the options given change (lists are replaced whole). Invalid input changes nothing and the error names the field. The generator model must be one the server allows. Pass the version you read to update only if nobody changed them since. Tools named optimizer_* read these settings for the thread they serve.",
			Mutates:     true, Generates: true, Annotations: idempotent,
			Example: json.RawMessage(`{"thread_id":"chat_demo","vector_search":{"stores":["health"],"top_k":3},"tools_enabled":["Vector Search"]}`),
		}),
	}
}

// assistantPrompts are package prompt's named prompts, rendered by
// [PromptGetTool] with the caller's tenant's overrides in force.
func assistantPrompts() []*Prompt {
	var out []*Prompt
	for _, s := range prompt.Specs() {
		p := &Prompt{Name: s.Name, Title: s.Title, Description: s.Description, Tool: PromptGetTool, Group: promptGroup(s.Name)}
		for _, a := range s.Arguments {
			p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, p)
	}
	return out
}

// promptGroup returns the group of the prompt named name, by seed 000's
// rules: the prompts of the vector search steps (store selection, grading,
// rephrasing, and optimizer_context-default, the rephrase step's system
// prompt) are in Vector Search, hidden with its tools; the chat's system
// prompts (optimizer_basic-default, which a thread without tools uses, and
// optimizer_tools-default) and Switchboard's own are in none.
func promptGroup(name string) string {
	if strings.HasPrefix(name, "optimizer_vs-") || name == prompt.Context {
		return GroupVectorSearch
	}
	return ""
}
