// Package provider defines the model-backed services Switchboard calls
// (summarisers now; embedders and generators join them) behind small
// interfaces. Each backend lives in its own package: offline (no network, no
// model files, the default), and the hosted ones. Every result names the
// provider and model that produced it, so nothing pretends an LLM ran when it
// did not.
package provider

import "context"

// Turn is one message of a conversation.
type Turn struct {
	Role    string
	Content string
}

// SummarizeRequest asks for a summary of Turns.
type SummarizeRequest struct {
	Turns []Turn
	// Language is a BCP 47 tag ("en", "vi") for the summary; backends that
	// cannot choose a language keep the source's.
	Language string
	// MaxChars bounds the summary's length in characters. If zero, the backend picks.
	MaxChars int
}

// Summary is a summariser's answer.
type Summary struct {
	Text     string
	Provider string
	Model    string
}

// Summarizer condenses conversation turns. Implementations are safe for
// concurrent use.
type Summarizer interface {
	Summarize(ctx context.Context, req SummarizeRequest) (Summary, error)
}
