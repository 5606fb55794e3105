package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
)

func defaultText(name string) string {
	s, _ := prompt.SpecOf(name)
	return s.Text
}

func TestRenderGivesEachTaskItsPromptAndAlternatingMessages(t *testing.T) {
	history := []provider.Turn{
		{Role: "assistant", Content: "Welcome."}, // before any user turn: dropped
		{Role: "user", Content: "Tell me about vector indexes."},
		{Role: "tool", Content: `{"documents":[]}`}, // not a chat role: dropped
		{Role: "assistant", Content: "They find nearest neighbours."},
		{Role: "assistant", Content: "  "}, // empty: dropped
		{Role: "user", Content: "How accurate are they?"},
	}
	for _, tc := range []struct {
		name string
		req  provider.GenerateRequest
		want provider.Prompt
	}{
		{"AnswerPutsTheDocumentsInTheSystemPrompt",
			provider.GenerateRequest{Task: provider.TaskAnswer, Question: "How accurate are they?", History: history, Documents: []string{"Accuracy is 95%.", " ", "Recall is measured."}},
			provider.Prompt{
				System: defaultText(prompt.Answer) + "\n\nDocuments:\n[1] Accuracy is 95%.\n\n[2] Recall is measured.",
				Messages: []provider.Turn{
					{Role: "user", Content: "Tell me about vector indexes."},
					{Role: "assistant", Content: "They find nearest neighbours."},
					{Role: "user", Content: "How accurate are they?"},
				},
			}},
		{"AnswerNamesEachDocumentsSource",
			provider.GenerateRequest{Task: provider.TaskAnswer, Question: "Why?", System: "Be brief.", Documents: []string{"Accuracy is 95%.", "Recall is measured."}, Sources: []string{"a.md", ""}},
			provider.Prompt{System: "Be brief.\n\nDocuments:\n[1] (from a.md) Accuracy is 95%.\n\n[2] Recall is measured.", Messages: []provider.Turn{{Role: "user", Content: "Why?"}}}},
		{"AnswerWithoutDocumentsSaysSo",
			provider.GenerateRequest{Task: provider.TaskAnswer, Question: "Why?", System: "Be brief."},
			provider.Prompt{System: "Be brief.\n\nDocuments: none were found.", Messages: []provider.Turn{{Role: "user", Content: "Why?"}}}},
		{"RephraseSendsTheConversationInOneMessage",
			provider.GenerateRequest{Task: provider.TaskRephrase, Question: "How accurate are they?", History: history},
			provider.Prompt{System: defaultText(prompt.Context), Messages: []provider.Turn{{Role: "user", Content: "Conversation so far:\n" +
				"User: Tell me about vector indexes.\nAssistant: They find nearest neighbours.\n\n" +
				"Latest question: How accurate are they?\n\nStandalone search query:"}}}},
		{"RephraseWithoutHistoryHasNoConversation",
			provider.GenerateRequest{Task: provider.TaskRephrase, Question: "What is {conversation}?"},
			provider.Prompt{System: defaultText(prompt.Context), Messages: []provider.Turn{{Role: "user",
				Content: "Latest question: What is {conversation}?\n\nStandalone search query:"}}}},
		{"GradeNumbersTheDocuments",
			provider.GenerateRequest{Task: provider.TaskGrade, Question: "Is PGA tunable?", Documents: []string{"PGA is tunable."}},
			provider.Prompt{System: defaultText(prompt.Grade), Messages: []provider.Turn{{Role: "user", Content: "Question: Is PGA tunable?\n\n" +
				"Documents:\n[1] PGA is tunable.\n\nIs at least one document relevant to the question? Answer yes or no."}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.Render(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Render mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderRefusesAnUnknownTaskAndAnEmptyQuestion(t *testing.T) {
	for _, req := range []provider.GenerateRequest{{Task: "poem", Question: "q"}, {Task: provider.TaskGrade, Question: "  "}} {
		if _, err := provider.Render(req); err == nil {
			t.Errorf("Render(%+v) succeeded, want an error", req)
		}
	}
}

func TestFinishReadsTheTaskOutputOrFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		task  provider.Task
		reply string
		want  string // "" means an error
	}{
		{"GradeYes", provider.TaskGrade, " Yes.", "yes"},
		{"GradeNoInBold", provider.TaskGrade, "**No**, they are not.", "no"},
		{"GradeOtherwiseFails", provider.TaskGrade, "Maybe", ""},
		{"GradeReadsWholeWords", provider.TaskGrade, "Note: both are relevant", ""},
		{"RephraseDropsQuotesAndLabel", provider.TaskRephrase, "Standalone search query: \"vector index accuracy\"\nBecause...", "vector index accuracy"},
		{"RephraseEmptyFails", provider.TaskRephrase, " \"\" ", ""},
		{"AnswerIsTrimmed", provider.TaskAnswer, "\n It is 95%. \n", "It is 95%."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.Finish(tc.task, tc.reply)
			if tc.want == "" {
				if err == nil {
					t.Errorf("Finish = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Finish = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestEveryTaskHasADefaultPromptAndTokenBound(t *testing.T) {
	for _, task := range []provider.Task{provider.TaskAnswer, provider.TaskRephrase, provider.TaskGrade} {
		if p := defaultText(provider.PromptName(task)); strings.TrimSpace(p) == "" {
			t.Errorf("task %s has no default prompt", task)
		}
		if provider.DefaultMaxTokens(task) <= 0 {
			t.Errorf("task %s has no default token bound", task)
		}
	}
}

// lookupOf is a prompt.Lookup over a map, falling back to the defaults.
type lookupOf map[string]string

func (l lookupOf) Text(ctx context.Context, tenant, name string) (string, error) {
	if text, ok := l[tenant+"/"+name]; ok {
		return text, nil
	}
	return prompt.Defaults.Text(ctx, tenant, name)
}

func TestPromptedPutsTheTenantsPromptsInForceUnlessTheCallerSetThem(t *testing.T) {
	l := lookupOf{"acme/" + prompt.Grade: "Grade it.", "acme/" + prompt.Context: "Ctx.", "acme/" + prompt.Rephrase: "R {question}"}
	for _, tc := range []struct {
		name         string
		tenant       string
		req          provider.GenerateRequest
		wantSystem   string
		wantTemplate string
	}{
		{"a grade gets the tenant's grade prompt", "acme", provider.GenerateRequest{Task: provider.TaskGrade}, "Grade it.", ""},
		{"a rephrase gets its system prompt and template", "acme", provider.GenerateRequest{Task: provider.TaskRephrase}, "Ctx.", "R {question}"},
		{"another tenant gets the defaults", "globex", provider.GenerateRequest{Task: provider.TaskGrade}, defaultText(prompt.Grade), ""},
		{"a caller's own system prompt stays", "acme", provider.GenerateRequest{Task: provider.TaskGrade, System: "Mine."}, "Mine.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := provider.Prompted(context.Background(), l, tc.tenant, tc.req)
			if err != nil || got.System != tc.wantSystem || got.Template != tc.wantTemplate {
				t.Errorf("got system %q template %q, %v; want %q, %q", got.System, got.Template, err, tc.wantSystem, tc.wantTemplate)
			}
		})
	}
	p, err := provider.Render(provider.GenerateRequest{Task: provider.TaskRephrase, Question: "why?", Template: "Q={question}"})
	if err != nil || p.Messages[0].Content != "Q=why?" {
		t.Errorf("a rephrase template renders %+v, %v", p, err)
	}
}
