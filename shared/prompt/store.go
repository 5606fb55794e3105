package prompt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Store keeps each tenant's prompt overrides in a [store.Table]: one item per
// tenant and prompt (pk t#<tenant>#prompt#<name>, sk "override"), holding the
// text in force and a version that every set and reset increments, written
// only if the version read is still the stored one, so that concurrent
// changes each get their own version and none is lost. It reads the table on
// every lookup (one GetItem, no cache), so an override is in force on the
// next call in every process. The tools that change overrides are audited by
// the function that serves them (lambdafn, as every mutating tool).
//
// A Store is a [Lookup]. It is safe for concurrent use.
type Store struct {
	table store.Table
	now   func() time.Time
}

var _ Lookup = (*Store)(nil)

// Options configures [NewStore]. A nil *Options uses the defaults.
type Options struct {
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
}

// NewStore returns the overrides stored in table.
func NewStore(table store.Table, opts *Options) *Store {
	s := &Store{table: table, now: time.Now}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

const (
	overrideSK = "override"
	// writeAttempts bounds the retries of a write that lost a race.
	writeAttempts = 8
)

func overridePK(t, name string) string { return tenant.Key(t) + "prompt#" + name }

// override is the stored state of one tenant's prompt.
type override struct {
	text       string
	version    int64
	overridden bool
	updatedAt  string
	updatedBy  string
}

// load returns the stored state of name for t; a prompt never overridden
// is version 0.
func (s *Store) load(ctx context.Context, t, name string) (override, error) {
	it, err := s.table.Get(ctx, overridePK(t, name), overrideSK)
	if errors.Is(err, store.ErrNotFound) {
		return override{}, nil
	}
	if err != nil {
		return override{}, fmt.Errorf("prompt: get override %s: %w", name, err)
	}
	return override{text: it.String("text"), version: it.Int("version"), overridden: it.Bool("overridden"),
		updatedAt: it.String("updated_at"), updatedBy: it.String("updated_by")}, nil
}

// Text implements the [Lookup] interface: the tenant's override of name if
// set, else its default.
func (s *Store) Text(ctx context.Context, t, name string) (string, error) {
	spec, err := SpecOf(name)
	if err != nil {
		return "", err
	}
	o, err := s.load(ctx, t, name)
	if err != nil {
		return "", err
	}
	if o.overridden {
		return o.text, nil
	}
	return spec.Text, nil
}

// Get returns the text of a prompt in force for the caller's tenant, its
// version and whether it is overridden (prompt_override_get).
func (s *Store) Get(ctx context.Context, c tenant.Caller, in GetInput) (OverrideOutput, error) {
	spec, err := SpecOf(in.Name)
	if err != nil {
		return OverrideOutput{}, err
	}
	o, err := s.load(ctx, c.Tenant, in.Name)
	if err != nil {
		return OverrideOutput{}, err
	}
	return output(spec, o), nil
}

// Set overrides a prompt for the caller's tenant (prompt_override_set). The
// text must be 1 to [MaxTextChars] characters with no control characters
// but line breaks and tabs, and keep the placeholder of every argument the
// prompt requires.
func (s *Store) Set(ctx context.Context, c tenant.Caller, in SetInput) (OverrideOutput, error) {
	spec, err := SpecOf(in.Name)
	if err != nil {
		return OverrideOutput{}, err
	}
	if err := validateText(spec, in.Text); err != nil {
		return OverrideOutput{}, err
	}
	return s.write(ctx, c, spec, true, in.Text)
}

// Reset removes the caller's tenant's override of a prompt, putting the
// default back in force (prompt_override_reset). It counts as a change: the
// version increments, whether or not an override was set.
func (s *Store) Reset(ctx context.Context, c tenant.Caller, in ResetInput) (OverrideOutput, error) {
	spec, err := SpecOf(in.Name)
	if err != nil {
		return OverrideOutput{}, err
	}
	return s.write(ctx, c, spec, false, "")
}

// write stores the next version of spec's override for c's tenant,
// retrying when another writer got there first.
func (s *Store) write(ctx context.Context, c tenant.Caller, spec Spec, overridden bool, text string) (OverrideOutput, error) {
	for range writeAttempts {
		cur, err := s.load(ctx, c.Tenant, spec.Name)
		if err != nil {
			return OverrideOutput{}, err
		}
		next := override{text: text, version: cur.version + 1, overridden: overridden,
			updatedAt: s.now().UTC().Format(time.RFC3339), updatedBy: c.Principal}
		cond := store.IfAbsent()
		if cur.version > 0 {
			cond = store.IfEquals("version", cur.version)
		}
		err = s.table.Put(ctx, store.Item{PK: overridePK(c.Tenant, spec.Name), SK: overrideSK, Attrs: store.Attrs{
			"text": next.text, "version": next.version, "overridden": next.overridden,
			"updated_at": next.updatedAt, "updated_by": next.updatedBy,
		}}, cond)
		switch {
		case err == nil:
			return output(spec, next), nil
		case errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict):
			continue
		}
		return OverrideOutput{}, fmt.Errorf("prompt: put override %s: %w", spec.Name, err)
	}
	return OverrideOutput{}, fault.Conflict(nil, "prompt %s is being changed by other calls; retry", spec.Name)
}

// Render returns a prompt as prompts/get answers it, with the caller's
// tenant's override in force and its arguments filled in (the internal tool
// prompt_get, which the gateway calls).
func (s *Store) Render(ctx context.Context, c tenant.Caller, in RenderInput) (RenderOutput, error) {
	spec, err := SpecOf(in.Name)
	if err != nil {
		return RenderOutput{}, err
	}
	text, err := s.Text(ctx, c.Tenant, in.Name)
	if err != nil {
		return RenderOutput{}, err
	}
	if text, err = Fill(in.Name, text, in.Arguments); err != nil {
		return RenderOutput{}, err
	}
	return RenderOutput{Description: spec.Description, Messages: []Message{{Role: spec.Role, Content: TextContent{Type: "text", Text: text}}}}, nil
}

func output(spec Spec, o override) OverrideOutput {
	out := OverrideOutput{Name: spec.Name, Text: spec.Text, Version: o.version, Overridden: o.overridden,
		UpdatedAt: o.updatedAt, UpdatedBy: o.updatedBy}
	if o.overridden {
		out.Text = o.text
	}
	return out
}

// validateText checks an override of spec.
func validateText(spec Spec, text string) error {
	n := utf8.RuneCountInString(text)
	switch {
	case strings.TrimSpace(text) == "":
		return fault.Invalid("text", "must not be empty; to go back to the default, call prompt_override_reset")
	case n > MaxTextChars:
		return fault.Invalid("text", "has %d characters, more than %d", n, MaxTextChars)
	case !utf8.ValidString(text):
		return fault.Invalid("text", "is not valid UTF-8")
	}
	for i, r := range text {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r') {
			return fault.Invalid("text", "has the control character %U at byte %d; only line breaks and tabs are allowed", r, i)
		}
	}
	for _, a := range spec.Arguments {
		if a.Required && !strings.Contains(text, "{"+a.Name+"}") {
			return fault.Invalid("text", "must keep the placeholder {%s}: prompt %s fills it with %s", a.Name, spec.Name, a.Description)
		}
	}
	return nil
}
