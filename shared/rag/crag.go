package rag

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/memory"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// confidence scores a pipeline run's retrieval for question, in 0..1: 0 when
// it found nothing or the grader judged the documents not relevant; else how
// much of the question's content the best document covers ([text.Coverage]:
// its terms weighted by how informative they are). Retriever scores are not
// comparable across modes and stores, so they are not used. A grade that
// failed and fell back to relevant counts as relevant.
func confidence(question string, out pipeline.Output, docs []pipeline.Document) float64 {
	if len(docs) == 0 || out.Relevant == "no" {
		return 0
	}
	best := 0.0
	for _, d := range docs {
		best = max(best, text.Coverage(question, d.Content))
	}
	return best
}

// Query correction adds at most expandTerms words, taken from the best
// feedbackDocs documents of the first run.
const (
	expandTerms  = 5
	feedbackDocs = 3
)

// expand adds to query the words that best characterise the documents that
// cover it best ([text.KeyWords], relevance feedback as in RM3): each of the
// top documents weighs its coverage of the query, and each word its
// general-English [text.IDF], so generic words are never added, nor words
// the query has. It returns query unchanged when the documents cover none
// of it.
func expand(query string, docs []pipeline.Document) string {
	have := map[string]bool{}
	for _, t := range terms(query) {
		have[t] = true
	}
	var texts []string
	var weights []float64
	for _, d := range docs[:min(feedbackDocs, len(docs))] {
		texts, weights = append(texts, d.Content), append(weights, text.Coverage(query, d.Content))
	}
	add := text.KeyWords(texts, weights, expandTerms, func(t string) bool { return have[t] })
	if len(add) == 0 {
		return query
	}
	return query + " " + strings.Join(add, " ")
}

// rewriteSystem is the system prompt of crag's rewrite: a hosted model gets
// it in place of the rephrase task's own.
const rewriteSystem = "A search for the user's question found nothing that answers it. Write one different, more specific search query that could find the answer: other words, synonyms, the likely technical terms. Return only the query."

// correct returns the corrected query for a low-confidence retrieval of
// question: rewritten by the generator, which gets the conversation (when
// the call names one), the failed search and its best documents, or
// expanded with terms from the documents. A rewrite that fails or changes
// nothing falls back to expansion.
func (s *Service) correct(ctx context.Context, cl *call, strategy, question string, docs []pipeline.Document) (string, error) {
	if strategy == StrategyRewrite {
		best := docs[:min(feedbackDocs, len(docs))]
		var found, contents []string
		for _, d := range best {
			found, contents = append(found, truncate(d.Content, 200)), append(contents, d.Content)
		}
		note := "The search found nothing."
		if len(found) > 0 {
			note = "The search found only these passages, which do not answer it:\n- " + strings.Join(found, "\n- ")
		}
		history := append(s.conversation(ctx, cl, question), provider.Turn{Role: "user", Content: question}, provider.Turn{Role: "assistant", Content: note})
		g, err := s.generate(ctx, cl, provider.GenerateRequest{
			Task: provider.TaskRephrase, System: rewriteSystem, Question: question,
			History: history, Documents: contents, MaxTokens: rephraseTokens,
		}, "rewriting the query")
		if ctx.Err() != nil {
			return "", err
		}
		if q := strings.TrimSpace(g.Text); err == nil && q != "" && !strings.EqualFold(q, question) {
			return truncate(q, MaxQueryChars), nil
		}
	}
	return expand(question, docs), nil
}

// conversation returns the recent turns of the conversation the call names
// (its rolling summary and newest messages), or none: without a
// conversation, or when it cannot be read, the rewrite goes on without it.
func (s *Service) conversation(ctx context.Context, cl *call, question string) []provider.Turn {
	if cl.p.conversation == "" {
		return nil
	}
	window, err := memory.New(s.table, nil).GetContext(ctx, cl.caller, memory.GetContextInput{ConversationID: cl.p.conversation, MaxMessages: HistoryMessages})
	if err != nil {
		if fault.KindOf(err) != fault.KindNotFound {
			s.log.WarnContext(ctx, "crag: reading the conversation for the rewrite failed; rewriting without it", "tenant", cl.caller.Tenant, "error", err)
		}
		return nil
	}
	return historyOf(window, question)
}

// correctAndRetrieve corrects question and runs the pipeline again for the
// corrected query, within what the first run left of the time before the
// answer, then grades what it found against question itself (the run graded
// it against the corrected query). It returns the corrected query and the
// second run, which is nil when the correction changed nothing, that time
// ran out or the grade failed (no error: the answer then comes from the
// first run).
func (s *Service) correctAndRetrieve(ctx context.Context, cl *call, strategy, question string, docs []pipeline.Document) (string, *pipeline.Output, error) {
	ctx, cancel := cl.beforeAnswer(ctx)
	defer cancel()
	corrected, err := s.correct(ctx, cl, strategy, question, docs)
	if err == nil && corrected == question {
		return corrected, nil, nil
	}
	var again pipeline.Output
	if err == nil {
		again, err = s.retrieve(ctx, cl, corrected, "", cl.p.topK)
	}
	if err == nil {
		if gerr := s.regrade(ctx, cl, question, &again); gerr != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "crag: grading the corrected retrieval failed; answering from the first", "tenant", cl.caller.Tenant, "error", gerr)
			return "", nil, nil
		} else if gerr != nil {
			err = gerr
		}
	}
	// The run's own deadline may fire a moment before ctx's, which is the same.
	if errors.Is(err, errNoTimeLeft) || err != nil && errors.Is(context.Cause(ctx), errNoTimeLeft) {
		s.log.WarnContext(ctx, "crag: no time left for a second retrieval; answering from the first", "tenant", cl.caller.Tenant)
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return corrected, &again, nil
}

// regrade grades the documents of out, a run for a corrected query, against
// question, the user's. A grade that fails is an error, and the correction
// is not kept: nothing then says its documents answer the question.
func (s *Service) regrade(ctx context.Context, cl *call, question string, out *pipeline.Output) error {
	if len(out.Documents) == 0 {
		out.Relevant, out.Graded = "no", true
		return nil
	}
	contents := make([]string, len(out.Documents))
	for i, d := range out.Documents {
		contents[i] = d.Content
	}
	g, err := s.generate(ctx, cl, provider.GenerateRequest{Task: provider.TaskGrade, Question: question, Documents: contents, MaxTokens: gradeTokens}, "grading the corrected retrieval")
	if err != nil {
		return err
	}
	verdict, ok := parseVerdict(g.Text)
	if !ok {
		return fault.Unavailable(nil, "the grader (%s %s) answered %q, not yes or no", g.Provider, g.Model, truncate(g.Text, 80))
	}
	out.Relevant, out.Graded = verdict, true
	out.Steps.Grade = pipeline.StepModel{Provider: g.Provider, Model: g.Model}
	return nil
}

// CRAG serves rag_crag (corrective RAG): one pipeline run; if its
// [confidence] is below confidence_threshold, the query is corrected (see
// correction_strategy), the pipeline runs again, and its documents are graded
// against the user's question; the answer comes from the second run only
// when it is more confident than the first (issue 10: a correction to an
// off-topic passage must not replace "no relevant documents"). The second
// run gets only the time the first left before the answer: when that runs
// out, the answer comes from the first run.
func (s *Service) CRAG(ctx context.Context, c tenant.Caller, in CRAGInput) (Response, error) {
	return s.serve(ctx, c, PipelineCRAG, in.Request, func(ctx context.Context, cl *call) (Response, error) {
		threshold := DefaultConfidenceThreshold
		if in.ConfidenceThreshold != nil {
			threshold = *in.ConfidenceThreshold
			if threshold < 0 || threshold > 1 {
				return Response{}, fault.Invalid("confidence_threshold", "%g is outside 0..1", threshold)
			}
		}
		strategy := cmp.Or(in.CorrectionStrategy, StrategyRewrite)
		if !slices.Contains(Strategies, strategy) {
			return Response{}, fault.Invalid("correction_strategy", "%q is not a strategy: use %s", strategy, strings.Join(Strategies, " or "))
		}
		out, err := s.retrieve(ctx, cl, cl.p.Query, cl.p.conversation, cl.p.topK)
		if err != nil {
			return Response{}, err
		}
		docs := byScore(out.Documents, cl.p.topK)
		conf := confidence(out.ContextInput, out, docs)
		initial, applied, corrected := conf, false, ""
		if conf < threshold {
			var again *pipeline.Output
			corrected, again, err = s.correctAndRetrieve(ctx, cl, strategy, out.ContextInput, docs)
			if err != nil {
				return Response{}, err
			}
			if again == nil {
				corrected = ""
			} else {
				againDocs := byScore(again.Documents, cl.p.topK)
				// The second run is judged against the user's question, not
				// the corrected query, and kept only when more confident.
				if c2 := confidence(out.ContextInput, *again, againDocs); c2 > conf {
					again.ContextInput, again.Rephrased = out.ContextInput, out.Rephrased
					again.Degraded = append(slices.Clone(out.Degraded), again.Degraded...)
					out, docs, conf, applied = *again, againDocs, c2, true
				}
			}
		}
		resp, err := s.respond(ctx, cl, out, docs)
		m := &resp.Metadata
		m.CorrectionApplied, m.ConfidenceScore, m.InitialConfidenceScore = ptr(applied), ptr(conf), ptr(initial)
		m.ConfidenceThreshold, m.CorrectionStrategy, m.CorrectedQuery = ptr(threshold), strategy, corrected
		return resp, err
	})
}
