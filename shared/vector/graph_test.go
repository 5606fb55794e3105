package vector_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// graphDocs link people, companies and places across documents: the
// question about Quillfeather's founder reaches the founder's own document
// only through the graph.
var graphDocs = map[string]string{
	"quill":   "Quillfeather Labs builds quantum sensors. Quillfeather Labs was founded by Marlow Vance in Dunmore.",
	"marlow":  "Marlow Vance studied glaciology before becoming an engineer. Marlow Vance later moved to Tessaly.",
	"dunmore": "Dunmore is a harbour town known for its lighthouse and its ferries to Tessaly.",
	"bread":   "Knead the dough for ten minutes, let it rise for an hour, then bake the loaf until the crust is brown.",
}

func graphObjects(t *testing.T, blobs store.Blobs, c tenant.Caller, alias string) []string {
	t.Helper()
	page, err := blobs.List(context.Background(), tenant.BlobPrefix(c.Tenant)+"vector/"+alias+"/graph/", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, b := range page.Blobs {
		keys = append(keys, b.Key)
	}
	return keys
}

func graphSearch(t *testing.T, svc *vector.Service, c tenant.Caller, alias, question string) vector.RetrieveOutput {
	t.Helper()
	depth := 2
	out, err := svc.Retrieve(context.Background(), c, vector.RetrieveInput{Question: question, Stores: []string{alias}, TopK: 4, GraphTraversalDepth: &depth})
	if err != nil {
		t.Fatalf("retrieve %q: %v", question, err)
	}
	if out.Graph == nil {
		t.Fatalf("retrieve %q: no graph section", question)
	}
	return out
}

func TestTheEntityGraphFollowsTheDocumentsLifecycle(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, _ := newTenants()
		ctx := context.Background()
		blobs := storetest.OpenLocalFS(t)
		svc := newService(t, tbl, blobs, &vector.Options{MaxShards: 3})
		if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "world"}); err != nil {
			t.Fatal(err)
		}
		for _, id := range slices.Sorted(mapsKeys(graphDocs)) {
			if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "world", DocID: id, Content: graphDocs[id]}); err != nil {
				t.Fatal(err)
			}
		}

		out := graphSearch(t, svc, acme, "world", "Where did the founder of Quillfeather Labs study?")
		if !slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") {
			t.Errorf("entities matched %q, want Quillfeather Labs among them", out.Graph.EntitiesMatched)
		}
		if got := docIDs(out); !slices.Contains(got, "marlow") {
			t.Errorf("documents %q: the founder's own document is missing", got)
		}
		for i := 1; i < len(out.Documents); i++ {
			if out.Documents[i].Score > out.Documents[i-1].Score {
				t.Errorf("documents out of rrf_score order: %v", out.Documents)
			}
		}

		// Ingesting an unchanged document writes no graph.
		before := graphObjects(t, blobs, acme, "world")
		if o, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "world", DocID: "quill", Content: graphDocs["quill"]}); err != nil || o.Status != "unchanged" {
			t.Fatalf("ingest again: %+v, %v", o, err)
		}
		if after := graphObjects(t, blobs, acme, "world"); !slices.Equal(before, after) {
			t.Errorf("an unchanged document changed the graph objects: %q, then %q", before, after)
		}

		// Compaction (past 3 shards) keeps every document's graph; one pack per shard.
		if err := svc.Compact(ctx, acme, "world"); err != nil {
			t.Fatal(err)
		}
		st, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "world"})
		if err != nil {
			t.Fatal(err)
		}
		if packs := len(graphObjects(t, blobs, acme, "world")); packs != st.Shards {
			t.Errorf("%d graph packs for %d shards", packs, st.Shards)
		}
		if out := graphSearch(t, svc, acme, "world", "Where did the founder of Quillfeather Labs study?"); !slices.Contains(out.Graph.EntitiesMatched, "Quillfeather Labs") {
			t.Errorf("after compaction, entities matched %q", out.Graph.EntitiesMatched)
		}

		// A deleted document's entities leave; a replaced one's old entities too.
		if _, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "world", DocID: "quill"}); err != nil {
			t.Fatal(err)
		}
		if out := graphSearch(t, svc, acme, "world", "Quillfeather Labs"); len(out.Graph.EntitiesMatched) != 0 || len(out.Documents) != 0 && out.Documents[0].DocID == "quill" {
			t.Errorf("after deleting its document, Quillfeather Labs still matched %q, documents %q", out.Graph.EntitiesMatched, docIDs(out))
		}
		if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "world", DocID: "dunmore", Content: "Brackwater is a harbour town known for its lighthouse."}); err != nil {
			t.Fatal(err)
		}
		if out := graphSearch(t, svc, acme, "world", "the Dunmore harbour"); slices.Contains(out.Graph.EntitiesMatched, "Dunmore") {
			t.Errorf("after replacing its only document, Dunmore still matched")
		}
	})
}

func TestConcurrentIngestsLoseNoEntities(t *testing.T) {
	acme, _ := newTenants()
	ctx := context.Background()
	tbl := storetest.OpenEmbedded(t)
	blobs := storetest.OpenLocalFS(t)
	var procs []*vector.Service
	for range 3 {
		procs = append(procs, newService(t, tbl, blobs, &vector.Options{MaxShards: 4}))
	}
	if _, err := procs[0].CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "crowd"}); err != nil {
		t.Fatal(err)
	}
	const n = 10
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			content := fmt.Sprintf("Zorvex%c Holdings opened an office. Zorvex%c Holdings hired engineers.", 'A'+i, 'A'+i)
			if _, err := procs[i%len(procs)].Ingest(ctx, acme, vector.IngestInput{Store: "crowd", DocID: fmt.Sprintf("doc%02d", i), Content: content}); err != nil {
				t.Errorf("ingest %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		name := fmt.Sprintf("Zorvex%c Holdings", 'A'+i)
		out := graphSearch(t, procs[0], acme, "crowd", "What did "+name+" do?")
		if !slices.ContainsFunc(out.Graph.EntitiesMatched, func(e string) bool { return strings.EqualFold(e, name) }) {
			t.Errorf("%s: entities matched %q", name, out.Graph.EntitiesMatched)
		}
	}
}

func TestCommunityReportsAreStoredAndRebuiltPastTheirStalenessBound(t *testing.T) {
	acme, _ := newTenants()
	ctx := context.Background()
	blobs := storetest.OpenLocalFS(t)
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "world"}); err != nil {
		t.Fatal(err)
	}
	ingest := func(id, content string) {
		t.Helper()
		if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "world", DocID: id, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range slices.Sorted(mapsKeys(graphDocs)) {
		ingest(id, graphDocs[id])
	}
	reports := func() vector.StoreReports {
		t.Helper()
		out, err := svc.CommunityReports(ctx, acme, vector.ReportsInput{Question: "Quillfeather Labs", Stores: []string{"world"}})
		if err != nil || len(out) != 1 {
			t.Fatalf("reports: %+v, %v", out, err)
		}
		return out[0]
	}
	stored := func() (n int) {
		for _, k := range graphObjects(t, blobs, acme, "world") {
			if strings.Contains(k, "/reports-") {
				n++
			}
		}
		return n
	}
	first := reports()
	if !first.Built || first.Behind != 0 || len(first.Reports) == 0 || stored() != 1 {
		t.Fatalf("first call: built %v, behind %d, %d reports, %d stored", first.Built, first.Behind, len(first.Reports), stored())
	}
	if again := reports(); again.Built || again.Version != first.Version {
		t.Errorf("second call rebuilt them (built %v, version %d, first %d)", again.Built, again.Version, first.Version)
	}
	ingest("extra0", "Halvard Penn founded Brackwater Mills.")
	if r := reports(); r.Built || r.Behind != 1 {
		t.Errorf("one document later: built %v, behind %d; want the stored ones, 1 behind", r.Built, r.Behind)
	}
	for i := 1; i <= vector.MinReportsStaleness; i++ {
		ingest(fmt.Sprintf("extra%d", i), fmt.Sprintf("Halvard Penn%c opened a mill in Brackwater.", 'a'+i))
	}
	if r := reports(); !r.Built || r.Behind != 0 || stored() != 1 {
		t.Errorf("past the bound: built %v, behind %d, %d stored; want rebuilt, current, the old ones deleted", r.Built, r.Behind, stored())
	}
}
