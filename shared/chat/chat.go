// Package chat runs a conversation turn as seed 000's graph does:
// initialise (the thread's history from the memory family, its settings,
// its system prompt) -> completion (the model, with tools) -> route: the
// vector-search path (rephrase -> retrieve -> grade through the RAG
// pipeline; documents graded relevant go into the system prompt for this
// turn only), the tools path (connector tools, web search, Switchboard's own
// tools, called by name; their results stay in the history), or the final
// answer. The MCP tool chat and the gateway's POST /v1/chat/completions
// both run it.
//
//	svc := chat.New(chat.Options{Memory: mem, Generator: gen, Pipeline: runner, Tools: tools})
//	out, err := svc.Chat(ctx, caller, chat.Input{ThreadID: "chat_1", Message: "How do I rotate keys?"})
//	// out.Answer; out.VSMetadata (stores searched, context_input, num_documents); out.TokenUsage
//
// Retrieved documents are recorded in the thread as a tool message marked
// internal: memory_get_all_messages shows them, and they are filtered from
// the model's context on later turns, so a conversation with a search every
// turn does not carry every turn's documents (seed 000's token efficiency).
// Documents graded not relevant leave no trace (transparent completion).
//
// Without a model that can call tools (the offline generator), the route is
// chosen by code, as seed 004's application does: a tool the request names,
// web search when the question has its trigger words, else vector search
// when it is enabled (store selection by the retriever's own score, the
// grade deciding relevance). The answer then says it was assembled without a
// model.
package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/profile"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Limits and defaults of a turn.
const (
	// DefaultRecursionLimit bounds the completions of one turn: each tools
	// round is one, the final answer another.
	DefaultRecursionLimit = 8
	// MaxMessageChars bounds the user's message, as memory bounds any message.
	MaxMessageChars = memory.MaxContentChars
	// MaxHistoryMessages bounds the history a stateless caller may send.
	MaxHistoryMessages = 100
	// MaxToolResultChars bounds a tool's result as the model and the history see it.
	MaxToolResultChars = 20_000
	// HistoryWindow is how many of the thread's newest messages a turn reads
	// (memory_get_context's window; older ones are in the rolling summary).
	HistoryWindow = memory.DefaultContextMessages
)

// VectorSearchTool is the tool a model calls to search the vector stores;
// the chat runs the pipeline in its place (the vector-search path) rather
// than calling it as a tool.
const VectorSearchTool = "optimizer_vs-retriever"

// The tool groups of [Settings.ToolsEnabled], seed 000's names, and
// Switchboard's own tools, always on.
const (
	ToolsVectorSearch = catalog.GroupVectorSearch
	ToolsConnectors   = catalog.GroupConnectors
	ToolsWebSearch    = catalog.GroupWebSearch
	ToolsSwitchboard  = "Switchboard"
)

// The finish reasons of an [Output].
const (
	FinishStop           = "stop"
	FinishLength         = "length"
	FinishError          = "error"
	FinishRecursionLimit = "recursion_limit"
)

// Input is one turn of a conversation.
type Input struct {
	// ThreadID names the conversation (a memory family conversation id),
	// created if it does not exist. Without one, History is the
	// conversation and nothing is recorded.
	ThreadID string `json:"thread_id,omitempty" jsonschema:"the conversation (a memory conversation id, created if new); its history is read from memory and this turn recorded there. Omit it to pass the history yourself in history; nothing is then recorded"`
	Message  string `json:"message" jsonschema:"the user's message"`
	// History is the conversation so far for a caller without a thread.
	History []HistoryMessage `json:"history,omitempty" jsonschema:"the conversation so far, oldest first, when no thread_id is given"`
	// Tool, if set, is the tool this turn must call.
	Tool string `json:"tool,omitempty" jsonschema:"a tool this turn must call (by name); without a model its single text argument is the message"`
	// Model is a generator model among those allowed; empty for the configured one.
	Model       string   `json:"model,omitempty" jsonschema:"a language model among those the server allows; empty for the configured one"`
	Temperature *float64 `json:"temperature,omitempty" jsonschema:"sampling temperature, 0 to 2"`
	MaxTokens   int      `json:"max_tokens,omitempty" jsonschema:"bound on the answer's tokens"`
}

// HistoryMessage is a message of a caller-held history.
type HistoryMessage struct {
	Role    string `json:"role" jsonschema:"user or assistant (others are ignored)"`
	Content string `json:"content"`
}

// Output is a turn's answer and what the turn did.
type Output struct {
	ThreadID     string `json:"thread_id,omitempty"`
	Answer       string `json:"answer"`
	FinishReason string `json:"finish_reason" jsonschema:"stop, length (the answer was cut at max_tokens), error (answer explains) or recursion_limit"`
	// Route lists the paths the turn took, in order: vector_search, tools, answer.
	Route []string `json:"route"`
	// Offline is true when no model answered (the answer was assembled by code).
	Offline    bool             `json:"offline"`
	Provider   string           `json:"provider,omitempty"`
	Model      string           `json:"model,omitempty"`
	ToolCalls  []ToolCallRecord `json:"tool_calls,omitempty"`
	VSMetadata *VSMetadata      `json:"vs_metadata,omitempty"`
	TokenUsage TokenUsage       `json:"token_usage"`
	// Error is the cause when FinishReason is error.
	Error string `json:"error,omitempty"`
}

// ToolCallRecord is a tool the turn called.
type ToolCallRecord struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"is_error,omitempty"`
}

// VSMetadata is what the vector-search path did (seed 000's vs_metadata).
type VSMetadata struct {
	SearchedStores []string `json:"searched_stores"`
	ContextInput   string   `json:"context_input"`
	NumDocuments   int      `json:"num_documents" jsonschema:"documents graded relevant and given to the model"`
	Relevant       string   `json:"relevant"`
	GradeSkipped   bool     `json:"grade_skipped,omitempty" jsonschema:"the thread turned grading off: the documents were kept without asking the grade step"`
	// StoreSelection says how the stores were chosen when the thread named none.
	StoreSelection *pipeline.StoreSelection `json:"store_selection,omitempty" jsonschema:"how the stores searched were chosen, when the thread named none (by model or score, and why the model's choice was not used)"`
	Degraded       []string                 `json:"degraded,omitempty"`
}

// TokenUsage sums the turn's model calls (seed 000's token_usage).
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *TokenUsage) add(in, out int) {
	u.PromptTokens += in
	u.CompletionTokens += out
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
}

// Settings are a thread's settings as far as a turn reads them.
type Settings struct {
	// ToolsEnabled are the tool groups on; nil means all.
	ToolsEnabled []string
	// Vector search options.
	Stores []string
	Mode   string
	TopK   int
	// Ungraded keeps the documents retrieved without grading them (the
	// thread turned grading off): the pipeline skips its grade step.
	Ungraded bool
	// Model options.
	Model       string
	Temperature *float64
	MaxTokens   int
	// System is the system prompt's name; empty for the default.
	System string
}

// enabled reports whether s enables a tool group. Switchboard's own tools
// are no group of seed 000's tools_enabled: they are always on (tool
// profiles narrow them).
func (s Settings) enabled(group string) bool {
	return s.ToolsEnabled == nil || group == ToolsSwitchboard || slices.Contains(s.ToolsEnabled, group)
}

// allows reports whether the thread's settings and the caller's profile
// both enable the tool name of group ([ToolsSwitchboard] is in no group of
// a profile's).
func (t *turn) allows(name, group string) bool {
	if !t.settings.enabled(group) {
		return false
	}
	if group == ToolsSwitchboard {
		group = ""
	}
	return t.held.Allows(name, group)
}

// SettingsSource gives a thread's settings (package settings, through chatfn's adapter).
type SettingsSource interface {
	Get(ctx context.Context, tenant, threadID string) (Settings, error)
}

// ToolResult is what a called tool answered, as text the model reads.
type ToolResult struct {
	Text    string
	IsError bool
	// ApprovalID and ApprovalURL name the approval a connector call asked
	// for instead of running (its page, where the user decides).
	ApprovalID, ApprovalURL string
}

// Tools lists and calls the tools a turn may use. Implementations are safe
// for concurrent use.
type Tools interface {
	// List returns the tools c may call, by group ([ToolsConnectors], ...).
	List(ctx context.Context, c tenant.Caller) ([]Tool, error)
	// Call calls the tool name with args for c.
	Call(ctx context.Context, c tenant.Caller, name string, args json.RawMessage) (ToolResult, error)
}

// Tool is a tool a turn may offer the model.
type Tool struct {
	provider.ToolSpec
	// Group is the tool group that enables it.
	Group string
}

// Options configure [New].
type Options struct {
	Memory *memory.Service
	// Generator answers; a [provider.ToolCaller] chooses tools itself, any
	// other (the offline generator) leaves the choice to code.
	Generator provider.Generator
	// Pipeline runs the vector-search path; nil turns it off.
	Pipeline pipeline.Runner
	// Tools are the tools the tools path may call; nil means none.
	Tools Tools
	// Settings and Prompts are read per thread and tenant; nil means the defaults.
	Settings SettingsSource
	Prompts  prompt.Lookup
	// Deltas, if set, receives the answer as it is streamed to the client,
	// piece by piece, at most [MaxDeltas] of them: done is the answer's
	// bytes sent with this piece, total its length when known, else zero
	// (lambdafn.ReportProgress, which the gateway relays as
	// chat.completion.chunk deltas). With a [provider.Streamer] the pieces
	// are the model's text as it writes it.
	Deltas func(ctx context.Context, done, total float64, delta string)
	// Streaming reports whether a call's deltas reach its client as they
	// are made (lambdafn.Streaming); only then is the model asked to
	// stream. If nil, they are taken to.
	Streaming func(ctx context.Context) bool
	// RecursionLimit bounds a turn's completions. If zero, [DefaultRecursionLimit].
	RecursionLimit int
	Logger         *slog.Logger
}

// Service runs chat turns. It is safe for concurrent use.
type Service struct {
	opts Options
	log  *slog.Logger
}

// New returns a Service.
func New(opts Options) *Service {
	opts.RecursionLimit = cmp.Or(opts.RecursionLimit, DefaultRecursionLimit)
	return &Service{opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)).With("component", "chat")}
}

// turn is the state of one turn as it runs through the graph.
type turn struct {
	in       Input
	caller   tenant.Caller
	settings Settings
	system   string
	// history is the context the model sees from earlier turns.
	history []provider.Message
	// messages are this turn's, from the user's message on, as the model sees them.
	messages []provider.Message
	// record is what the thread keeps of this turn, in order.
	record []memory.Turn
	// documents are the relevant documents of the vector-search path, for this turn's system prompt.
	documents []pipeline.Document
	searched  bool
	tools     []Tool
	// held is the tool profile the caller is held to (its API key's or
	// token's, from the envelope): the turn offers and calls only what it allows.
	held profile.Profile
	// pending are the connector calls earlier turns left waiting for
	// approval; waiting those this turn leaves waiting (approval.go).
	pending, waiting []approvalCall
	out              Output
	// live streams the answer to the client, if it asked; answerStreamed
	// says the model's text streamed was the answer.
	live           *deltas
	answerStreamed bool
}

// Chat runs one turn. A failure of the model, the pipeline or a tool ends
// the turn with an answer that says what failed (FinishReason error); only
// invalid input and an unreachable history are errors.
func (s *Service) Chat(ctx context.Context, c tenant.Caller, in Input) (Output, error) {
	t, err := s.initialise(ctx, c, in)
	if err != nil {
		return Output{}, err
	}
	t.live = s.deltas(ctx)
	if err := s.run(ctx, t); err != nil {
		t.out.FinishReason, t.out.Error = FinishError, cause(err)
		t.out.Answer = "Sorry, I could not finish this answer: " + t.out.Error
		s.log.WarnContext(ctx, "chat turn failed", "thread", in.ThreadID, "error", err)
	}
	answered := t.out.Answer
	t.out.Answer = withApprovalNotes(answered, t.waiting)
	t.record = append(t.record, memory.Turn{Role: provider.RoleAssistant, Content: t.out.Answer})
	if in.ThreadID != "" {
		if _, err := s.opts.Memory.AddTurns(ctx, c, in.ThreadID, t.record); err != nil {
			return Output{}, fmt.Errorf("chat: recording the turn: %w", err)
		}
	}
	if t.out.Route == nil {
		t.out.Route = []string{}
	}
	if t.live != nil {
		if t.answerStreamed {
			// The model's text went out as written; what the approval
			// notes added to it goes after.
			t.live.write(strings.TrimPrefix(t.out.Answer, answered))
			t.live.flush()
		} else {
			t.live.whole(t.out.Answer)
		}
	}
	return t.out, nil
}

// cause is err as a user may read it: the classified message, else the
// error's own first line (a provider's or the pipeline's, which say what
// failed), never more than a few lines.
func cause(err error) string {
	msg := err.Error()
	if e, ok := errors.AsType[*fault.Error](err); ok {
		msg = e.Error()
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return clip(msg, 400)
}

// validate checks in, naming the field at fault.
func validate(in Input) error {
	switch {
	case strings.TrimSpace(in.Message) == "":
		return fault.Invalid("message", "must not be empty")
	case utf8.RuneCountInString(in.Message) > MaxMessageChars:
		return fault.Invalid("message", "is more than %d characters", MaxMessageChars)
	case len(in.History) > MaxHistoryMessages:
		return fault.Invalid("history", "holds %d messages, more than %d", len(in.History), MaxHistoryMessages)
	case in.ThreadID != "" && len(in.History) > 0:
		return fault.Invalid("history", "comes from the thread when thread_id is given; send one or the other")
	case in.Temperature != nil && (*in.Temperature < 0 || *in.Temperature > 2):
		return fault.Invalid("temperature", "must be between 0 and 2")
	case in.MaxTokens < 0 || in.MaxTokens > 16384:
		return fault.Invalid("max_tokens", "must be between 1 and 16384")
	}
	if in.ThreadID != "" {
		if err := memory.ValidateID(in.ThreadID); err != nil {
			return fault.Invalid("thread_id", "%q is not a thread id: use 1-128 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", in.ThreadID)
		}
	}
	return nil
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// traceOf is the trace id of the call, for log lines.
func traceOf(ctx context.Context) string {
	if call, ok := callcontext.FromContext(ctx); ok {
		return call.TraceID
	}
	return ""
}
