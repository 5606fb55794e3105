package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/alias"
)

// Store keeps thread settings in a [store.Table]: one item per tenant and
// thread (pk t#<tenant>#settings#<thread>, sk "settings") holding the
// settings as JSON and a version. An update reads the item, applies its
// changes, and writes only if the version is still the one read, retrying
// otherwise, so concurrent updates of different fields all land. It is safe
// for concurrent use.
type Store struct {
	table      store.Table
	now        func() time.Time
	allowModel func(model string) error
}

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// AllowModel checks a generator model a thread asks for against the
	// configuration's allow-list, returning an error that says what is
	// allowed. If nil, no model may be named: only the configured one ("").
	AllowModel func(model string) error
}

// New returns the settings stored in table.
func New(table store.Table, opts *Options) *Store {
	s := &Store{table: table, now: time.Now}
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		s.allowModel = opts.AllowModel
	}
	return s
}

const (
	settingsSK    = "settings"
	writeAttempts = 8
)

func settingsPK(t, thread string) string { return tenant.Key(t) + "settings#" + thread }

// Get returns the settings of thread threadID of tenant t: the defaults if
// none were ever stored.
func (s *Store) Get(ctx context.Context, t, threadID string) (Settings, error) {
	if err := tenant.ValidateThread("thread_id", threadID); err != nil {
		return Settings{}, err
	}
	return s.load(ctx, t, threadID)
}

func (s *Store) load(ctx context.Context, t, threadID string) (Settings, error) {
	cur := Defaults(threadID)
	it, err := s.table.Get(ctx, settingsPK(t, threadID), settingsSK)
	if errors.Is(err, store.ErrNotFound) {
		return cur, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("settings: get %s: %w", threadID, err)
	}
	// Decoded over the defaults, so that an option added later reads as its default.
	if err := json.Unmarshal([]byte(it.String("doc")), &cur); err != nil {
		return Settings{}, fmt.Errorf("settings: decode %s: %w", threadID, err)
	}
	if cur.VectorSearch.Stores == nil {
		cur.VectorSearch.Stores = []string{}
	}
	cur.ThreadID, cur.Version, cur.UpdatedAt = threadID, it.Int("version"), it.String("updated_at")
	return cur, nil
}

// GetInput is the input of settings_get.
type GetInput struct {
	ThreadID string `json:"thread_id,omitempty" jsonschema:"the thread; omit for your default thread"`
}

// Current returns the settings of the caller's thread (settings_get).
func (s *Store) Current(ctx context.Context, c tenant.Caller, in GetInput) (Settings, error) {
	thread, err := Thread(c, in.ThreadID, nil)
	if err != nil {
		return Settings{}, err
	}
	return s.load(ctx, c.Tenant, thread)
}

// UpdateInput is the input of settings_update: the thread and the options to
// change; an option left out keeps its value.
type UpdateInput struct {
	ThreadID     string              `json:"thread_id,omitempty" jsonschema:"the thread; omit for your default thread"`
	ToolsEnabled *[]string           `json:"tools_enabled,omitempty" jsonschema:"the tools the thread's chat may use, replacing the list: Vector Search, Connectors, Web Search"`
	VectorSearch *VectorSearchUpdate `json:"vector_search,omitempty"`
	Model        *ModelUpdate        `json:"model,omitempty"`
	Prompts      *PromptsUpdate      `json:"prompts,omitempty"`
	// Version, if set, makes the update apply only to that version of the
	// settings (read, modify, write without losing another's change).
	Version int64 `json:"version,omitempty" jsonschema:"if set, update only if the settings are still at this version, else fail with a conflict"`
}

// VectorSearchUpdate changes vector search options.
type VectorSearchUpdate struct {
	Stores   *[]string `json:"stores,omitempty" jsonschema:"aliases of the stores to search, replacing the list; [] lets the retriever pick"`
	Mode     *string   `json:"mode,omitempty" jsonschema:"bm25, vector or hybrid"`
	TopK     *int      `json:"top_k,omitempty"`
	Rephrase *bool     `json:"rephrase,omitempty"`
	Grade    *bool     `json:"grade,omitempty"`
}

// ModelUpdate changes model options.
type ModelUpdate struct {
	Generator   *string  `json:"generator,omitempty" jsonschema:"a generator model the server allows; empty for the configured one"`
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   *int     `json:"max_tokens,omitempty"`
}

// PromptsUpdate changes prompt choices.
type PromptsUpdate struct {
	System *string `json:"system,omitempty" jsonschema:"optimizer_basic-default or optimizer_tools-default"`
}

// Update applies in to the caller's thread's settings (settings_update) and
// returns them as stored. Invalid input changes nothing and names the field.
func (s *Store) Update(ctx context.Context, c tenant.Caller, in UpdateInput) (Settings, error) {
	thread, err := Thread(c, in.ThreadID, nil)
	if err != nil {
		return Settings{}, err
	}
	if in.Version < 0 {
		return Settings{}, fault.Invalid("version", "must not be negative")
	}
	// Checked once against the defaults, before any read: the checks do not
	// depend on what is stored.
	if _, err := s.apply(Defaults(thread), in); err != nil {
		return Settings{}, err
	}
	for range writeAttempts {
		cur, err := s.load(ctx, c.Tenant, thread)
		if err != nil {
			return Settings{}, err
		}
		if in.Version != 0 && in.Version != cur.Version {
			return Settings{}, fault.Conflict(nil, "the settings of thread %s are at version %d, not %d: read them again", thread, cur.Version, in.Version)
		}
		next, err := s.apply(cur, in)
		if err != nil {
			return Settings{}, err
		}
		next.Version, next.UpdatedAt = cur.Version+1, s.now().UTC().Format(time.RFC3339)
		doc, err := json.Marshal(next)
		if err != nil {
			return Settings{}, fmt.Errorf("settings: encode %s: %w", thread, err)
		}
		cond := store.IfAbsent()
		if cur.Version > 0 {
			cond = store.IfEquals("version", cur.Version)
		}
		err = s.table.Put(ctx, store.Item{PK: settingsPK(c.Tenant, thread), SK: settingsSK, Attrs: store.Attrs{
			"doc": string(doc), "version": next.Version, "updated_at": next.UpdatedAt,
		}}, cond)
		switch {
		case err == nil:
			return next, nil
		case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict):
			continue
		}
		return Settings{}, fmt.Errorf("settings: put %s: %w", thread, err)
	}
	return Settings{}, fault.Conflict(nil, "the settings of thread %s are being changed by other calls; retry", thread)
}

// apply returns cur with in's changes, checking each.
func (s *Store) apply(cur Settings, in UpdateInput) (Settings, error) {
	next := cur
	next.ToolsEnabled = slices.Clone(cur.ToolsEnabled)
	next.VectorSearch.Stores = slices.Clone(cur.VectorSearch.Stores)
	if in.ToolsEnabled != nil {
		tools, err := checkTools(*in.ToolsEnabled)
		if err != nil {
			return Settings{}, err
		}
		next.ToolsEnabled = tools
	}
	if v := in.VectorSearch; v != nil {
		if v.Stores != nil {
			stores, err := checkStores(*v.Stores)
			if err != nil {
				return Settings{}, err
			}
			next.VectorSearch.Stores = stores
		}
		if v.Mode != nil {
			if !slices.Contains(Modes, *v.Mode) {
				return Settings{}, fault.Invalid("vector_search.mode", "%q is not a mode: use %s", clip(*v.Mode, 40), quoted(Modes))
			}
			next.VectorSearch.Mode = *v.Mode
		}
		if v.TopK != nil {
			if *v.TopK < 1 || *v.TopK > MaxTopK {
				return Settings{}, fault.Invalid("vector_search.top_k", "%d is outside 1..%d", *v.TopK, MaxTopK)
			}
			next.VectorSearch.TopK = *v.TopK
		}
		if v.Rephrase != nil {
			next.VectorSearch.Rephrase = *v.Rephrase
		}
		if v.Grade != nil {
			next.VectorSearch.Grade = *v.Grade
		}
	}
	if m := in.Model; m != nil {
		if m.Generator != nil {
			if err := s.checkModel(*m.Generator); err != nil {
				return Settings{}, err
			}
			next.Model.Generator = *m.Generator
		}
		if m.Temperature != nil {
			t := *m.Temperature
			if math.IsNaN(t) || t < 0 || t > MaxTemperature {
				return Settings{}, fault.Invalid("model.temperature", "%v is outside 0..%v", t, MaxTemperature)
			}
			next.Model.Temperature = t
		}
		if m.MaxTokens != nil {
			if *m.MaxTokens < 1 || *m.MaxTokens > MaxTokens {
				return Settings{}, fault.Invalid("model.max_tokens", "%d is outside 1..%d", *m.MaxTokens, MaxTokens)
			}
			next.Model.MaxTokens = *m.MaxTokens
		}
	}
	if p := in.Prompts; p != nil && p.System != nil {
		if !slices.Contains(SystemPrompts, *p.System) {
			return Settings{}, fault.Invalid("prompts.system", "%q is not a system prompt: use %s", clip(*p.System, 80), quoted(SystemPrompts))
		}
		next.Prompts.System = *p.System
	}
	return next, nil
}

func checkTools(tools []string) ([]string, error) {
	seen := map[string]bool{}
	for i, t := range tools {
		field := fmt.Sprintf("tools_enabled[%d]", i)
		switch {
		case !slices.Contains(ToolNames, t):
			return nil, fault.Invalid(field, "%q is not a tool: use %s", clip(t, 40), quoted(ToolNames))
		case seen[t]:
			return nil, fault.Invalid(field, "%q is listed twice", t)
		}
		seen[t] = true
	}
	// In the canonical order, so that equal sets read the same.
	out := []string{}
	for _, t := range ToolNames {
		if seen[t] {
			out = append(out, t)
		}
	}
	return out, nil
}

func checkStores(stores []string) ([]string, error) {
	if len(stores) > MaxStores {
		return nil, fault.Invalid("vector_search.stores", "has %d stores, more than %d", len(stores), MaxStores)
	}
	seen := map[string]bool{}
	for i, a := range stores {
		field := fmt.Sprintf("vector_search.stores[%d]", i)
		if !alias.Valid(a) {
			return nil, fault.Invalid(field, "%q is not a store alias: use 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit", clip(a, 80))
		}
		if seen[a] {
			return nil, fault.Invalid(field, "%q is listed twice", a)
		}
		seen[a] = true
	}
	return slices.Clone(stores), nil
}

func (s *Store) checkModel(model string) error {
	if model == "" {
		return nil
	}
	if s.allowModel == nil {
		return fault.Invalid("model.generator", "%q is not allowed: this server allows only its configured model; leave generator empty", clip(model, 80))
	}
	if err := s.allowModel(model); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return fault.Invalid("model.generator", "%s", fe.Message)
		}
		return fault.Invalid("model.generator", "%q is not allowed: %v", clip(model, 80), err)
	}
	return nil
}
