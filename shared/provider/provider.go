// Package provider defines the model-backed services Switchboard calls
// (summarisers, embedders and generators) behind small interfaces. Each backend lives in its own package: offline (no network, no
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

// Purpose says what a text is embedded for. Some models (and the hashing
// embedder) treat queries and documents differently.
type Purpose string

// The values of [Purpose].
const (
	ForDocument Purpose = "document"
	ForQuery    Purpose = "query"
)

// EmbedRequest asks for one vector per text.
type EmbedRequest struct {
	Texts   []string
	Purpose Purpose
}

// Embeddings are an embedder's answer: Vectors[i] embeds Texts[i], each of
// Dims values and unit length.
type Embeddings struct {
	Vectors  [][]float32
	Dims     int
	Provider string
	Model    string
}

// Embedder turns texts into vectors. Implementations are safe for concurrent
// use. A vector store records the provider, model and dimensions it was built
// with, and refuses an embedder that differs.
type Embedder interface {
	Embed(ctx context.Context, req EmbedRequest) (Embeddings, error)
	// Provider, Model and Dims name what Embed produces, without calling it.
	Provider() string
	Model() string
	Dims() int
}

// Task is what a generation is for. Hosted models get a prompt rendered for
// the task; the offline generator answers each task with its own extractive
// method from the structured fields.
type Task string

// The values of [Task].
const (
	// TaskAnswer answers Question from Documents.
	TaskAnswer Task = "answer"
	// TaskRephrase rewrites Question into a standalone search query, using History.
	TaskRephrase Task = "rephrase"
	// TaskGrade judges whether Documents are relevant to Question; the text is "yes" or "no".
	TaskGrade Task = "grade"
)

// GenerateRequest asks a generator to perform Task.
type GenerateRequest struct {
	Task Task
	// System, if set, replaces the task's default system prompt (a
	// tenant's override, read through prompt.Lookup).
	System string
	// Template, if set, replaces [TaskRephrase]'s default message template
	// (prompt.Rephrase), with its {conversation} and {question}.
	Template  string
	Question  string
	Documents []string
	// Sources, if set, names where each document came from (Sources[i] for
	// Documents[i]), so that an answer can cite them.
	Sources []string
	History []Turn
	// MaxTokens bounds the output. If zero, the backend picks.
	MaxTokens int
}

// Generation is a generator's answer.
type Generation struct {
	Text         string
	Provider     string
	Model        string
	InputTokens  int
	OutputTokens int
}

// Generator produces text for a [Task]. Implementations are safe for concurrent use.
type Generator interface {
	Generate(ctx context.Context, req GenerateRequest) (Generation, error)
}
