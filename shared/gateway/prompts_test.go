package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/prompt"
)

func TestPromptsListTheNamedPromptsWithTheirArguments(t *testing.T) {
	h := newHarness(t, nil)
	cs := h.connect(t, "", nil)
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Prompt{}
	for _, p := range res.Prompts {
		listed[p.Name] = p
	}
	for _, s := range prompt.Specs() {
		p, ok := listed[s.Name]
		if !ok {
			t.Errorf("%s is not listed", s.Name)
			continue
		}
		var want []*mcp.PromptArgument
		for _, a := range s.Arguments {
			want = append(want, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		if diff := cmp.Diff(want, p.Arguments); diff != "" || p.Title != s.Title || p.Description != s.Description {
			t.Errorf("%s: title %q, description %q, arguments mismatch (-want +got):\n%s", s.Name, p.Title, p.Description, diff)
		}
	}
}

func TestPromptsGetServesTheTenantsOverride(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	alice := h.connect(t, newKey(t, h, "acme", "alice"), nil)
	other := h.connect(t, newKey(t, h, "globex", "gina"), nil)
	get := func(cs *mcp.ClientSession, name string, args map[string]string) (string, error) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return "", err
		}
		if len(res.Messages) != 1 {
			t.Fatalf("%d messages", len(res.Messages))
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text, nil
	}
	grade, _ := prompt.SpecOf(prompt.Grade)
	if text, err := get(alice, prompt.Grade, nil); err != nil || text != grade.Text {
		t.Fatalf("default: %q, %v", text, err)
	}
	mustCall(t, alice, "prompt_override_set", map[string]any{"name": prompt.Grade, "text": "Answer yes or no."})
	mustCall(t, alice, "prompt_override_set", map[string]any{"name": prompt.Rephrase, "text": "Make {question} stand alone."})
	for _, tc := range []struct {
		name     string
		cs       *mcp.ClientSession
		prompt   string
		args     map[string]string
		want     string
		wantCode int64
	}{
		{"the override is in force on the next call", alice, prompt.Grade, nil, "Answer yes or no.", 0},
		{"arguments fill the override's placeholders", alice, prompt.Rephrase, map[string]string{"question": "and v2?"}, "Make and v2? stand alone.", 0},
		{"another tenant gets the default", other, prompt.Grade, nil, grade.Text, 0},
		{"a missing required argument is invalid params", alice, prompt.Rephrase, nil, "", jsonrpc.CodeInvalidParams},
		{"an argument the prompt lacks is invalid params", alice, prompt.Grade, map[string]string{"x": "1"}, "", jsonrpc.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := get(tc.cs, tc.prompt, tc.args)
			if tc.wantCode != 0 {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != tc.wantCode {
					t.Errorf("got %q, %v; want JSON-RPC error %d", text, err, tc.wantCode)
				}
				return
			}
			if err != nil || text != tc.want {
				t.Errorf("got %q, %v; want %q", text, err, tc.want)
			}
		})
	}
	mustCall(t, alice, "prompt_override_reset", map[string]any{"name": prompt.Grade})
	if text, err := get(alice, prompt.Grade, nil); err != nil || text != grade.Text {
		t.Errorf("after reset: %q, %v", text, err)
	}
	if _, err := get(alice, "optimizer_unknown", nil); err == nil || !strings.Contains(err.Error(), "optimizer_unknown") {
		t.Errorf("an unknown prompt: %v", err)
	}
}
