// Package profile says which tools a host may see and call (and which
// resources and prompts, which the gateway holds by their groups and names
// as tools): the tool groups it enables (catalog.Groups, seed 000's
// tools_enabled) and lists of tool names allowed and denied. An API key carries one (package apikey); a
// thread's settings narrow it to the groups the thread enables; the gateway
// lists, calls and searches only what the result allows.
//
//	p := profile.Profile{Groups: []string{catalog.GroupVectorSearch}, Deny: []string{"memory_delete"}}
//	p.Allows("optimizer_vs-retriever", catalog.GroupVectorSearch) // true
//	p.Allows("github__search", catalog.GroupConnectors)            // false: Connectors is not enabled
//	p.Narrowed([]string{}).Allows("optimizer_vs-storage", catalog.GroupVectorSearch) // false
//
// The zero Profile allows every tool.
package profile

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
)

// GroupScopePrefix begins the OAuth scope that enables one tool group,
// switchboard:group:<group in lower case, spaces as hyphens>
// (switchboard:group:vector-search). A token (or an API key created with
// scopes) holding such scopes enables only those groups; it needs the
// read, write or family scopes to call anything at all.
const GroupScopePrefix = "switchboard:group:"

// GroupScope returns the OAuth scope that enables group.
func GroupScope(group string) string {
	return GroupScopePrefix + strings.ReplaceAll(strings.ToLower(group), " ", "-")
}

// GroupScopes returns the scope of each of catalog.Groups.
func GroupScopes() []string {
	out := make([]string, 0, len(catalog.Groups()))
	for _, g := range catalog.Groups() {
		out = append(out, GroupScope(g))
	}
	return out
}

// FromScopes returns the profile scopes give: the groups whose scopes they
// hold, and whether they hold any (if not, they enable every group). An
// unknown group scope enables nothing.
func FromScopes(scopes []string) (Profile, bool) {
	p, named := Profile{Groups: []string{}}, false
	for _, s := range scopes {
		if !strings.HasPrefix(s, GroupScopePrefix) {
			continue
		}
		named = true
		for _, g := range catalog.Groups() {
			if GroupScope(g) == s && !slices.Contains(p.Groups, g) {
				p.Groups = append(p.Groups, g)
			}
		}
	}
	if !named {
		return Profile{}, false
	}
	return p, true
}

// MaxPatterns bounds each of a profile's lists of names, so that a stored
// profile stays small.
const MaxPatterns = 64

// maxPattern is the longest tool name MCP allows, and so the longest pattern.
const maxPattern = 128

// Profile is the set of tools a host may see and call.
type Profile struct {
	// Groups, if not nil, are the only groups whose tools are enabled;
	// empty enables none. A tool in no group is not affected.
	Groups []string `json:"groups"`
	// Allow, if not empty, holds the only names enabled: a tool's name, or
	// a pattern where * stands for any run of characters ("github__*").
	Allow []string `json:"allow,omitempty"`
	// Deny holds names, or patterns, never enabled, whatever else allows them.
	Deny []string `json:"deny,omitempty"`
}

// IsZero reports whether p allows every tool.
func (p Profile) IsZero() bool { return p.Groups == nil && len(p.Allow) == 0 && len(p.Deny) == 0 }

// Allows reports whether p enables the tool named name, in group ("" for
// none).
func (p Profile) Allows(name, group string) bool {
	if p.Groups != nil && group != "" && !slices.Contains(p.Groups, group) {
		return false
	}
	if len(p.Allow) > 0 && !matches(p.Allow, name) {
		return false
	}
	return !matches(p.Deny, name)
}

// EnablesGroup reports whether p enables the tools of group.
func (p Profile) EnablesGroup(group string) bool {
	return p.Groups == nil || group == "" || slices.Contains(p.Groups, group)
}

// Narrowed returns p enabling only those of its groups that groups holds too
// (a thread's tools_enabled).
func (p Profile) Narrowed(groups []string) Profile {
	out := p
	out.Groups = []string{}
	for _, g := range groups {
		if p.EnablesGroup(g) && !slices.Contains(out.Groups, g) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}

// Validate checks p: groups among catalog.Groups, names and patterns of the
// characters MCP allows in a tool's name (and *), each list at most
// [MaxPatterns] long. Errors name the field.
func (p Profile) Validate() error {
	if len(p.Groups) > len(catalog.Groups()) {
		return fault.Invalid("profile.groups", "%d groups: there are %d (%s)", len(p.Groups), len(catalog.Groups()), strings.Join(catalog.Groups(), ", "))
	}
	for _, g := range p.Groups {
		if !slices.Contains(catalog.Groups(), g) {
			return fault.Invalid("profile.groups", "%q is not a tool group; the groups are %s", g, strings.Join(catalog.Groups(), ", "))
		}
	}
	for _, f := range []struct {
		field string
		list  []string
	}{{"profile.allow", p.Allow}, {"profile.deny", p.Deny}} {
		field, list := f.field, f.list
		if len(list) > MaxPatterns {
			return fault.Invalid(field, "%d names: at most %d", len(list), MaxPatterns)
		}
		for _, pat := range list {
			if err := checkPattern(pat); err != nil {
				return fault.Invalid(field, "%v", err)
			}
		}
	}
	return nil
}

// checkPattern accepts a tool name or a pattern of one: 1 to 128 of the
// characters MCP allows in tool names (letters, digits, _ - .), and *.
func checkPattern(pat string) error {
	if pat == "" || len(pat) > maxPattern {
		return fmt.Errorf("%q: a name or pattern has 1 to %d characters", pat, maxPattern)
	}
	for _, c := range pat {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("_-.*", c)) {
			return fmt.Errorf("%q: %q is not allowed; tool names hold letters, digits, _ - and ., and * stands for any run of them", pat, c)
		}
	}
	return nil
}

// matches reports whether name matches one of patterns. Validated patterns
// hold no character path.Match treats specially but *.
func matches(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// Parse returns the profile of the command-line lists: groups, allow and
// deny each comma-separated. groupsSet says whether groups was given at
// all (an empty list then enables no group).
func Parse(groups string, groupsSet bool, allow, deny string) (Profile, error) {
	var p Profile
	if groupsSet {
		p.Groups = split(groups)
	}
	p.Allow, p.Deny = split(allow), split(deny)
	return p, p.Validate()
}

// split returns the trimmed, non-empty fields of a comma-separated list,
// never nil.
func split(s string) []string {
	out := []string{}
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
