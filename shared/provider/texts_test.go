package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

func TestTextsEmbedsBoundedBatchesAndRefusesOversizedOnes(t *testing.T) {
	many := make([]string, provider.MaxEmbedTexts)
	for i := range many {
		many[i] = "text"
	}
	texts := provider.Texts{Embedder: offline.NewEmbedder(offline.DefaultDims)}
	for _, tc := range []struct {
		name      string
		in        provider.TextsInput
		wantField string // empty: embedded
	}{
		{"one text is embedded", provider.TextsInput{Texts: []string{"find tools"}, Purpose: provider.ForQuery}, ""},
		{"a full batch is embedded", provider.TextsInput{Texts: many}, ""},
		{"a text of the largest size is embedded", provider.TextsInput{Texts: []string{strings.Repeat("a", provider.MaxEmbedTextBytes)}}, ""},
		{"no text is refused", provider.TextsInput{}, "texts"},
		{"one text too many is refused", provider.TextsInput{Texts: append(many, "one more")}, "texts"},
		{"a text one byte too long is refused, by its index", provider.TextsInput{Texts: []string{"ok", strings.Repeat("a", provider.MaxEmbedTextBytes+1)}}, "texts[1]"},
		{"an empty text is refused", provider.TextsInput{Texts: []string{""}}, "texts[0]"},
		{"an unknown purpose is refused", provider.TextsInput{Texts: []string{"x"}, Purpose: "summary"}, "purpose"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := texts.Embed(context.Background(), tenant.Caller{Tenant: "acme"}, tc.in)
			if tc.wantField != "" {
				if kind, field, _ := fault.Public(err); kind != fault.KindInvalid || field != tc.wantField {
					t.Fatalf("Embed = %v, want invalid %s", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Vectors) != len(tc.in.Texts) || out.Model == "" || out.Provider == "" {
				t.Errorf("Embed = %d vectors for %d texts, model %q, provider %q", len(out.Vectors), len(tc.in.Texts), out.Model, out.Provider)
			}
		})
	}
}
