package rag

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/settings"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Limits of the step tools.
const (
	// RephraseAfter is how many messages a conversation must exceed before a
	// question in it is rephrased (seed 000: "only runs if >2 messages").
	RephraseAfter = 2
	// HistoryMessages is how many of the conversation's newest messages the
	// rephrase reads, besides its rolling summary.
	HistoryMessages = 10
	// MaxGradeDocuments bounds the documents one grade call takes.
	MaxGradeDocuments = 100
	// rephraseTokens and gradeTokens bound the steps' generations.
	rephraseTokens = 256
	gradeTokens    = 8
)

// Steps serves the two internal steps of the RAG pipeline that call the
// generator: optimizer_vs-rephrase and optimizer_vs-grade. It is safe for
// concurrent use.
type Steps struct {
	memory  *memory.Service
	gen     provider.Generator
	prompts prompt.Lookup
	threads *settings.Store
}

// NewSteps returns the steps, reading conversations from table through the
// memory family, their prompts with the tenant's overrides and the threads'
// settings from table (packages prompt and settings), and generating with gen.
func NewSteps(table store.Table, gen provider.Generator) *Steps {
	return &Steps{memory: memory.New(table, nil), gen: gen, prompts: prompt.NewStore(table, nil), threads: settings.New(table, nil)}
}

// Rephrase turns a question asked inside a conversation into a standalone
// one, with the conversation's rolling summary and newest messages as
// history. It rephrases only when the conversation holds more than
// [RephraseAfter] messages; with no conversation named, or one that does not
// exist (a thread the memory family never stored), it returns the question
// unchanged: there is no history to resolve it against, which is not an error.
func (s *Steps) Rephrase(ctx context.Context, c tenant.Caller, in RephraseInput) (RephraseOutput, error) {
	if err := validateQuestion("question", in.Question); err != nil {
		return RephraseOutput{}, err
	}
	id, err := conversationNamed(in.ThreadID, in.ConversationID)
	if err != nil {
		return RephraseOutput{}, err
	}
	out := RephraseOutput{Question: in.Question}
	if id == "" {
		return out, nil
	}
	// The thread's settings may turn rephrasing off, and name its model.
	thread, err := s.threads.Get(ctx, c.Tenant, id)
	if err != nil {
		return RephraseOutput{}, err
	}
	if !thread.VectorSearch.Rephrase {
		return out, nil
	}
	model := cmp.Or(in.LLMModel, thread.Model.Generator)
	window, err := s.memory.GetContext(ctx, c, memory.GetContextInput{ConversationID: id, MaxMessages: HistoryMessages})
	if fault.KindOf(err) == fault.KindNotFound {
		return out, nil
	}
	if err != nil {
		return RephraseOutput{}, err
	}
	out.Messages = len(window.Messages)
	if len(window.Messages) <= RephraseAfter && window.Summary == "" {
		return out, nil
	}
	history := historyOf(window, in.Question)
	if s.gen == nil {
		return RephraseOutput{}, fault.Unavailable(nil, "no generator is configured to rephrase with")
	}
	gen, err := provider.GeneratorFor(s.gen, model)
	if err != nil {
		return RephraseOutput{}, err
	}
	req, err := provider.Prompted(ctx, s.prompts, c.Tenant, provider.GenerateRequest{Task: provider.TaskRephrase, Question: in.Question, History: history, MaxTokens: rephraseTokens})
	if err != nil {
		return RephraseOutput{}, err
	}
	g, err := gen.Generate(ctx, req)
	if err != nil {
		return RephraseOutput{}, generatorFault(err, "rephrasing")
	}
	q := strings.TrimSpace(g.Text)
	if q == "" {
		return RephraseOutput{}, fault.Unavailable(nil, "the generator (%s %s) returned an empty rephrasing", g.Provider, g.Model)
	}
	if utf8.RuneCountInString(q) > MaxQueryChars {
		q = string([]rune(q)[:MaxQueryChars])
	}
	out.Question, out.Rephrased, out.Provider, out.Model = q, q != in.Question, g.Provider, g.Model
	return out, nil
}

// historyOf returns a conversation window as the history of question: its
// rolling summary as a system turn, then its messages. A client that stored
// the question before asking has it as the last message; it is the
// question, not its history, and is left out.
func historyOf(window memory.GetContextOutput, question string) []provider.Turn {
	msgs := window.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == "user" && strings.TrimSpace(msgs[n-1].Content) == strings.TrimSpace(question) {
		msgs = msgs[:n-1]
	}
	var history []provider.Turn
	if window.Summary != "" {
		history = append(history, provider.Turn{Role: "system", Content: "Summary of the earlier conversation: " + window.Summary})
	}
	for _, m := range msgs {
		history = append(history, provider.Turn{Role: m.Role, Content: m.Content})
	}
	return history
}

// Grade judges whether the documents, taken together, help answer the
// question: a binary "yes" or "no" (seed 000's grading). No documents grade
// "no" without asking the generator. An answer other than yes or no is an
// error, so the pipeline falls back to keeping the documents.
func (s *Steps) Grade(ctx context.Context, c tenant.Caller, in GradeInput) (GradeOutput, error) {
	if err := validateQuestion("question", in.Question); err != nil {
		return GradeOutput{}, err
	}
	if len(in.Documents) > MaxGradeDocuments {
		return GradeOutput{}, fault.Invalid("documents", "has %d documents, more than %d", len(in.Documents), MaxGradeDocuments)
	}
	var docs []string
	for _, d := range in.Documents {
		if strings.TrimSpace(d.Content) != "" {
			docs = append(docs, d.Content)
		}
	}
	if len(docs) == 0 {
		return GradeOutput{Relevant: "no", Graded: true}, nil
	}
	if s.gen == nil {
		return GradeOutput{}, fault.Unavailable(nil, "no generator is configured to grade with")
	}
	gen, err := provider.GeneratorFor(s.gen, in.LLMModel)
	if err != nil {
		return GradeOutput{}, err
	}
	req, err := provider.Prompted(ctx, s.prompts, c.Tenant, provider.GenerateRequest{Task: provider.TaskGrade, Question: in.Question, Documents: docs, MaxTokens: gradeTokens})
	if err != nil {
		return GradeOutput{}, err
	}
	g, err := gen.Generate(ctx, req)
	if err != nil {
		return GradeOutput{}, generatorFault(err, "grading")
	}
	verdict, ok := parseVerdict(g.Text)
	if !ok {
		return GradeOutput{}, fault.Unavailable(nil, "the grader (%s %s) answered %q, not yes or no", g.Provider, g.Model, truncate(g.Text, 80))
	}
	return GradeOutput{Relevant: verdict, Graded: true, Provider: g.Provider, Model: g.Model}, nil
}

// parseVerdict reads a grader's answer: its first word, yes or no, in any case
// and with any punctuation.
func parseVerdict(text string) (string, bool) {
	word := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) })
	if len(word) == 0 {
		return "", false
	}
	switch word[0] {
	case "yes":
		return "yes", true
	case "no":
		return "no", true
	}
	return "", false
}

// generatorFault classifies a generator failure: classified errors pass
// through, anything else is the dependency being unavailable.
func generatorFault(err error, doing string) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	return fault.Unavailable(err, "%s failed: the generator did not answer (%v)", doing, err)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// validateQuestion checks a query or question: 1..MaxQueryChars characters, not blank.
func validateQuestion(field, q string) error {
	n := utf8.RuneCountInString(q)
	switch {
	case strings.TrimSpace(q) == "":
		return fault.Invalid(field, "must not be empty")
	case n > MaxQueryChars:
		return fault.Invalid(field, "has %d characters, more than %d", n, MaxQueryChars)
	}
	return nil
}
