package oauth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScopeRules(t *testing.T) {
	rules := DefaultScopes("memory", "vector")
	type call struct {
		family  string
		mutates bool
	}
	tests := []struct {
		name    string
		scopes  []string
		allowed []call
		refused []call
	}{
		{"no scope allows nothing", nil, nil, []call{{"memory", false}, {"memory", true}}},
		{"an unknown scope allows nothing", []string{"openid", "switchboard:career"}, nil, []call{{"career", false}}},
		{"read allows every read and no change", []string{ScopeRead}, []call{{"memory", false}, {"career", false}}, []call{{"memory", true}}},
		{"write allows everything", []string{ScopeWrite}, []call{{"memory", true}, {"career", true}, {"vector", false}}, nil},
		{"a family scope allows that family only", []string{"switchboard:memory"}, []call{{"memory", true}, {"memory", false}}, []call{{"vector", false}, {"vector", true}}},
		{"read and a family scope combine", []string{ScopeRead, "switchboard:vector"}, []call{{"memory", false}, {"vector", true}}, []call{{"memory", true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := rules.Access(tc.scopes)
			for _, c := range tc.allowed {
				if !a.Allows(c.family, c.mutates) {
					t.Errorf("%s refuses %+v", a, c)
				}
			}
			for _, c := range tc.refused {
				if a.Allows(c.family, c.mutates) {
					t.Errorf("%s allows %+v", a, c)
				}
			}
		})
	}
	if !FullAccess().Allows("anything", true) || (Access{}).Allows("memory", false) {
		t.Error("FullAccess or the zero Access is wrong")
	}
}

func TestScopeRulesNeeded(t *testing.T) {
	rules := DefaultScopes("memory")
	got := map[string]string{
		"memory write": rules.Needed("memory", true),
		"memory read":  rules.Needed("memory", false),
		"career write": rules.Needed("career", true),
		"career read":  rules.Needed("career", false),
		"nothing fits": ScopeRules{{Scope: "r", Families: []string{"memory"}}}.Needed("memory", true),
	}
	want := map[string]string{
		"memory write": "switchboard:memory", "memory read": "switchboard:memory",
		"career write": ScopeWrite, "career read": ScopeRead, "nothing fits": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
