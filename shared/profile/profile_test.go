package profile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/profile"
)

func TestAllows(t *testing.T) {
	vs, conn, web := catalog.GroupVectorSearch, catalog.GroupConnectors, catalog.GroupWebSearch
	tests := []struct {
		name    string
		p       profile.Profile
		tool    string
		group   string
		allowed bool
	}{
		{"the zero profile allows everything", profile.Profile{}, "github__search", conn, true},
		{"a group not enabled hides its tools", profile.Profile{Groups: []string{vs}}, "github__search", conn, false},
		{"an enabled group shows its tools", profile.Profile{Groups: []string{vs, conn}}, "github__search", conn, true},
		{"no groups enabled hides every grouped tool", profile.Profile{Groups: []string{}}, "optimizer_vs-retriever", vs, false},
		{"groups leave ungrouped tools alone", profile.Profile{Groups: []string{}}, "memory_get_all_messages", "", true},
		{"an allow list admits only what it names", profile.Profile{Allow: []string{"memory_*"}}, "rag_basic", "", false},
		{"an allow pattern matches", profile.Profile{Allow: []string{"memory_*"}}, "memory_add_message", "", true},
		{"deny wins over allow", profile.Profile{Allow: []string{"memory_*"}, Deny: []string{"memory_delete"}}, "memory_delete", "", false},
		{"deny patterns match proxied names", profile.Profile{Deny: []string{"github__*"}}, "github__create_issue", conn, false},
		{"allow does not lift a disabled group", profile.Profile{Groups: []string{vs}, Allow: []string{"duckduckgo_search"}}, "duckduckgo_search", web, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Allows(tt.tool, tt.group); got != tt.allowed {
				t.Errorf("Allows(%q, %q) = %v, want %v", tt.tool, tt.group, got, tt.allowed)
			}
		})
	}
}

func TestNarrowedKeepsOnlyGroupsBothEnable(t *testing.T) {
	vs, conn, web := catalog.GroupVectorSearch, catalog.GroupConnectors, catalog.GroupWebSearch
	key := profile.Profile{Groups: []string{vs, conn}, Deny: []string{"memory_delete"}}
	p := key.Narrowed([]string{conn, web, conn})
	if !p.Allows("github__search", conn) || p.Allows("optimizer_vs-retriever", vs) || p.Allows("web_search", web) || p.Allows("memory_delete", "") {
		t.Errorf("narrowed profile %+v: want Connectors alone, memory_delete still denied", p)
	}
	if all := (profile.Profile{}).Narrowed(nil); all.Allows("web_search", web) || !all.Allows("memory_add_message", "") {
		t.Errorf("a thread enabling nothing: %+v", all)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	tests := []struct {
		name  string
		p     profile.Profile
		field string
	}{
		{"an unknown group", profile.Profile{Groups: []string{"NL2SQL"}}, "profile.groups"},
		{"a pattern with a space", profile.Profile{Allow: []string{"memory *"}}, "profile.allow"},
		{"an empty name", profile.Profile{Deny: []string{""}}, "profile.deny"},
		{"a name too long", profile.Profile{Deny: []string{strings.Repeat("a", 129)}}, "profile.deny"},
		{"too many names", profile.Profile{Allow: make([]string, profile.MaxPatterns+1)}, "profile.allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	ok := profile.Profile{Groups: catalog.Groups(), Allow: []string{"memory_*", "github__search"}, Deny: []string{"memory_delete"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid profile: %v", err)
	}
}

func TestParseTellsNoGroupsFromGroupsNotGiven(t *testing.T) {
	none, err := profile.Parse("", true, "", "")
	if err != nil || none.Groups == nil || len(none.Groups) != 0 {
		t.Errorf("--groups '': %+v, %v; want no group enabled", none, err)
	}
	all, err := profile.Parse("", false, "memory_*, rag_basic", "")
	if err != nil || all.Groups != nil || len(all.Allow) != 2 || all.Allow[1] != "rag_basic" {
		t.Errorf("no --groups: %+v, %v", all, err)
	}
	if _, err := profile.Parse("Vector Search, Chat", true, "", ""); err == nil {
		t.Error("an unknown group was accepted")
	}
}

func TestFromScopesEnablesTheGroupsNamed(t *testing.T) {
	tests := []struct {
		name    string
		scopes  []string
		limited bool
		groups  []string
	}{
		{"no group scope limits nothing", []string{"switchboard:read", "switchboard:memory"}, false, nil},
		{"a group scope enables its group alone", []string{"switchboard:write", "switchboard:group:vector-search"}, true, []string{catalog.GroupVectorSearch}},
		{"two group scopes", []string{"switchboard:group:web-search", "switchboard:group:connectors"}, true, []string{catalog.GroupWebSearch, catalog.GroupConnectors}},
		{"an unknown group scope enables none", []string{"switchboard:group:nl2sql"}, true, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, limited := profile.FromScopes(tt.scopes)
			if limited != tt.limited || !slices.Equal(p.Groups, tt.groups) || (tt.groups == nil) != (p.Groups == nil) {
				t.Errorf("FromScopes = %+v, %v; want groups %q, %v", p, limited, tt.groups, tt.limited)
			}
		})
	}
	if got := profile.GroupScope(catalog.GroupVectorSearch); got != "switchboard:group:vector-search" {
		t.Errorf("GroupScope = %q", got)
	}
}
