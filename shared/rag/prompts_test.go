package rag

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestTheStepsAndTheAnswerReadTheTenantsPrompts(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	ctx := context.Background()
	conversation(t, tbl, "three", "Tell me about diabetes.", "It is a metabolic disease.", "What about type 2?")
	prompts := prompt.NewStore(tbl, nil)
	overrides := map[string]string{
		prompt.Context:  "Make it standalone.",
		prompt.Rephrase: "Q: {question}\n{conversation}",
		prompt.Grade:    "Relevant? yes/no.",
		prompt.Answer:   "Answer from these.",
	}
	for name, text := range overrides {
		if _, err := prompts.Set(ctx, alice, prompt.SetInput{Name: name, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	def := func(name string) string { s, _ := prompt.SpecOf(name); return s.Text }
	for _, tc := range []struct {
		name         string
		who          string
		wantContext  string
		wantTemplate string
		wantGrade    string
		wantAnswer   string
	}{
		{"the tenant's overrides are in force", "alice", overrides[prompt.Context], "Q: what are its symptoms?\n", overrides[prompt.Grade], overrides[prompt.Answer]},
		{"another tenant has the defaults", "bob", def(prompt.Context), "Conversation so far:\nUser: Tell me about diabetes.", def(prompt.Grade), def(prompt.Answer)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := alice
			if tc.who == "bob" {
				c = bob
				svc := memory.New(tbl, nil)
				if _, err := svc.GetOrCreate(ctx, bob, memory.GetOrCreateInput{ConversationID: "three"}); err != nil {
					t.Fatal(err)
				}
				for _, m := range []string{"Tell me about diabetes.", "It is a metabolic disease.", "What about type 2?"} {
					if _, err := svc.AddMessage(ctx, bob, memory.AddMessageInput{ConversationID: "three", Role: "user", Content: m}); err != nil {
						t.Fatal(err)
					}
				}
			}
			gen := &testGen{}
			steps := NewSteps(tbl, gen)
			if _, err := steps.Rephrase(ctx, c, RephraseInput{Question: "what are its symptoms?", ThreadID: "three"}); err != nil {
				t.Fatal(err)
			}
			if _, err := steps.Grade(ctx, c, GradeInput{Question: "q", Documents: []pipeline.Document{{Content: "Diabetes is common."}}}); err != nil {
				t.Fatal(err)
			}
			runner := &corpusRunner{steps: steps}
			runner.add(c.Tenant, medical...)
			if _, err := New(tbl, Options{Generator: gen, Runner: runner}).Basic(ctx, c, BasicInput{Request{Query: "diabetes"}}); err != nil {
				t.Fatal(err)
			}
			got := map[provider.Task][]provider.GenerateRequest{}
			for _, r := range gen.calls {
				got[r.Task] = append(got[r.Task], r)
			}
			if r := got[provider.TaskRephrase]; len(r) == 0 || r[0].System != tc.wantContext || len(r[0].Template) == 0 {
				t.Fatalf("rephrase requests %+v, want system %q", r, tc.wantContext)
			}
			if p, err := provider.Render(got[provider.TaskRephrase][0]); err != nil || len(p.Messages) != 1 || !startsWith(p.Messages[0].Content, tc.wantTemplate) {
				t.Errorf("rendered rephrase %+v, %v; want a message starting %q", p, err, tc.wantTemplate)
			}
			if r := got[provider.TaskGrade]; len(r) == 0 || r[0].System != tc.wantGrade {
				t.Errorf("grade requests %+v, want system %q", r, tc.wantGrade)
			}
			if r := got[provider.TaskAnswer]; len(r) == 0 || r[0].System != tc.wantAnswer {
				t.Errorf("answer requests %+v, want system %q", r, tc.wantAnswer)
			}
		})
	}
}

func TestTheThreadsSettingsCanTurnRephrasingOff(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	ctx := context.Background()
	conversation(t, tbl, "three", "Tell me about diabetes.", "It is a metabolic disease.", "What about type 2?")
	off := false
	if _, err := settings.New(tbl, nil).Update(ctx, alice, settings.UpdateInput{ThreadID: "three", VectorSearch: &settings.VectorSearchUpdate{Rephrase: &off}}); err != nil {
		t.Fatal(err)
	}
	gen := &testGen{}
	got, err := NewSteps(tbl, gen).Rephrase(ctx, alice, RephraseInput{Question: "what are its symptoms?", ThreadID: "three"})
	if err != nil || got.Rephrased || got.Question != "what are its symptoms?" || len(gen.calls) != 0 {
		t.Errorf("got %+v, %v, %d generator calls; want the question unchanged and no call", got, err, len(gen.calls))
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
