// Package settings keeps the settings of each conversation thread (seed 000's
// client settings): the tools enabled, the vector search options, the model
// options and the prompt choices, per tenant and thread_id, in a
// [store.Table]. A thread never configured has the defaults ([Defaults]).
//
//	s := settings.New(table, &settings.Options{AllowModel: allow})
//	cur, err := s.Get(ctx, tenant, threadID)              // what a chat turn or an optimizer_* tool reads
//	top := 8
//	next, err := s.Update(ctx, caller, settings.UpdateInput{ThreadID: threadID,
//		VectorSearch: &settings.VectorSearchUpdate{TopK: &top}}) // a partial update: only top_k changes
//
// Tools named optimizer_* take the thread from their thread_id argument, else
// from _meta["switchboard.dev/thread_id"], else the principal's default
// thread ([Thread]).
package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/alias"
)

// The tools a thread may enable (seed 000's tools_enabled): the catalog's
// tool groups, which the gateway holds a thread's tools to.
const (
	ToolVectorSearch = catalog.GroupVectorSearch
	ToolConnectors   = catalog.GroupConnectors
	ToolWebSearch    = catalog.GroupWebSearch
)

// ToolNames are the values tools_enabled may hold, in their canonical order.
var ToolNames = catalog.Groups()

// SystemPrompts are the prompts a thread may choose as its chat system prompt.
var SystemPrompts = []string{prompt.Basic, prompt.Tools}

// MetaThreadID is the _meta key a host may name the thread with instead of
// a thread_id argument.
const MetaThreadID = "switchboard.dev/thread_id"

// The vector search options a thread may choose: the retriever's (package
// vector's Modes, MaxTopK and AliasPattern, which a test holds these to;
// settings does not link the vector family's code).
var (
	// Modes are the search modes.
	Modes = []string{"bm25", "vector", "hybrid"}
	// AliasPattern is what a store alias matches ([alias.Pattern]).
	AliasPattern = alias.Pattern
)

// Bounds of the settings.
const (
	// MaxTopK bounds vector_search.top_k.
	MaxTopK = 50
	// MaxStores bounds vector_search.stores.
	MaxStores = 32
	// MaxTemperature bounds model.temperature (OpenAI's and Bedrock's range).
	MaxTemperature = 2.0
	// MaxTokens bounds model.max_tokens.
	MaxTokens = 32768
)

// Defaults of a thread never configured.
const (
	DefaultMode        = "hybrid"
	DefaultTopK        = 5
	DefaultTemperature = 0.2
	DefaultMaxTokens   = 1024
)

// Settings are one thread's settings, as settings_get returns them.
type Settings struct {
	ThreadID     string       `json:"thread_id"`
	ToolsEnabled []string     `json:"tools_enabled" jsonschema:"the tools the thread's chat may use: Vector Search, Connectors, Web Search"`
	VectorSearch VectorSearch `json:"vector_search"`
	Model        Model        `json:"model"`
	Prompts      Prompts      `json:"prompts"`
	Version      int64        `json:"version" jsonschema:"incremented by every update; 0 for a thread never configured (the defaults)"`
	UpdatedAt    string       `json:"updated_at" jsonschema:"when the last update happened (RFC 3339); empty for a thread never configured"`
}

// VectorSearch are a thread's vector search options.
type VectorSearch struct {
	Stores   []string `json:"stores" jsonschema:"aliases of the stores to search; empty: the retriever picks them"`
	Mode     string   `json:"mode" jsonschema:"bm25, vector or hybrid"`
	TopK     int      `json:"top_k" jsonschema:"how many documents a search returns"`
	Rephrase bool     `json:"rephrase" jsonschema:"rephrase a follow-up question from the conversation before searching"`
	Grade    bool     `json:"grade" jsonschema:"grade the retrieved documents and keep them only if relevant"`
}

// Model are a thread's model options.
type Model struct {
	Generator   string  `json:"generator" jsonschema:"the generator model; empty: the configured one"`
	Temperature float64 `json:"temperature"`
	MaxTokens   int     `json:"max_tokens"`
}

// Prompts are a thread's prompt choices.
type Prompts struct {
	System string `json:"system" jsonschema:"the chat system prompt: optimizer_basic-default or optimizer_tools-default"`
}

// Defaults returns the settings of a thread never configured.
func Defaults(threadID string) Settings {
	return Settings{
		ThreadID:     threadID,
		ToolsEnabled: append([]string(nil), ToolNames...),
		VectorSearch: VectorSearch{Stores: []string{}, Mode: DefaultMode, TopK: DefaultTopK, Rephrase: true, Grade: true},
		Model:        Model{Temperature: DefaultTemperature, MaxTokens: DefaultMaxTokens},
		Prompts:      Prompts{System: prompt.Basic},
	}
}

// Enabled reports whether s enables the tool named name (one of [ToolNames]).
func (s Settings) Enabled(name string) bool {
	for _, t := range s.ToolsEnabled {
		if t == name {
			return true
		}
	}
	return false
}

// DefaultThread returns the default thread of a principal: the thread an
// optimizer_* tool reads when a call names none. It is derived from the
// principal, so each principal of a tenant has its own.
func DefaultThread(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return "default-" + hex.EncodeToString(sum[:8])
}

// Thread returns the thread a call of an optimizer_* tool reads: its
// thread_id argument arg, else the string at meta[[MetaThreadID]], else c's
// default thread. A thread id given but malformed is an invalid argument
// error naming where it came from.
func Thread(c tenant.Caller, arg string, meta map[string]any) (string, error) {
	if arg != "" {
		return arg, tenant.ValidateThread("thread_id", arg)
	}
	if v, ok := meta[MetaThreadID]; ok {
		id, _ := v.(string)
		return id, tenant.ValidateThread("_meta."+MetaThreadID, id)
	}
	return DefaultThread(c.Principal), nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func quoted(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = `"` + v + `"`
	}
	return strings.Join(q, ", ")
}
