package rag

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

// conversation stores msgs (alternating user and assistant) in a new conversation id of table.
func conversation(t *testing.T, table store.Table, id string, msgs ...string) {
	t.Helper()
	svc := memory.New(table, nil)
	ctx := context.Background()
	if _, err := svc.GetOrCreate(ctx, alice, memory.GetOrCreateInput{ConversationID: id}); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if _, err := svc.AddMessage(ctx, alice, memory.AddMessageInput{ConversationID: id, Role: []string{"user", "assistant"}[i%2], Content: m}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRephraseOnlyWithMoreThanTwoMessages(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	conversation(t, tbl, "two", "Tell me about diabetes.", "It is a metabolic disease.")
	conversation(t, tbl, "three", "Tell me about diabetes.", "It is a metabolic disease.", "What about type 2?")
	conversation(t, tbl, "asked", "Tell me about diabetes.", "It is a metabolic disease.", "What about type 2?", "Common in adults.", "what are its symptoms?")
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		in      RephraseInput
		want    RephraseOutput
		history int // turns the generator saw, -1 if not called
	}{
		{"NoConversation", RephraseInput{Question: "what are its symptoms?"},
			RephraseOutput{Question: "what are its symptoms?"}, -1},
		{"ConversationNeverStored", RephraseInput{Question: "what are its symptoms?", ThreadID: "ghost"},
			RephraseOutput{Question: "what are its symptoms?"}, -1},
		{"TwoMessages", RephraseInput{Question: "what are its symptoms?", ThreadID: "two"},
			RephraseOutput{Question: "what are its symptoms?", Messages: 2}, -1},
		{"ThreeMessages", RephraseInput{Question: "what are its symptoms?", ThreadID: "three"},
			RephraseOutput{Question: "what are its symptoms? What about type 2?", Rephrased: true, Messages: 3, Provider: "test", Model: "extractive"}, 3},
		{"ByConversationID", RephraseInput{Question: "what are its symptoms?", ConversationID: "three"},
			RephraseOutput{Question: "what are its symptoms? What about type 2?", Rephrased: true, Messages: 3, Provider: "test", Model: "extractive"}, 3},
		{"TheStoredQuestionIsNotItsOwnHistory", RephraseInput{Question: "what are its symptoms?", ThreadID: "asked"},
			RephraseOutput{Question: "what are its symptoms? What about type 2?", Rephrased: true, Messages: 5, Provider: "test", Model: "extractive"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := &testGen{}
			got, err := NewSteps(tbl, gen).Rephrase(ctx, alice, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			switch {
			case tc.history < 0 && len(gen.calls) > 0:
				t.Errorf("the generator was called: %+v", gen.calls)
			case tc.history >= 0 && (len(gen.calls) != 1 || len(gen.calls[0].History) != tc.history || gen.calls[0].Task != provider.TaskRephrase):
				t.Errorf("generator calls %+v, want one rephrase with %d turns of history", gen.calls, tc.history)
			}
		})
	}
	t.Run("AnotherTenantsConversationIsNotRead", func(t *testing.T) {
		got, err := NewSteps(tbl, &testGen{}).Rephrase(ctx, bob, RephraseInput{Question: "what are its symptoms?", ThreadID: "three"})
		if err != nil || got.Rephrased || got.Messages != 0 {
			t.Errorf("bob got %+v, %v", got, err)
		}
	})
}

func TestRephraseFailures(t *testing.T) {
	tbl := storetest.OpenEmbedded(t)
	conversation(t, tbl, "three", "a", "b", "c")
	boom := errors.New("connection reset")
	for _, tc := range []struct {
		name  string
		in    RephraseInput
		gen   func(provider.GenerateRequest) (provider.Generation, error)
		kind  fault.Kind
		field string
	}{
		{"EmptyQuestion", RephraseInput{ThreadID: "three"}, nil, fault.KindInvalid, "question"},
		{"BadThreadID", RephraseInput{Question: "q", ThreadID: "no spaces"}, nil, fault.KindInvalid, "thread_id"},
		{"BadConversationID", RephraseInput{Question: "q", ConversationID: "no spaces"}, nil, fault.KindInvalid, "conversation_id"},
		{"TwoDifferentIDs", RephraseInput{Question: "q", ThreadID: "three", ConversationID: "four"}, nil, fault.KindInvalid, "conversation_id"},
		{"GeneratorFails", RephraseInput{Question: "q", ThreadID: "three"},
			func(provider.GenerateRequest) (provider.Generation, error) { return provider.Generation{}, boom }, fault.KindUnavailable, ""},
		{"GeneratorSaysNothing", RephraseInput{Question: "q", ThreadID: "three"},
			func(provider.GenerateRequest) (provider.Generation, error) {
				return provider.Generation{Text: " "}, nil
			}, fault.KindUnavailable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := &testGen{fn: map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){provider.TaskRephrase: tc.gen}}
			_, err := NewSteps(tbl, gen).Rephrase(context.Background(), alice, tc.in)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != tc.kind || fe.Field != tc.field {
				t.Errorf("got %v, want %s naming %q", err, tc.kind, tc.field)
			}
		})
	}
}

func TestGradeIsBinary(t *testing.T) {
	docs := []pipeline.Document{{DocID: "d1", Content: "Diabetes causes thirst."}}
	answer := func(text string) func(provider.GenerateRequest) (provider.Generation, error) {
		return func(provider.GenerateRequest) (provider.Generation, error) {
			return provider.Generation{Text: text, Provider: "p", Model: "m"}, nil
		}
	}
	for _, tc := range []struct {
		name string
		docs []pipeline.Document
		gen  func(provider.GenerateRequest) (provider.Generation, error)
		want GradeOutput
		kind fault.Kind // of the error, if one is wanted
	}{
		{"Yes", docs, answer("yes"), GradeOutput{Relevant: "yes", Graded: true, Provider: "p", Model: "m"}, ""},
		{"YesWithPunctuationAndCase", docs, answer(" Yes. The documents answer it."), GradeOutput{Relevant: "yes", Graded: true, Provider: "p", Model: "m"}, ""},
		{"No", docs, answer("NO"), GradeOutput{Relevant: "no", Graded: true, Provider: "p", Model: "m"}, ""},
		{"NoDocumentsIsNoWithoutAsking", nil, nil, GradeOutput{Relevant: "no", Graded: true}, ""},
		{"BlankDocumentsAreNoDocuments", []pipeline.Document{{DocID: "x", Content: " "}}, nil, GradeOutput{Relevant: "no", Graded: true}, ""},
		{"NeitherYesNorNo", docs, answer("maybe"), GradeOutput{}, fault.KindUnavailable},
		{"GeneratorFails", docs, func(provider.GenerateRequest) (provider.Generation, error) {
			return provider.Generation{}, fmt.Errorf("throttled")
		}, GradeOutput{}, fault.KindUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := &testGen{fn: map[provider.Task]func(provider.GenerateRequest) (provider.Generation, error){provider.TaskGrade: tc.gen}}
			got, err := NewSteps(storetest.OpenEmbedded(t), gen).Grade(context.Background(), alice, GradeInput{Question: "does diabetes cause thirst?", Documents: tc.docs})
			if tc.kind != "" {
				if fault.KindOf(err) != tc.kind {
					t.Errorf("got %+v, %v; want a %s error", got, err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if tc.gen == nil && len(gen.calls) > 0 {
				t.Errorf("the generator was asked: %+v", gen.calls)
			}
		})
	}
	_, err := NewSteps(storetest.OpenEmbedded(t), &testGen{}).Grade(context.Background(), alice, GradeInput{Question: "q", Documents: make([]pipeline.Document, MaxGradeDocuments+1)})
	if fe := (*fault.Error)(nil); !errors.As(err, &fe) || fe.Field != "documents" {
		t.Errorf("%d documents: %v", MaxGradeDocuments+1, err)
	}
}
