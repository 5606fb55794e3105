package prompt_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// caller returns a caller of a tenant of its own, so that runs against a
// shared DynamoDB Local never see each other's items.
func caller(t *testing.T) tenant.Caller {
	var b [6]byte
	rand.Read(b[:])
	return tenant.Caller{Tenant: "t-" + hex.EncodeToString(b[:]), Principal: "alice"}
}

func defaultText(t *testing.T, name string) string {
	t.Helper()
	s, err := prompt.SpecOf(name)
	if err != nil {
		t.Fatal(err)
	}
	return s.Text
}

func TestSeedPromptsAreAllDefined(t *testing.T) {
	want := []string{"optimizer_basic-default", "optimizer_tools-default", "optimizer_context-default",
		"optimizer_vs-table-selection", "optimizer_vs-grade", "optimizer_vs-rephrase"}
	for _, name := range want {
		s, err := prompt.SpecOf(name)
		if err != nil || strings.TrimSpace(s.Text) == "" || s.Title == "" || (s.Role != "user" && s.Role != "assistant") {
			t.Errorf("%s: %+v, %v", name, s, err)
		}
		for _, a := range s.Arguments {
			if !strings.Contains(s.Text, "{"+a.Name+"}") {
				t.Errorf("%s: the default text lacks the placeholder of its argument %s", name, a.Name)
			}
		}
	}
}

func TestFillReplacesOnlyTheArgumentsPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name, prompt, text string
		args               map[string]string
		want, wantField    string
	}{
		{"arguments are filled in", prompt.Rephrase, "{conversation}Q: {question}", map[string]string{"question": "why?", "conversation": "C\n"}, "C\nQ: why?", ""},
		{"an optional argument left out is empty", prompt.Rephrase, "{conversation}Q: {question}", map[string]string{"question": "why?"}, "Q: why?", ""},
		{"other braces stay", prompt.Rephrase, `{"a": 1} {other} {question}`, map[string]string{"question": "q"}, `{"a": 1} {other} q`, ""},
		{"nested, unclosed, empty and capitalised braces stay", prompt.Rephrase, "{{question}} {question {} {Question} {question}}{", map[string]string{"question": "q"}, "{q} {question {} {Question} q}{", ""},
		{"a value holding a placeholder is not filled in turn", prompt.Rephrase, "{question} {conversation}", map[string]string{"question": "{conversation}", "conversation": "x"}, "{conversation} x", ""},
		{"a missing required argument is refused", prompt.Rephrase, "{question}", map[string]string{}, "", "arguments.question"},
		{"an unknown argument is refused", prompt.Grade, "text", map[string]string{"x": "1"}, "", "arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prompt.Fill(tc.prompt, tc.text, tc.args)
			if tc.wantField != "" {
				if fieldOf(err) != tc.wantField {
					t.Fatalf("error %v, want one naming %s", err, tc.wantField)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestUnknownPromptIsAnErrorNamingIt(t *testing.T) {
	_, err := prompt.Defaults.Text(context.Background(), "acme", "optimizer_nope")
	if fault.KindOf(err) != fault.KindNotFound || !strings.Contains(err.Error(), "optimizer_nope") {
		t.Errorf("got %v, want not_found naming optimizer_nope", err)
	}
}

func TestOverrides(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		ctx := context.Background()
		s := prompt.NewStore(tbl, nil)

		t.Run("an override is in force on the next lookup, and a reset restores the default", func(t *testing.T) {
			c := caller(t)
			got, err := s.Get(ctx, c, prompt.GetInput{Name: prompt.Grade})
			if err != nil || got.Overridden || got.Version != 0 || got.Text != defaultText(t, prompt.Grade) {
				t.Fatalf("before: %+v, %v", got, err)
			}
			set, err := s.Set(ctx, c, prompt.SetInput{Name: prompt.Grade, Text: "Say yes or no."})
			if err != nil {
				t.Fatal(err)
			}
			if want := (prompt.OverrideOutput{Name: prompt.Grade, Text: "Say yes or no.", Version: 1, Overridden: true, UpdatedBy: "alice"}); !cmp.Equal(want, set, ignoreTime) {
				t.Errorf("set: %s", cmp.Diff(want, set, ignoreTime))
			}
			if text, err := s.Text(ctx, c.Tenant, prompt.Grade); err != nil || text != "Say yes or no." {
				t.Errorf("lookup after set: %q, %v", text, err)
			}
			// A second store (another process) sees it too: nothing is cached.
			if text, _ := prompt.NewStore(tbl, nil).Text(ctx, c.Tenant, prompt.Grade); text != "Say yes or no." {
				t.Errorf("another store reads %q", text)
			}
			reset, err := s.Reset(ctx, c, prompt.ResetInput{Name: prompt.Grade})
			if err != nil || reset.Overridden || reset.Version != 2 || reset.Text != defaultText(t, prompt.Grade) {
				t.Errorf("reset: %+v, %v", reset, err)
			}
			if text, _ := s.Text(ctx, c.Tenant, prompt.Grade); text != defaultText(t, prompt.Grade) {
				t.Errorf("lookup after reset: %q", text)
			}
		})

		t.Run("one tenant's override is not another's", func(t *testing.T) {
			a, b := caller(t), caller(t)
			if _, err := s.Set(ctx, a, prompt.SetInput{Name: prompt.Basic, Text: "Only for a."}); err != nil {
				t.Fatal(err)
			}
			if text, _ := s.Text(ctx, b.Tenant, prompt.Basic); text != defaultText(t, prompt.Basic) {
				t.Errorf("tenant b reads %q", text)
			}
			got, _ := s.Get(ctx, b, prompt.GetInput{Name: prompt.Basic})
			if got.Overridden || got.Version != 0 {
				t.Errorf("tenant b sees %+v", got)
			}
		})

		t.Run("bad overrides are refused and change nothing", func(t *testing.T) {
			c := caller(t)
			for _, tc := range []struct {
				name      string
				in        prompt.SetInput
				wantField string
			}{
				{"an unknown prompt", prompt.SetInput{Name: "optimizer_unknown", Text: "x"}, ""},
				{"an empty text", prompt.SetInput{Name: prompt.Grade, Text: " \n\t"}, "text"},
				{"a text too long", prompt.SetInput{Name: prompt.Grade, Text: strings.Repeat("é", prompt.MaxTextChars+1)}, "text"},
				{"a control character", prompt.SetInput{Name: prompt.Grade, Text: "yes\x1b[2Jno"}, "text"},
				{"a NUL", prompt.SetInput{Name: prompt.Grade, Text: "yes\x00"}, "text"},
				{"invalid UTF-8", prompt.SetInput{Name: prompt.Grade, Text: "yes \xff"}, "text"},
				{"a required placeholder dropped", prompt.SetInput{Name: prompt.Rephrase, Text: "Rephrase: {conversation}"}, "text"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					_, err := s.Set(ctx, c, tc.in)
					if tc.wantField == "" {
						if fault.KindOf(err) != fault.KindNotFound {
							t.Errorf("got %v, want not_found", err)
						}
					} else if fieldOf(err) != tc.wantField {
						t.Errorf("got %v, want an error naming %s", err, tc.wantField)
					}
					if got, _ := s.Get(ctx, c, prompt.GetInput{Name: prompt.Grade}); got.Version != 0 {
						t.Errorf("the refused call changed the prompt: %+v", got)
					}
				})
			}
		})

		t.Run("concurrent sets each get their own version", func(t *testing.T) {
			c := caller(t)
			const n = 8
			var wg sync.WaitGroup
			versions := make(chan int64, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := s.Set(ctx, c, prompt.SetInput{Name: prompt.Tools, Text: fmt.Sprintf("text %d", i)})
					if err != nil {
						t.Error(err)
						return
					}
					versions <- out.Version
				}()
			}
			wg.Wait()
			close(versions)
			seen := map[int64]bool{}
			for v := range versions {
				if seen[v] {
					t.Errorf("version %d handed out twice", v)
				}
				seen[v] = true
			}
			got, _ := s.Get(ctx, c, prompt.GetInput{Name: prompt.Tools})
			if got.Version != n {
				t.Errorf("version %d after %d sets", got.Version, n)
			}
		})

		t.Run("render fills in the override in force", func(t *testing.T) {
			c := caller(t)
			if _, err := s.Set(ctx, c, prompt.SetInput{Name: prompt.Rephrase, Text: "Q={question}"}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Render(ctx, c, prompt.RenderInput{Name: prompt.Rephrase, Arguments: map[string]string{"question": "why?"}})
			if err != nil {
				t.Fatal(err)
			}
			want := prompt.RenderOutput{Description: got.Description, Messages: []prompt.Message{{Role: "user", Content: prompt.TextContent{Type: "text", Text: "Q=why?"}}}}
			if diff := cmp.Diff(want, got); diff != "" || got.Description == "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	})
}

var ignoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".UpdatedAt" }, cmp.Ignore())

// fieldOf returns the field an invalid-argument error names, or "".
func fieldOf(err error) string {
	if fault.KindOf(err) != fault.KindInvalid {
		return ""
	}
	_, field, _ := fault.Public(err)
	return field
}
