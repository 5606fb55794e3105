package rag

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// confidence scores a pipeline run's retrieval for question, in 0..1: 0 when
// it found nothing or the grader judged the documents not relevant; else the
// query-term coverage of the best document, the share of the question's
// distinct terms that one retrieved document holds. (Retriever scores are
// not comparable across modes and stores, so they are not used.) A grade
// that failed and fell back to relevant counts as relevant.
func confidence(question string, out pipeline.Output, docs []pipeline.Document) float64 {
	if len(docs) == 0 || (out.Graded && out.Relevant == "no") {
		return 0
	}
	q := distinct(terms(question))
	best := 0.0
	for _, d := range docs {
		c, _ := evidence(q, terms(d.Content))
		best = max(best, c)
	}
	return best
}

// expandTerms is how many words the expand strategy adds to a query.
const expandTerms = 5

// expand adds to query the words that recur most across the top documents
// and that the query lacks (pseudo-relevance feedback, as in RM3): words in
// more of the top three documents first, then more frequent ones, then
// earlier ones.
func expand(query string, docs []pipeline.Document) string {
	have := map[string]bool{}
	for _, t := range terms(query) {
		have[t] = true
	}
	type stat struct {
		word       string
		docs, freq int
		first      int
	}
	stats := map[string]*stat{}
	pos := 0
	for _, d := range docs[:min(3, len(docs))] {
		seen := map[string]bool{}
		for _, w := range tokens(d.Content) {
			pos++
			t := terms(w)
			if len(t) != 1 || have[t[0]] || len([]rune(w)) < 3 {
				continue
			}
			st := stats[t[0]]
			if st == nil {
				st = &stat{word: w, first: pos}
				stats[t[0]] = st
			}
			st.freq++
			if !seen[t[0]] {
				seen[t[0]] = true
				st.docs++
			}
		}
	}
	var all []*stat
	for _, st := range stats {
		all = append(all, st)
	}
	slices.SortFunc(all, func(a, b *stat) int {
		return cmp.Or(cmp.Compare(b.docs, a.docs), cmp.Compare(b.freq, a.freq), cmp.Compare(a.first, b.first))
	})
	words := []string{query}
	for _, st := range all[:min(expandTerms, len(all))] {
		words = append(words, st.word)
	}
	return strings.Join(words, " ")
}

// rewriteSystem is the system prompt of crag's rewrite: a hosted model gets
// it in place of the rephrase task's own.
const rewriteSystem = "A search for the user's question found nothing that answers it. Write one different, more specific search query that could find the answer: other words, synonyms, the likely technical terms. Return only the query."

// correct returns the corrected query for a low-confidence retrieval of
// question: rewritten by the generator, with the failed search as context,
// or expanded with terms from the documents. A rewrite that fails or changes
// nothing falls back to expansion.
func (s *Service) correct(ctx context.Context, cl *call, strategy, question string, docs []pipeline.Document) (string, error) {
	if strategy == StrategyRewrite {
		var found []string
		for _, d := range docs[:min(3, len(docs))] {
			found = append(found, truncate(d.Content, 200))
		}
		note := "The search found nothing."
		if len(found) > 0 {
			note = "The search found only these passages, which do not answer it:\n- " + strings.Join(found, "\n- ")
		}
		g, err := s.generate(ctx, cl, provider.GenerateRequest{
			Task: provider.TaskRephrase, System: rewriteSystem, Question: question,
			History:   []provider.Turn{{Role: "user", Content: question}, {Role: "assistant", Content: note}},
			MaxTokens: rephraseTokens,
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

// correctAndRetrieve corrects question and runs the pipeline again for the
// corrected query, within what the first run left of the time before the
// answer. It returns the corrected query and the second run, which is nil
// when the correction changed nothing or that time ran out (no error: the
// answer then comes from the first run).
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

// CRAG serves rag_crag (corrective RAG): one pipeline run; if its
// [confidence] is below confidence_threshold, the query is corrected (see
// correction_strategy) and the pipeline runs again; the answer comes from
// whichever run scored the higher confidence (the corrected one on a tie).
// The second run gets only the time the first left before the answer: when
// that runs out, the answer comes from the first run.
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
			if again != nil {
				applied = true
				againDocs := byScore(again.Documents, cl.p.topK)
				// The second run is judged against the user's question, not the corrected query.
				if c2 := confidence(out.ContextInput, *again, againDocs); c2 >= conf {
					again.ContextInput, again.Rephrased = out.ContextInput, out.Rephrased
					again.Degraded = append(slices.Clone(out.Degraded), again.Degraded...)
					out, docs, conf = *again, againDocs, c2
				}
			}
		}
		resp, err := s.respond(ctx, cl, out, docs)
		m := &resp.Metadata
		m.CorrectionApplied, m.ConfidenceScore, m.InitialConfidenceScore = ptr(applied), ptr(conf), ptr(initial)
		m.ConfidenceThreshold, m.CorrectionStrategy = ptr(threshold), strategy
		if applied {
			m.CorrectedQuery = corrected
		}
		return resp, err
	})
}
