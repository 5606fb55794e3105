package vector_test

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/provider/openai/openaitest"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// modelExtraction is what the stand-in model extracts from graphDocs'
// documents: "Zentrix Optics", named by no document, shows the graph is
// the model's; the bread recipe gets prose, not the JSON asked for.
func modelExtraction(system, _ string) string {
	switch {
	case strings.Contains(system, "Knead the dough"):
		return "This passage is a bread recipe."
	case strings.Contains(system, "Quillfeather Labs builds"):
		return "```json\n" + `{"entities":[{"name":"Quillfeather Labs"},{"name":"Marlow Vance"},{"name":"Zentrix Optics"}],
			"relations":[{"source":"Quillfeather Labs","target":"Zentrix Optics"},{"source":"Marlow Vance","target":"Quillfeather Labs"}]}` + "\n```"
	case strings.Contains(system, "Documents:"):
		return `{"entities":[{"name":"Marlow Vance"},{"name":"Tessaly"},{"name":"Dunmore"}],"relations":[]}`
	}
	return "A community of " + system[:min(len(system), 20)]
}

// ingestGraphDocs creates store alias and ingests graphDocs into it,
// returning the ingest outputs by document.
func ingestGraphDocs(t *testing.T, svc *vector.Service, c tenant.Caller, alias string) map[string]vector.IngestOutput {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.CreateStore(ctx, c, vector.CreateStoreInput{Alias: alias}); err != nil {
		t.Fatal(err)
	}
	out := map[string]vector.IngestOutput{}
	for _, id := range slices.Sorted(mapsKeys(graphDocs)) {
		o, err := svc.Ingest(ctx, c, vector.IngestInput{Store: alias, DocID: id, Content: graphDocs[id]})
		if err != nil {
			t.Fatal(err)
		}
		out[id] = o
	}
	return out
}

func TestAConfiguredGeneratorExtractsTheGraphWithTheTenantsPromptAndFallsBackPerChunk(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, _ := newTenants()
		ctx := context.Background()
		prompts := prompt.NewStore(tbl, nil)
		def, _ := prompt.SpecOf(prompt.GraphExtract)
		override := "Acme's extraction rules.\n" + def.Text
		if _, err := prompts.Set(ctx, acme, prompt.SetInput{Name: prompt.GraphExtract, Text: override}); err != nil {
			t.Fatal(err)
		}
		srv := openaitest.New(t, openaitest.Handlers{Chat: modelExtraction})
		svc := newService(t, tbl, storetest.OpenLocalFS(t), &vector.Options{Generator: srv.Generator(t, "extractor-1"), Prompts: prompts})
		ingested := ingestGraphDocs(t, svc, acme, "world")

		for id, o := range ingested {
			want := 0
			if id == "bread" {
				want = 1
			}
			if o.GraphFallbacks != want {
				t.Errorf("%s: %d chunks fell back, want %d", id, o.GraphFallbacks, want)
			}
		}
		systems := srv.Systems()
		if len(systems) != len(graphDocs) {
			t.Errorf("the model was asked %d times, want once per chunk (%d)", len(systems), len(graphDocs))
		}
		for _, s := range systems {
			if !strings.HasPrefix(s, override) {
				t.Errorf("the model was sent %.60q, want the tenant's extraction prompt", s)
			}
		}
		out := graphSearch(t, svc, acme, "world", "Who supplies Zentrix Optics?")
		if !slices.Contains(out.Graph.EntitiesMatched, "Zentrix Optics") {
			t.Errorf("entities matched %q, want the model's Zentrix Optics", out.Graph.EntitiesMatched)
		}
		if !slices.Contains(docIDs(out), "quill") {
			t.Errorf("documents %q lack the one the model linked to Zentrix Optics", docIDs(out))
		}
		if out.Graph.ExtractionFallbacks != 1 {
			t.Errorf("extraction fallbacks %d, want 1 (the bread recipe)", out.Graph.ExtractionFallbacks)
		}
	})
}

func TestAConfiguredGeneratorWritesTheCommunityReports(t *testing.T) {
	acme, _ := newTenants()
	srv := openaitest.New(t, openaitest.Handlers{Chat: func(system, user string) string {
		if strings.Contains(user, "Entities: ") {
			return "These entities share a harbour town."
		}
		return modelExtraction(system, user)
	}})
	svc := newService(t, storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), &vector.Options{Generator: srv.Generator(t, "writer-1")})
	ingestGraphDocs(t, svc, acme, "world")
	out, err := svc.CommunityReports(context.Background(), acme, vector.ReportsInput{Question: "Quillfeather Labs", Stores: []string{"world"}})
	if err != nil || len(out) != 1 || len(out[0].Reports) == 0 {
		t.Fatalf("reports: %+v, %v", out, err)
	}
	for _, r := range out[0].Reports {
		if r.By != "openai/writer-1" || r.Summary != "These entities share a harbour town." {
			t.Errorf("report %d/%d by %q: %q; want the model's", r.Level, r.Community, r.By, r.Summary)
		}
	}
	def, _ := prompt.SpecOf(prompt.GraphReport)
	if !slices.ContainsFunc(srv.Systems(), func(s string) bool { return strings.HasPrefix(s, def.Text) }) {
		t.Error("no report was asked for with the report prompt")
	}
}

// conceptVector is the stand-in embedding model's vector of a text: one
// dimension for the concept of Quillfeather, however it is spelled, and the
// rest a hash of the text, so that only names of that concept are close.
func conceptVector(text string) []float32 {
	v := make([]float32, 16)
	low := strings.ToLower(text)
	if strings.Contains(low, "quillfeather") || strings.Contains(low, "quill feather") {
		v[0] = 1
	}
	h := fnv.New32a()
	h.Write([]byte(low))
	v[1+h.Sum32()%15] += 0.3
	return v
}

func TestAParaphrasedEntityIsMatchedOnlyWithEntityEmbeddings(t *testing.T) {
	const question = "Where did the person who started Quill Feather Laboratories study?"
	tests := []struct {
		name      string
		termsOnly bool
		want      bool
	}{
		{"with entity embeddings, the paraphrase reaches the entity", false, true},
		{"by terms alone, it does not", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acme, _ := newTenants()
			srv := openaitest.New(t, openaitest.Handlers{Embed: conceptVector})
			o := &vector.Options{Cache: vector.NewCache(64 << 20), TermsOnly: tt.termsOnly}
			svc := vector.New(storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), srv.Embedder(t, "concepts-1", 16), o)
			ingestGraphDocs(t, svc, acme, "world")
			out := graphSearch(t, svc, acme, "world", question)
			if got := slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs"); got != tt.want {
				t.Errorf("entities matched %q: Quillfeather Labs among them %v, want %v", out.Graph.EntitiesMatched, got, tt.want)
			}
		})
	}
}

// The offline generator's extractive answers are no extraction: with it
// configured, graphs are built offline, and nothing falls back.
func TestTheOfflineGeneratorLeavesTheGraphOffline(t *testing.T) {
	acme, _ := newTenants()
	var gen provider.Generator = offline.NewGenerator()
	svc := newService(t, storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), &vector.Options{Generator: gen})
	for id, o := range ingestGraphDocs(t, svc, acme, "world") {
		if o.GraphFallbacks != 0 {
			t.Errorf("%s: %d chunks fell back, want none", id, o.GraphFallbacks)
		}
	}
	if out := graphSearch(t, svc, acme, "world", "Where is Dunmore?"); !slices.Contains(out.Graph.EntitiesMatched, "Dunmore") {
		t.Errorf("entities matched %q, want Dunmore", out.Graph.EntitiesMatched)
	}
}

func TestGraphsAreBackfilledForDocumentsIngestedBeforeGraphs(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, _ := newTenants()
		ctx := context.Background()
		blobs := storetest.OpenLocalFS(t)
		svc := newService(t, tbl, blobs, nil)
		ingestGraphDocs(t, svc, acme, "world")
		graphless := func() int {
			t.Helper()
			n, err := svc.GraphlessShards(ctx, acme, "world")
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err := svc.DropGraphs(ctx, acme, "world"); err != nil {
			t.Fatal(err)
		}
		if n := graphless(); n != len(graphDocs) || len(graphObjects(t, blobs, acme, "world")) != 0 {
			t.Fatalf("%d shards without graphs and packs %v; want every shard's dropped", n, graphObjects(t, blobs, acme, "world"))
		}

		// The retriever, read-only, extracts them in memory.
		question := "Where did the founder of Quillfeather Labs study?"
		out := graphSearch(t, svc, acme, "world", question)
		if !slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") || !slices.Contains(docIDs(out), "marlow") {
			t.Errorf("retrieval before the backfill: entities matched %q, documents %q", out.Graph.EntitiesMatched, docIDs(out))
		}
		if n := graphless(); n != len(graphDocs) || len(graphObjects(t, blobs, acme, "world")) != 0 {
			t.Errorf("the retriever wrote: %d shards without graphs, packs %v", n, graphObjects(t, blobs, acme, "world"))
		}

		// Global search stores them.
		reports := func() {
			t.Helper()
			if _, err := svc.CommunityReports(ctx, acme, vector.ReportsInput{Question: question, Stores: []string{"world"}}); err != nil {
				t.Fatal(err)
			}
		}
		reports()
		packs := slices.DeleteFunc(graphObjects(t, blobs, acme, "world"), func(k string) bool { return strings.Contains(k, "/reports-") })
		if n := graphless(); n != 0 || len(packs) != len(graphDocs) {
			t.Errorf("after global search: %d shards without graphs, %d packs; want none and %d", n, len(packs), len(graphDocs))
		}

		// Nothing is extracted again.
		graphSearch(t, svc, acme, "world", question)
		reports()
		again := slices.DeleteFunc(graphObjects(t, blobs, acme, "world"), func(k string) bool { return strings.Contains(k, "/reports-") })
		if !slices.Equal(again, packs) {
			t.Errorf("later calls rewrote packs: %v, was %v", again, packs)
		}
		if out := graphSearch(t, svc, acme, "world", question); !slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") {
			t.Errorf("retrieval after the backfill: entities matched %q", out.Graph.EntitiesMatched)
		}

		// A deleted document's entities leave.
		if _, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "world", DocID: "quill"}); err != nil {
			t.Fatal(err)
		}
		if out := graphSearch(t, svc, acme, "world", "Where did the founder of Quillfeather Labs study?"); slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") {
			t.Errorf("after deleting its document, entities matched %q still hold Quillfeather Labs", out.Graph.EntitiesMatched)
		}
	})
}

func TestCompactionBackfillsTheGraphsOfTheShardsItMerges(t *testing.T) {
	acme, _ := newTenants()
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	ingestGraphDocs(t, newService(t, tbl, blobs, nil), acme, "world")
	compacting := newService(t, tbl, blobs, &vector.Options{MaxShards: 2})
	if err := compacting.DropGraphs(ctx, acme, "world"); err != nil {
		t.Fatal(err)
	}
	if err := compacting.Compact(ctx, acme, "world"); err != nil {
		t.Fatal(err)
	}
	n, err := compacting.GraphlessShards(ctx, acme, "world")
	if err != nil || n != 0 {
		t.Fatalf("after compaction, %d shards without graphs (%v); want none", n, err)
	}
	if out := graphSearch(t, compacting, acme, "world", "Where did the founder of Quillfeather Labs study?"); !slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") {
		t.Errorf("entities matched %q, want Quillfeather Labs", out.Graph.EntitiesMatched)
	}
}
