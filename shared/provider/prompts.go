package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/prompt"
)

// The default prompts' names and texts are package prompt's, which also
// keeps the tenants' overrides; a caller that honours overrides looks the
// texts up there (prompt.Lookup) and passes them in [GenerateRequest].System
// and [GenerateRequest].Template.

// Prompt is a [GenerateRequest] rendered for a chat model: a system prompt
// and alternating messages that begin and end with the user's.
type Prompt struct {
	System   string
	Messages []Turn
}

// The message roles chat models accept besides the system prompt.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// PromptName returns the name of task's default system prompt, or "" if task is unknown.
func PromptName(task Task) string {
	switch task {
	case TaskAnswer:
		return prompt.Answer
	case TaskRephrase:
		return prompt.Context
	case TaskGrade:
		return prompt.Grade
	}
	return ""
}

// DefaultMaxTokens is the output bound of a task when a request sets no
// MaxTokens: an answer needs room, a query a line, a grade one word (with
// slack for models that wrap it in punctuation).
func DefaultMaxTokens(task Task) int {
	switch task {
	case TaskRephrase:
		return 128
	case TaskGrade:
		return 16
	}
	return 1024
}

// Render turns req into the system prompt and messages every hosted backend
// sends. The answer task sends the conversation so far and the question, with
// the documents in the system prompt (as the seed injects them); the rephrase
// and grade tasks send one user message holding everything the model needs,
// so they work with models that handle multi-turn input poorly. Messages
// always alternate user/assistant, starting and ending with the user's, as
// Bedrock Converse requires: turns of other roles are dropped, consecutive
// turns of one role are merged, and empty turns are skipped.
func Render(req GenerateRequest) (Prompt, error) {
	name := PromptName(req.Task)
	if name == "" {
		return Prompt{}, fmt.Errorf("provider: unknown task %q", req.Task)
	}
	if strings.TrimSpace(req.Question) == "" {
		return Prompt{}, fmt.Errorf("provider: %s: the question is empty", req.Task)
	}
	system := req.System
	if strings.TrimSpace(system) == "" {
		system = defaultText(name)
	}
	var p Prompt
	switch req.Task {
	case TaskAnswer:
		p.System = system
		if docs := numbered(req.Documents, req.Sources); docs != "" {
			p.System += "\n\nDocuments:\n" + docs
		} else {
			p.System += "\n\nDocuments: none were found."
		}
		p.Messages = alternate(append(append([]Turn(nil), req.History...), Turn{Role: RoleUser, Content: req.Question}))
	case TaskRephrase:
		conv := conversation(req.History, req.Question)
		if conv != "" {
			conv = "Conversation so far:\n" + conv + "\n\n"
		}
		template := req.Template
		if strings.TrimSpace(template) == "" {
			template = defaultText(prompt.Rephrase)
		}
		msg, err := prompt.Fill(prompt.Rephrase, template, map[string]string{"conversation": conv, "question": strings.TrimSpace(req.Question)})
		if err != nil {
			return Prompt{}, fmt.Errorf("provider: %s: %w", req.Task, err)
		}
		p.System = system
		p.Messages = []Turn{{Role: RoleUser, Content: msg}}
	case TaskGrade:
		var b strings.Builder
		b.WriteString("Question: ")
		b.WriteString(strings.TrimSpace(req.Question))
		b.WriteString("\n\nDocuments:\n")
		if docs := numbered(req.Documents, req.Sources); docs != "" {
			b.WriteString(docs)
		} else {
			b.WriteString("(none)")
		}
		b.WriteString("\n\nIs at least one document relevant to the question? Answer yes or no.")
		p.System = system
		p.Messages = []Turn{{Role: RoleUser, Content: b.String()}}
	}
	return p, nil
}

// defaultText returns the default text of the prompt named name, one of
// the names above.
func defaultText(name string) string {
	s, _ := prompt.SpecOf(name)
	return s.Text
}

// Finish turns a model's raw reply to req into the [Generation] text the task
// promises: the trimmed answer; the query alone, on one line, without quotes
// or a label; "yes" or "no" for a grade. It fails when the reply cannot be
// read as the task's output (an empty query, a grade that is neither yes nor
// no), so a caller can fall back as the pipeline's degradation says.
func Finish(task Task, reply string) (string, error) {
	reply = strings.TrimSpace(reply)
	switch task {
	case TaskRephrase:
		q := reply
		if i := strings.IndexByte(q, '\n'); i >= 0 {
			q = q[:i]
		}
		for _, label := range []string{"standalone search query:", "search query:", "query:"} {
			if len(q) >= len(label) && strings.EqualFold(q[:len(label)], label) {
				q = q[len(label):]
				break
			}
		}
		q = strings.Trim(strings.TrimSpace(q), "\"'`“”‘’")
		q = strings.TrimSpace(q)
		if q == "" {
			return "", fmt.Errorf("provider: rephrase: the model returned no query")
		}
		return q, nil
	case TaskGrade:
		word, _, _ := strings.Cut(strings.ToLower(strings.TrimLeft(reply, "\"'`*([ ")), " ")
		word = strings.TrimRight(word, ".,;:!*\"'`)]")
		switch word {
		case "yes":
			return "yes", nil
		case "no", "not", "none", "nope":
			return "no", nil
		}
		return "", fmt.Errorf("provider: grade: the model replied %q, not yes or no", clip(reply, 80))
	}
	return reply, nil
}

// numbered lists documents as "[1] text", one block each, or "[1] (from
// source) text" where sources names the document's source.
func numbered(docs, sources []string) string {
	var b strings.Builder
	n := 0
	for i, d := range docs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		n++
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + strconv.Itoa(n) + "] ")
		if i < len(sources) && strings.TrimSpace(sources[i]) != "" {
			b.WriteString("(from " + strings.TrimSpace(sources[i]) + ") ")
		}
		b.WriteString(d)
	}
	return b.String()
}

// conversation writes history as "User: ..." lines, leaving out a last user
// turn that repeats the question (callers often pass the whole thread).
func conversation(history []Turn, question string) string {
	turns := alternate(history)
	if n := len(turns); n > 0 && turns[n-1].Role == RoleUser && strings.TrimSpace(turns[n-1].Content) == strings.TrimSpace(question) {
		turns = turns[:n-1]
	}
	var b strings.Builder
	for _, t := range turns {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if t.Role == RoleUser {
			b.WriteString("User: ")
		} else {
			b.WriteString("Assistant: ")
		}
		b.WriteString(strings.Join(strings.Fields(t.Content), " "))
	}
	return b.String()
}

// alternate keeps the user and assistant turns of ts with content, merges
// consecutive turns of one role, and drops assistant turns before the first
// user turn. If ts ends with the same text twice (the history's last user turn
// and the question), the repeat is dropped.
func alternate(ts []Turn) []Turn {
	var out []Turn
	for _, t := range ts {
		role := strings.ToLower(strings.TrimSpace(t.Role))
		content := strings.TrimSpace(t.Content)
		if (role != RoleUser && role != RoleAssistant) || content == "" {
			continue
		}
		if len(out) == 0 && role == RoleAssistant {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			if !strings.HasSuffix(out[n-1].Content, content) {
				out[n-1].Content += "\n\n" + content
			}
			continue
		}
		out = append(out, Turn{Role: role, Content: content})
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Prompted returns req with the prompts of tenant t in force: its System
// (and, for [TaskRephrase], its Template) read through lookup, unless the
// caller set them (a pipeline's own prompt, such as CRAG's rewrite). This
// is how every task a tenant runs honours the tenant's prompt overrides.
func Prompted(ctx context.Context, lookup prompt.Lookup, t string, req GenerateRequest) (GenerateRequest, error) {
	var err error
	if req.System == "" {
		if name := PromptName(req.Task); name != "" {
			if req.System, err = lookup.Text(ctx, t, name); err != nil {
				return req, fmt.Errorf("provider: prompt %s: %w", name, err)
			}
		}
	}
	if req.Task == TaskRephrase && req.Template == "" {
		if req.Template, err = lookup.Text(ctx, t, prompt.Rephrase); err != nil {
			return req, fmt.Errorf("provider: prompt %s: %w", prompt.Rephrase, err)
		}
	}
	return req, nil
}

// WithPrompts returns g generating with tenant t's prompts in force
// ([Prompted]), for code that generates through a [Generator] it is handed
// (GraphRAG's global search).
func WithPrompts(g Generator, lookup prompt.Lookup, t string) Generator {
	return prompted{g: g, lookup: lookup, tenant: t}
}

type prompted struct {
	g      Generator
	lookup prompt.Lookup
	tenant string
}

// Generate implements the [Generator] interface.
func (p prompted) Generate(ctx context.Context, req GenerateRequest) (Generation, error) {
	req, err := Prompted(ctx, p.lookup, p.tenant, req)
	if err != nil {
		return Generation{}, err
	}
	return p.g.Generate(ctx, req)
}
