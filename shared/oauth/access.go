package oauth

import (
	"slices"
	"strings"
)

// AllFamilies stands for every family in a [ScopeRule].
const AllFamilies = "*"

// Scope names of [DefaultScopes].
const (
	// ScopeRead allows every read-only tool, resource and prompt.
	ScopeRead = "switchboard:read"
	// ScopeWrite allows every tool, mutating or not.
	ScopeWrite = "switchboard:write"
	// ScopeFamilyPrefix begins the scope of one family, switchboard:<family>,
	// which allows that family's tools, mutating or not.
	ScopeFamilyPrefix = "switchboard:"
)

// ScopeRule is what one OAuth scope allows: reading, or reading and
// changing, in some families (or all of them, [AllFamilies]).
type ScopeRule struct {
	Scope    string   `json:"scope"`
	Families []string `json:"families"`
	Write    bool     `json:"write,omitempty"`
}

// ScopeRules maps scopes to what a caller may do; it is data, so an operator
// can replace it. A scope no rule names allows nothing.
type ScopeRules []ScopeRule

// DefaultScopes returns the rules of [ScopeRead], [ScopeWrite] and one
// switchboard:<family> scope for each of families.
func DefaultScopes(families ...string) ScopeRules {
	rules := ScopeRules{
		{Scope: ScopeRead, Families: []string{AllFamilies}},
		{Scope: ScopeWrite, Families: []string{AllFamilies}, Write: true},
	}
	for _, f := range families {
		rules = append(rules, ScopeRule{Scope: ScopeFamilyPrefix + f, Families: []string{f}, Write: true})
	}
	return rules
}

// Supported returns the scopes the rules name, for metadata documents.
func (rs ScopeRules) Supported() []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Scope)
	}
	return out
}

// Access returns what a caller holding scopes may do.
func (rs ScopeRules) Access(scopes []string) Access {
	var a Access
	for _, r := range rs {
		if !slices.Contains(scopes, r.Scope) {
			continue
		}
		a.read = union(a.read, r.Families)
		if r.Write {
			a.write = union(a.write, r.Families)
		}
	}
	return a
}

// Needed returns the scope a caller should ask for to call a tool of family
// (mutates says whether it changes anything): the narrowest rule that allows
// it, a family's own before one over all families. It returns "" when no rule
// does.
func (rs ScopeRules) Needed(family string, mutates bool) string {
	best, bestWidth := "", 0
	for _, r := range rs {
		if mutates && !r.Write {
			continue
		}
		if !slices.Contains(r.Families, family) && !slices.Contains(r.Families, AllFamilies) {
			continue
		}
		width := len(r.Families)
		if slices.Contains(r.Families, AllFamilies) {
			width = 1 << 30
		}
		if !r.Write {
			width-- // read-only is narrower than read-write over the same families
		}
		if best == "" || width < bestWidth {
			best, bestWidth = r.Scope, width
		}
	}
	return best
}

// Access is what a caller may do: which families it may read (call tools
// that change nothing, read resources, get prompts) and which it may change.
// The zero Access allows nothing; [FullAccess] allows everything.
type Access struct {
	read, write []string // families, or [AllFamilies]
}

// FullAccess allows every tool of every family: what an API key without
// scopes, or the anonymous local caller, may do.
func FullAccess() Access {
	return Access{read: []string{AllFamilies}, write: []string{AllFamilies}}
}

// Allows reports whether a tool of family may be called; mutates says
// whether it changes anything.
func (a Access) Allows(family string, mutates bool) bool {
	set := a.read
	if mutates {
		set = a.write
	}
	return slices.Contains(set, AllFamilies) || slices.Contains(set, family)
}

// String describes a, for logs: "read: memory, vector; write: memory".
func (a Access) String() string {
	return "read: " + list(a.read) + "; write: " + list(a.write)
}

func list(fams []string) string {
	if len(fams) == 0 {
		return "none"
	}
	if slices.Contains(fams, AllFamilies) {
		return "all"
	}
	return strings.Join(fams, ", ")
}

// union returns a with b's elements it lacks added, sorted.
func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	slices.Sort(a)
	return a
}
