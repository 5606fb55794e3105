// Package prompt holds Switchboard's named prompts: seed 000's six defaults
// (the chat system prompts, the rephrase, grade and store-selection prompts),
// the RAG answer writer's and the entity graph's (extraction, community
// reports), with their arguments, and a per-tenant store of
// run-time overrides. Every piece of code that sends a named prompt to a model
// reads it through one [Lookup], so that an override is in force on the next
// call, everywhere, without a restart:
//
//	prompts := prompt.NewStore(table, nil)
//	text, err := prompts.Text(ctx, tenant, prompt.Grade) // the tenant's override, else the default
//	msg, err := prompt.Fill(prompt.Rephrase, text, map[string]string{"question": q, "conversation": ""})
//
// The gateway's prompts/list and prompts/get serve the same prompts ([Specs])
// with the caller's overrides in force ([Store.Render]).
package prompt

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
)

// The prompts' names. The first six are seed 000's; [Answer] is
// Switchboard's own: the seed injects documents into its chat prompt and
// names no answer prompt, while the rag_* tools write answers themselves.
const (
	// Basic is the chat system prompt when no tools are enabled.
	Basic = "optimizer_basic-default"
	// Tools is the chat system prompt when any tools are enabled.
	Tools = "optimizer_tools-default"
	// Context is the rephrase step's system prompt: turn a follow-up into a
	// standalone search query.
	Context = "optimizer_context-default"
	// TableSelection asks a model to pick the vector stores to search.
	TableSelection = "optimizer_vs-table-selection"
	// Grade is the grade step's system prompt: binary relevance.
	Grade = "optimizer_vs-grade"
	// Rephrase is the rephrase step's user message, carrying {conversation}
	// and {question}.
	Rephrase = "optimizer_vs-rephrase"
	// Answer is the RAG answer writer's system prompt; the documents follow it.
	Answer = "switchboard_answer-default"
	// GraphExtract is the system prompt with which a generator extracts a
	// chunk's entities and relations for a store's entity graph; the chunk
	// follows it, and the reply must be the JSON object it describes.
	GraphExtract = "switchboard_graph-extract"
	// GraphReport is the system prompt with which a generator writes the
	// report of a community of the entity graph; its central chunks follow it.
	GraphReport = "switchboard_graph-report"
)

// Limits of an override.
const (
	// MaxTextChars bounds an override's text, in characters: room for a long
	// system prompt, far below what a table item holds.
	MaxTextChars = 20000
)

// Argument is one argument of a prompt: a {name} placeholder in its text.
type Argument struct {
	Name        string
	Description string
	// Required arguments must be given to prompts/get, and an override must
	// keep their placeholders.
	Required bool
}

// Spec is one named prompt: what prompts/list shows and the default text.
type Spec struct {
	Name        string
	Title       string
	Description string
	// Role is the MCP role of the message prompts/get returns: "assistant"
	// for a system prompt (as seed 000 returns them), "user" for a message.
	Role      string
	Arguments []Argument
	Text      string
}

var specs = []Spec{
	{
		Name: Basic, Title: "Basic Prompt", Role: "assistant",
		Description: "The chat system prompt when no tools are enabled.",
		Text:        "You are a friendly, helpful assistant. Answer clearly and concisely, and say so when you do not know.",
	},
	{
		Name: Tools, Title: "Tools Prompt", Role: "assistant",
		Description: "The chat system prompt when tools are enabled (vector search, connectors, web search).",
		Text: `You are a helpful assistant with tools.
Use the vector search tool for questions about the user's own documents ("our documentation", product guides, internal notes), the web search tool for recent or public information, and the other tools for what their descriptions say.
Base your answer on what the tools return; quote figures, names and settings exactly as they appear.
If no tool returns what the question needs, say so instead of guessing. Answer in the language of the question.`,
	},
	{
		Name: Context, Title: "Contextualize Prompt", Role: "assistant",
		Description: "The rephrase step's system prompt: rewrite a follow-up question into a standalone search query.",
		Text: `You rewrite the user's latest question into a standalone search query for a document search engine.
Use the earlier conversation only to resolve what the question refers to (pronouns such as "it" or "that", and short follow-ups such as "and for version 2?").
Keep every specific term from the question. Do not answer the question. Do not add facts that were not in the conversation.
If the question already stands on its own, return it unchanged.
Reply with the query alone, on one line, without quotes or explanations.`,
	},
	{
		Name: TableSelection, Title: "Smart Vector Storage Prompt", Role: "user",
		Description: "Asks a model which vector stores to search for a question, given the stores' aliases and descriptions.",
		Arguments: []Argument{
			{Name: "stores", Description: "the stores to choose from, one per line: alias: description", Required: true},
			{Name: "question", Description: "the question to search for", Required: true},
			{Name: "max_stores", Description: "how many stores to pick at most"},
		},
		Text: `Choose the vector stores to search for the question below.

Stores (alias: description):
{stores}

Question: {question}

Judge each store by its description; without one, by its alias. Pick the stores whose topic the question is about, at most {max_stores}.
Reply with a JSON array of the chosen aliases only, such as ["docs", "runbooks"], or [] if none fits.`,
	},
	{
		Name: Grade, Title: "Vector Search Grading Prompt", Role: "assistant",
		Description: "The grade step's system prompt: are the retrieved documents relevant to the question (yes or no)?",
		Text: `You judge whether retrieved documents are relevant to a question.
A document is relevant if it contains keywords or information that help answer the question, even partially.
Reply with exactly one word: yes if at least one document is relevant, no if none is.`,
	},
	{
		Name: Rephrase, Title: "Vector Search Rephrase Prompt", Role: "user",
		Description: "The rephrase step's message: the conversation so far and the latest question, to be turned into a standalone query.",
		Arguments: []Argument{
			{Name: "conversation", Description: "the earlier turns under a heading, or empty"},
			{Name: "question", Description: "the latest question", Required: true},
		},
		Text: "{conversation}Latest question: {question}\n\nStandalone search query:",
	},
	{
		Name: Answer, Title: "Answer Prompt", Role: "assistant",
		Description: "The system prompt of the rag_* tools' answers; the retrieved documents are appended to it.",
		Text: `You answer questions using the documents listed below, which were retrieved from the user's own document stores.
Base your answer on those documents. Quote figures, names and settings exactly as the documents state them.
If the documents do not contain the answer, say that they do not, and do not make one up.
Answer in the language of the question, directly and concisely.`,
	},
	{
		Name: GraphExtract, Title: "Entity Extraction Prompt", Role: "assistant",
		Description: "The system prompt with which a generator extracts a chunk's entities and relations for a store's entity graph (rag_graphrag); the chunk follows it. The reply must stay the JSON object it describes: a reply that is not is refused, and that chunk is extracted offline.",
		Text: `You extract a knowledge graph from the document below.
List the named entities and key domain concepts it mentions (people, organisations, places, products, methods, substances, diseases), and the relations the document states between them.
Reply with one JSON object and nothing else:
{"entities":[{"name":"..."}],"relations":[{"source":"...","target":"..."}]}
Write each name as the document writes it. Every relation's source and target must be names listed in entities.
List at most 24 entities and 48 relations.`,
	},
	{
		Name: GraphReport, Title: "Community Report Prompt", Role: "assistant",
		Description: "The system prompt with which a generator writes the report of a community of related entities (rag_iris_global_graphrag); the community's central chunks follow it, its entities are the question.",
		Text: `You write a short report on a community of related entities in the user's documents.
The entities are listed in the question; the documents are passages that mention them.
Say what the entities are and how they relate, using only the documents. At most 150 words, plain prose.`,
	},
}

// Specs returns every named prompt, in a fixed order. Callers must not modify them.
func Specs() []Spec { return specs }

// SpecOf returns the prompt named name, or a not_found error naming it and
// the prompts there are.
func SpecOf(name string) (Spec, error) {
	i := slices.IndexFunc(specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return Spec{}, fault.NotFound("no prompt named %q; the prompts are %s", clip(name, 80), strings.Join(Names(), ", "))
	}
	return specs[i], nil
}

// Names returns the names of every prompt, in [Specs] order.
func Names() []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// Lookup finds the text of a named prompt for a tenant. Text returns the
// tenant's override if one is set, else the default; an unknown name is an
// error naming it. Implementations are safe for concurrent use.
type Lookup interface {
	Text(ctx context.Context, tenant, name string) (string, error)
}

// Defaults is the [Lookup] of the default texts alone, for code that has no
// table (tests, tools outside a tenant).
var Defaults Lookup = defaults{}

type defaults struct{}

// Text implements the [Lookup] interface.
func (defaults) Text(_ context.Context, _, name string) (string, error) {
	s, err := SpecOf(name)
	return s.Text, err
}

// Fill replaces the {argument} placeholders of the named prompt's arguments
// in text with args; other braces are left as they are. A required argument
// that args lacks, or an argument the prompt does not take, is an invalid
// argument error naming it.
func Fill(name, text string, args map[string]string) (string, error) {
	s, err := SpecOf(name)
	if err != nil {
		return "", err
	}
	for k := range args {
		if !slices.ContainsFunc(s.Arguments, func(a Argument) bool { return a.Name == k }) {
			return "", fault.Invalid("arguments", "prompt %s takes no argument %q", name, clip(k, 80))
		}
	}
	for _, a := range s.Arguments {
		if _, ok := args[a.Name]; !ok && a.Required {
			return "", fault.Invalid("arguments."+a.Name, "is required by prompt %s", name)
		}
	}
	// One pass, so that an argument's value holding a placeholder is not filled in turn.
	var b strings.Builder
	for rest := text; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		arg, ok := placeholder(rest)
		if ok && slices.ContainsFunc(s.Arguments, func(a Argument) bool { return a.Name == arg }) {
			b.WriteString(args[arg])
			rest = rest[len(arg)+2:]
			continue
		}
		b.WriteByte('{')
		rest = rest[1:]
	}
	return b.String(), nil
}

// placeholder returns the name of the placeholder s starts with, as
// `\{[a-z_]+\}` matches it ("{question}"), matched by hand: compiling the
// expression cost the start of every process that links this package.
func placeholder(s string) (name string, ok bool) {
	n := 1
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] == '_') {
		n++
	}
	if n == 1 || n == len(s) || s[n] != '}' {
		return "", false
	}
	return s[1:n], true
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
