package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/rag"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

var corpus = []struct{ id, source, text string }{
	{"dental-guide", "dental-guide.md", "# Toothbrushes\n\nReplace your toothbrush every three months, or sooner if the bristles fray. A worn toothbrush cleans teeth poorly."},
	{"diabetes", "medical_textbook_ch5.pdf", "Common symptoms of diabetes include increased thirst, frequent urination, extreme hunger and fatigue."},
	{"sleep", "sleep.md", "Adults need seven or more hours of sleep a night. Screens before bed delay sleep."},
}

// ingest creates the store health for c and adds the corpus to it through
// the vector family's tools; it skips t while they are not in the catalog.
func ingest(t *testing.T, inv invoke.Invoker, c tenant.Caller) {
	t.Helper()
	if _, ok := catalog.Default().Tool("vector_document_ingest"); !ok {
		t.Skip("the vector family's tools are not in catalog.Default on this branch yet")
	}
	mustCall(t, inv, c, "vector_store_create", map[string]any{"alias": "health", "description": "health and hygiene guides"})
	for _, d := range corpus {
		mustCall(t, inv, c, "vector_document_ingest", map[string]any{"store": "health", "doc_id": d.id, "content": d.text, "format": "md", "metadata": map[string]string{"source": d.source}})
	}
}

func decodeFlow(t *testing.T, sc json.RawMessage) rag.Response {
	t.Helper()
	var r rag.Response
	if err := json.Unmarshal(sc, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// The full local flow: documents ingested through the real vector tools,
// answered by rag_basic through the real state machine and steps.
func TestRAGBasicAnswersFromIngestedDocuments(t *testing.T) {
	inv := stack(t, nil)
	ingest(t, inv, alice)
	r := decodeFlow(t, mustCall(t, inv, alice, "rag_basic", map[string]any{"query": "How often should I replace my toothbrush?", "top_k": 2}))
	if !strings.Contains(r.Answer, "three months") {
		t.Errorf("answer %q does not say three months", r.Answer)
	}
	if len(r.RetrievedDocuments) == 0 || r.RetrievedDocuments[0].DocID != "dental-guide" || r.RetrievedDocuments[0].Metadata["source"] != "dental-guide.md" {
		t.Errorf("documents %+v", r.RetrievedDocuments)
	}
	if !slices.Contains(r.Sources, "dental-guide.md") {
		t.Errorf("sources %v", r.Sources)
	}
	m := r.Metadata
	if m.PipelineName != "basic" || m.Relevant != "yes" || !m.Graded || len(m.Degraded) != 0 || m.Provider != offline.Name ||
		m.Steps.Grade.Model != offline.GeneratorModel || m.Steps.Retrieve != (pipeline.StepModel{Provider: offline.Name, Model: offline.EmbedderModel}) ||
		!slices.Contains(m.SearchedStores, "health") {
		t.Errorf("metadata %+v", m)
	}
	if r.ResponseID == "" || r.PerformanceMetrics.ExecutionTimeMS < r.PerformanceMetrics.RetrievalTimeMS {
		t.Errorf("response id %q, metrics %+v", r.ResponseID, r.PerformanceMetrics)
	}

	t.Run("AnotherTenantFindsNone", func(t *testing.T) {
		r := decodeFlow(t, mustCall(t, inv, bob, "rag_basic", map[string]any{"query": "How often should I replace my toothbrush?"}))
		if len(r.RetrievedDocuments) != 0 || len(r.Sources) != 0 || r.Answer != "" {
			t.Errorf("bob got %+v", r)
		}
	})
	t.Run("RerankAndCRAG", func(t *testing.T) {
		r := decodeFlow(t, mustCall(t, inv, alice, "rag_basic_rerank", map[string]any{"query": "symptoms of diabetes", "top_k": 1}))
		if len(r.RetrievedDocuments) != 1 || r.RetrievedDocuments[0].DocID != "diabetes" || r.Metadata.Reranker == "" {
			t.Errorf("rerank: %+v", r)
		}
		r = decodeFlow(t, mustCall(t, inv, alice, "rag_crag", map[string]any{"query": "symptoms of diabetes"}))
		if r.Metadata.CorrectionApplied == nil || *r.Metadata.CorrectionApplied || *r.Metadata.ConfidenceScore != 1 {
			t.Errorf("crag: %+v", r.Metadata)
		}
		r = decodeFlow(t, mustCall(t, inv, alice, "rag_crag", map[string]any{"query": "toothbrush bristles fluoride", "correction_strategy": "expand"}))
		// The corrected query finds the same passage: no more confident, so not used.
		if m := r.Metadata; m.CorrectionApplied == nil || *m.CorrectionApplied || m.CorrectedQuery == "" || *m.ConfidenceScore != *m.InitialConfidenceScore {
			t.Errorf("crag with a partly covered query: %+v", r.Metadata)
		}
	})
	t.Run("AStoreThatDoesNotExistFailsTheCall", func(t *testing.T) {
		for _, tool := range []string{"rag_basic", "rag_basic_rerank", "rag_crag"} {
			_, ferr := call(t, inv, alice, tool, map[string]any{"query": "How often should I replace my toothbrush?", "stores": []string{"health", "recipes"}})
			if ferr == nil || ferr.Kind != "not_found" || ferr.Field != "stores" || !strings.Contains(ferr.Message, `"recipes" does not exist`) {
				t.Errorf("%s: got %+v, want not_found naming stores and the missing store", tool, ferr)
			}
		}
	})
	t.Run("HealthCountsTheCallsButNotTheRefusedOnes", func(t *testing.T) {
		var h rag.HealthOutput
		json.Unmarshal(mustCall(t, inv, alice, "rag_health_check", map[string]any{}), &h)
		if h.OverallStatus != rag.Healthy || h.PipelineStatuses["basic"].Queries != 1 || h.PipelineStatuses["basic_rerank"].Queries != 1 || !h.DatabaseStatus.Connected {
			t.Errorf("health %+v", h)
		}
	})
}

// failing is a step function that crashes, as a Lambda that panics or times out does.
var failingFlow = lambda.NewHandler(func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("step crashed")
})

func TestFailingRealStepFunctionsDegradeThePipeline(t *testing.T) {
	for _, tc := range []struct {
		broken   string
		degraded []string
		docs     bool
	}{
		{"vector/rephrase", []string{rag.StepRephrase}, true},
		{"vector/retriever", []string{rag.StepRetrieve}, false},
		{"vector/grade", []string{rag.StepGrade}, true},
	} {
		t.Run(tc.broken, func(t *testing.T) {
			inv := stack(t, map[string]lambda.Handler{tc.broken: failingFlow})
			ingest(t, inv, alice)
			r := decodeFlow(t, mustCall(t, inv, alice, "rag_basic", map[string]any{"query": "How often should I replace my toothbrush?"}))
			if !slices.Equal(r.Metadata.Degraded, tc.degraded) || (len(r.RetrievedDocuments) > 0) != tc.docs {
				t.Errorf("degraded %v with %d documents, want %v and documents %v", r.Metadata.Degraded, len(r.RetrievedDocuments), tc.degraded, tc.docs)
			}
			if tc.broken == "vector/grade" && (r.Metadata.Graded || r.Metadata.Relevant != "yes") {
				t.Errorf("a failed grade should keep the documents: %+v", r.Metadata)
			}
		})
	}
}

// rag_pylate_colbert through the local stack: token vectors built from the
// ingested store on the first call, both candidate sources, and the
// late-interaction metadata.
func TestRAGPylateColbertAnswersByLateInteraction(t *testing.T) {
	inv := stack(t, nil)
	ingest(t, inv, alice)
	for _, source := range []string{"hybrid", "centroid"} {
		t.Run(source, func(t *testing.T) {
			r := decodeFlow(t, mustCall(t, inv, alice, "rag_pylate_colbert", map[string]any{"query": "How often should I replace my toothbrush?", "top_k": 2, "candidate_source": source}))
			if len(r.RetrievedDocuments) == 0 || r.RetrievedDocuments[0].DocID != "dental-guide" || !strings.Contains(r.Answer, "three months") {
				t.Errorf("documents %+v, answer %q", r.RetrievedDocuments, r.Answer)
			}
			m := r.Metadata
			if m.PipelineName != "pylate_colbert" || m.CandidateSource != source || m.Candidates == nil || *m.Candidates == 0 ||
				m.CompressionRatio == nil || *m.CompressionRatio < 10 || m.TokenInteractions == nil || *m.TokenInteractions == 0 ||
				m.TokenEmbedder == nil || m.TokenEmbedder.Provider != offline.Name || m.Relevant != "yes" || !m.Graded || len(m.Degraded) != 0 {
				t.Errorf("metadata %+v", m)
			}
		})
	}
	t.Run("ABadCandidateSourceNamesTheField", func(t *testing.T) {
		_, ierr := call(t, inv, alice, "rag_pylate_colbert", map[string]any{"query": "toothbrush", "candidate_source": "magic"})
		if ierr == nil || ierr.Field != "candidate_source" {
			t.Errorf("error %+v, want one naming candidate_source", ierr)
		}
	})
}

// A model override outside the allow-list fails the call naming the field:
// llm_model in the pipeline tool, embedding_model in the retriever, whose
// refusal the state machine carries back.
func TestModelOverridesOutsideTheAllowListNameTheField(t *testing.T) {
	inv := stack(t, nil)
	ingest(t, inv, alice)
	for _, tc := range []struct{ field, model string }{{"llm_model", "gpt-9"}, {"embedding_model", "text-embedding-9"}} {
		for _, tool := range []string{"rag_basic", "rag_basic_rerank", "rag_crag", "rag_pylate_colbert"} {
			t.Run(tool+" "+tc.field, func(t *testing.T) {
				_, ierr := call(t, inv, alice, tool, map[string]any{"query": "How often should I replace my toothbrush?", tc.field: tc.model})
				if ierr == nil || ierr.Field != tc.field || !strings.Contains(ierr.Message, tc.model) {
					t.Errorf("error %+v, want one naming %s and %s", ierr, tc.field, tc.model)
				}
			})
		}
	}
}
