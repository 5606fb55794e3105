package handlers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/rag"
)

// world links a company, its founder and a town across documents.
var world = map[string]string{
	"quill":   "Quillfeather Labs builds quantum sensors. Quillfeather Labs was founded by Marlow Vance in Dunmore.",
	"marlow":  "Marlow Vance studied glaciology in Tessaly before becoming an engineer. Marlow Vance later moved to Dunmore.",
	"dunmore": "Dunmore is a harbour town known for its lighthouse and its ferries to Tessaly.",
	"bread":   "Knead the dough for ten minutes, let it rise for an hour, then bake the loaf until the crust is brown.",
}

func TestTheGraphPipelinesAnswerFromTheStoresGraphThroughTheRealPath(t *testing.T) {
	inv := stack(t, nil)
	mustCall(t, inv, alice, "vector_store_create", map[string]any{"alias": "world"})
	for _, id := range []string{"bread", "dunmore", "marlow", "quill"} {
		mustCall(t, inv, alice, "vector_document_ingest", map[string]any{"store": "world", "doc_id": id, "content": world[id]})
	}

	r := decodeRAG(t, mustCall(t, inv, alice, "rag_graphrag", map[string]any{"query": "What did the founder of Quillfeather Labs study?", "stores": []string{"world"}, "top_k": 3}))
	m := r.Metadata
	if m.PipelineName != "graphrag" || !slices.Contains(m.EntitiesMatched, "Quillfeather Labs") || m.GraphTraversalDepth == nil || *m.GraphTraversalDepth != 2 {
		t.Errorf("graphrag metadata %+v", m)
	}
	if len(m.RRFScores) != len(r.RetrievedDocuments) || len(r.RetrievedDocuments) == 0 || m.RRFScores[0] != r.RetrievedDocuments[0].Score {
		t.Errorf("rrf_scores %v for documents %+v", m.RRFScores, r.RetrievedDocuments)
	}
	if !slices.ContainsFunc(r.RetrievedDocuments, func(d rag.RetrievedDocument) bool { return d.DocID == "marlow" }) {
		t.Errorf("the founder's own document is not among %+v", r.RetrievedDocuments)
	}

	g := decodeRAG(t, mustCall(t, inv, alice, "rag_iris_global_graphrag", map[string]any{"query": "Marlow Vance and Quillfeather Labs", "stores": []string{"world"}}))
	gm := g.Metadata
	if gm.PipelineName != "iris_global_graphrag" || gm.CommunityLevel == nil || len(gm.CommunitiesMapped) == 0 || len(gm.CommunitiesUsed) == 0 || gm.ReportsBehind == nil || *gm.ReportsBehind != 0 {
		t.Errorf("global metadata %+v", gm)
	}
	if !strings.Contains(g.Answer, "Marlow Vance") || len(g.Sources) == 0 || len(g.RetrievedDocuments) == 0 || !strings.HasPrefix(g.RetrievedDocuments[0].DocID, "community/world/") {
		t.Errorf("global answer %q, sources %q, documents %+v", g.Answer, g.Sources, g.RetrievedDocuments)
	}

	t.Run("BadArgumentsNameTheirField", func(t *testing.T) {
		for _, tt := range []struct {
			tool  string
			args  map[string]any
			field string
		}{
			{"rag_graphrag", map[string]any{"query": "q", "graph_traversal_depth": 6}, "graph_traversal_depth"},
			{"rag_graphrag", map[string]any{"query": "q", "mode": "bm25"}, "mode"},
			{"rag_iris_global_graphrag", map[string]any{"query": "q", "max_communities": 0}, "max_communities"},
			{"rag_iris_global_graphrag", map[string]any{"query": "q", "filter": map[string]any{"a": []string{"b"}}}, "filter"},
		} {
			if _, ferr := call(t, inv, alice, tt.tool, tt.args); ferr == nil || ferr.Field != tt.field {
				t.Errorf("%s %v: error %+v, want one naming %s", tt.tool, tt.args, ferr, tt.field)
			}
		}
	})
}
