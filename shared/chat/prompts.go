package chat

// The system prompts of a turn, seed 000's names: with tools on, and without.
// Package prompt serves them with their overrides once merged; these are the
// texts a turn falls back on when no lookup is configured or the lookup does
// not know them.
const (
	PromptBasic = "optimizer_basic-default"
	PromptTools = "optimizer_tools-default"
)

var defaultPrompts = map[string]string{
	PromptBasic: `You are a friendly, helpful assistant. Answer the user's questions directly and concisely, in the language they write in. If you do not know something, say so.`,
	PromptTools: `You are a helpful assistant with tools. Use them when they help: search the user's documents for questions about their documents, guides or knowledge base; search the web for current events; call the other tools for what they describe. Base your answer on what the tools return and cite documents by their number. If the tools do not give you the answer, say so rather than guessing. Answer in the language the user writes in.`,
}
