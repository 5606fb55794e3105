package vector_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/vector"
)

func TestAModelsChoiceOfStoresIsReadStrictly(t *testing.T) {
	candidates := []string{"dental", "cooking", "travel", "garden"}
	tests := []struct {
		name             string
		reply            string
		chosen, ignored  []string
		wantErrSubstring string
	}{
		{"a JSON array of aliases", `["cooking", "dental"]`, []string{"cooking", "dental"}, nil, ""},
		{"an array inside an object, a fence or prose", "Sure:\n```json\n{\"stores\": [\"travel\"]}\n```", []string{"travel"}, nil, ""},
		{"names one per line, with bullets and numbers", "1. dental\n- `cooking`\n* \"garden\"", []string{"dental", "cooking", "garden"}, nil, ""},
		{"names separated by commas, in any case", "Dental, TRAVEL.", []string{"dental", "travel"}, nil, ""},
		{"unknown names are ignored", `["recipes", "dental", "../etc"]`, []string{"dental"}, []string{"recipes", "../etc"}, ""},
		{"repeats are dropped", `["dental", "DENTAL", "dental"]`, []string{"dental"}, nil, ""},
		{"at most three are kept, in the reply's order", `["garden", "travel", "cooking", "dental"]`, []string{"garden", "travel", "cooking"}, nil, ""},
		{"an empty array chooses nothing", `[]`, nil, nil, "chose no store"},
		{"an array of anything but strings is malformed", `["dental", 3]`, nil, nil, "not a JSON array"},
		{"an unterminated array is malformed", `["dental"`, nil, nil, "not a JSON array"},
		{"prose naming no store on its own is no choice", "I would search the dental store first.", nil, []string{"i would search the dental store first"}, "names no store"},
		{"an empty reply chooses nothing", "  ", nil, nil, "chose no store"},
		{"a reply past the bound is refused unread", `["dental"` + strings.Repeat(`, "x"`, 1000) + `]`, nil, nil, "more than 4096"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chosen, ignored, err := vector.ParseSelection(tc.reply, candidates)
			if tc.wantErrSubstring != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSubstring) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErrSubstring)
				}
			} else if err != nil {
				t.Fatalf("error %v", err)
			}
			if diff := cmp.Diff(tc.chosen, chosen); diff != "" {
				t.Errorf("chosen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ignored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
		})
	}
}
