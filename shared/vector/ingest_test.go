package vector_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

const testDims = 64

// newService returns a service on tbl and blobs with the offline embedder
// and a cache of its own.
func newService(t *testing.T, tbl store.Table, blobs store.Blobs, opts *vector.Options) *vector.Service {
	t.Helper()
	o := vector.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Cache == nil {
		o.Cache = vector.NewCache(64 << 20)
	}
	return vector.New(tbl, blobs, offline.NewEmbedder(testDims), &o)
}

// docs are small documents on distinct topics.
var docs = map[string]string{
	"tides.md":    "# Tides\n\nTides are the rise and fall of sea levels caused by the gravity of the moon and the sun. Spring tides happen at full and new moon.",
	"bread.md":    "# Baking bread\n\nKnead the dough for ten minutes, let it rise for an hour, then bake the loaf at 220 degrees until the crust is brown.",
	"volcanos.md": "# Volcanoes\n\nA volcano erupts when magma rises through the crust. Basalt lava flows are runny; andesite lava builds steep cones.",
	"chess.md":    "# Chess openings\n\nThe Sicilian defence answers 1.e4 with c5. The Queen's Gambit offers a pawn to gain control of the centre.",
}

func ingestAll(t *testing.T, svc *vector.Service, c tenant.Caller, alias string) {
	t.Helper()
	for _, name := range slices.Sorted(mapsKeys(docs)) {
		out, err := svc.Ingest(context.Background(), c, vector.IngestInput{Store: alias, FileName: name, Content: docs[name], Metadata: map[string]string{"topic": strings.TrimSuffix(name, ".md")}})
		if err != nil {
			t.Fatalf("ingest %s: %v", name, err)
		}
		if out.Status != "added" || out.Chunks != 1 || out.Provider != offline.Name || out.Dims != testDims {
			t.Fatalf("ingest %s: %+v", name, out)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func topDoc(t *testing.T, svc *vector.Service, c tenant.Caller, in vector.RetrieveInput) string {
	t.Helper()
	out, err := svc.Retrieve(context.Background(), c, in)
	if err != nil {
		t.Fatalf("retrieve %q: %v", in.Question, err)
	}
	if len(out.Documents) == 0 {
		return ""
	}
	return out.Documents[0].DocID
}

func docIDs(out vector.RetrieveOutput) []string {
	var ids []string
	for _, d := range out.Documents {
		ids = append(ids, d.DocID)
	}
	return ids
}

func TestIngestAndRetrieve(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		svc := newService(t, tbl, storetest.OpenLocalFS(t), nil)
		if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes", Description: "Assorted notes"}); err != nil {
			t.Fatal(err)
		}
		ingestAll(t, svc, acme, "notes")

		for _, mode := range []string{"bm25", "vector", "hybrid", ""} {
			t.Run("mode "+mode+" finds the document about the question", func(t *testing.T) {
				out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "what makes lava erupt from a volcano?", Mode: mode, Stores: []string{"notes"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Documents) == 0 || out.Documents[0].DocID != "volcanos.md" {
					t.Fatalf("documents %v, want volcanos.md first", docIDs(out))
				}
				d := out.Documents[0]
				if d.Store != "notes" || d.ChunkID == "" || !strings.Contains(d.Content, "magma") || d.Metadata["topic"] != "volcanos" ||
					d.Metadata[vector.MetaSource] != "volcanos.md" || d.Metadata[vector.MetaTitle] != "Volcanoes" {
					t.Errorf("document %+v", d)
				}
				wantProvider := offline.Name
				if mode == "bm25" {
					wantProvider = ""
				}
				if out.Provider != wantProvider || !slices.Equal(out.SearchedStores, []string{"notes"}) || out.ContextInput != "what makes lava erupt from a volcano?" {
					t.Errorf("provider %q, searched %v, context %q", out.Provider, out.SearchedStores, out.ContextInput)
				}
			})
		}
		t.Run("top_k bounds the documents", func(t *testing.T) {
			out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "the crust", TopK: 1})
			if err != nil || len(out.Documents) != 1 {
				t.Fatalf("%v, %v; want one document", docIDs(out), err)
			}
		})
		t.Run("a filter keeps only matching chunks", func(t *testing.T) {
			out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "the crust", Filter: map[string][]string{"topic": {"bread"}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"bread.md"}, docIDs(out)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
		t.Run("the store counts documents and chunks", func(t *testing.T) {
			st, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
			if err != nil || st.Documents != 4 || st.Chunks != 4 || st.Version != 4 {
				t.Errorf("store %+v, %v; want 4 documents, 4 chunks, version 4", st, err)
			}
			list, err := svc.ListDocuments(ctx, acme, vector.ListDocumentsInput{Store: "notes"})
			if err != nil || len(list.Documents) != 4 || list.Documents[0].DocID != "bread.md" || list.Documents[0].Title != "Baking bread" {
				t.Errorf("documents %+v, %v", list.Documents, err)
			}
		})
	})
}

func TestReingestSkipsReplacesAndDeletes(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		svc := newService(t, tbl, storetest.OpenLocalFS(t), nil)
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		ingestAll(t, svc, acme, "notes")
		before, _ := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
		in := vector.IngestInput{Store: "notes", FileName: "tides.md", Content: docs["tides.md"], Metadata: map[string]string{"topic": "tides"}}

		t.Run("the same content again is skipped", func(t *testing.T) {
			out, err := svc.Ingest(ctx, acme, in)
			if err != nil || out.Status != "unchanged" || out.Chunks != 1 {
				t.Fatalf("%+v, %v; want unchanged", out, err)
			}
			after, _ := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
			if after.Version != before.Version || after.Shards != before.Shards {
				t.Errorf("store changed: %+v -> %+v", before, after)
			}
		})
		t.Run("changed metadata is a change", func(t *testing.T) {
			in2 := in
			in2.Metadata = map[string]string{"topic": "sea"}
			out, err := svc.Ingest(ctx, acme, in2)
			if err != nil || out.Status != "replaced" {
				t.Fatalf("%+v, %v; want replaced", out, err)
			}
			got, _ := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "moon tides", Filter: map[string][]string{"topic": {"tides"}}})
			if len(got.Documents) != 0 {
				t.Errorf("the old version's metadata still matches: %v", docIDs(got))
			}
		})
		t.Run("changed content replaces the old chunks", func(t *testing.T) {
			in3 := in
			in3.Content = "# Tides\n\nA tidal bore is a wave that travels up a river against the current."
			out, err := svc.Ingest(ctx, acme, in3)
			if err != nil || out.Status != "replaced" || out.Removed != 1 || out.Chunks != 1 {
				t.Fatalf("%+v, %v; want replaced, 1 removed", out, err)
			}
			for _, mode := range vector.Modes {
				got, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "spring tides full moon gravity", Mode: mode, TopK: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range got.Documents {
					if strings.Contains(d.Content, "Spring tides") {
						t.Errorf("mode %s: the replaced text is still found: %+v", mode, d)
					}
				}
			}
			if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "tidal bore river wave"}); top != "tides.md" {
				t.Errorf("new text: top document %q, want tides.md", top)
			}
			st, _ := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
			if st.Documents != 4 || st.Chunks != 4 {
				t.Errorf("store %+v; want 4 documents, 4 chunks", st)
			}
		})
		t.Run("a deleted document leaves search", func(t *testing.T) {
			out, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "notes", DocID: "chess.md"})
			if err != nil || out.Removed != 1 {
				t.Fatalf("%+v, %v", out, err)
			}
			for _, mode := range vector.Modes {
				got, _ := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "Sicilian defence chess opening", Mode: mode, TopK: 10})
				if slices.Contains(docIDs(got), "chess.md") {
					t.Errorf("mode %s: chess.md still found", mode)
				}
			}
			st, _ := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
			if st.Documents != 3 || st.Chunks != 3 {
				t.Errorf("store %+v; want 3 documents, 3 chunks", st)
			}
			_, err = svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "notes", DocID: "chess.md"})
			wantKind(t, err, fault.KindNotFound)
		})
		t.Run("re-adding a deleted document brings it back", func(t *testing.T) {
			out, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", FileName: "chess.md", Content: docs["chess.md"]})
			if err != nil || out.Status != "added" {
				t.Fatalf("%+v, %v", out, err)
			}
			if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "Sicilian defence"}); top != "chess.md" {
				t.Errorf("top document %q, want chess.md", top)
			}
		})
	})
}

func TestIngestRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	blobs := &vector.CountingBlobs{Blobs: storetest.OpenLocalFS(t)}
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
	for _, tc := range []struct {
		name  string
		in    vector.IngestInput
		kind  fault.Kind
		field string
	}{
		{"a bad store alias", vector.IngestInput{Store: "No Store", FileName: "a.md", Content: "x"}, fault.KindInvalid, "store"},
		{"an unknown store", vector.IngestInput{Store: "nothing", FileName: "a.md", Content: "x"}, fault.KindNotFound, ""},
		{"no content at all", vector.IngestInput{Store: "notes", FileName: "a.md"}, fault.KindInvalid, "content"},
		{"content given twice", vector.IngestInput{Store: "notes", FileName: "a.md", Content: "x", Key: "tenants/acme/a.md"}, fault.KindInvalid, "content"},
		{"a key outside the tenant", vector.IngestInput{Store: "notes", Key: "tenants/globex/documents/notes/a.md"}, fault.KindInvalid, "key"},
		{"a key climbing out of the tenant", vector.IngestInput{Store: "notes", Key: "tenants/acme/../globex/a.md"}, fault.KindInvalid, "key"},
		{"a missing object", vector.IngestInput{Store: "notes", Key: "tenants/acme/none.md"}, fault.KindNotFound, ""},
		{"an unsupported format", vector.IngestInput{Store: "notes", FileName: "a.xls", Content: "x"}, fault.KindInvalid, "file_name"},
		{"an unknown format name", vector.IngestInput{Store: "notes", Format: "xls", DocID: "a", Content: "x"}, fault.KindInvalid, "format"},
		{"a corrupt PDF", vector.IngestInput{Store: "notes", FileName: "a.pdf", ContentBase64: base64.StdEncoding.EncodeToString([]byte("not a pdf"))}, fault.KindInvalid, "content_base64"},
		{"base64 that is not", vector.IngestInput{Store: "notes", FileName: "a.pdf", ContentBase64: "%%%"}, fault.KindInvalid, "content_base64"},
		{"binary without a file name", vector.IngestInput{Store: "notes", DocID: "a", ContentBase64: "AAAA"}, fault.KindInvalid, "file_name"},
		{"text without any id", vector.IngestInput{Store: "notes", Content: "some text"}, fault.KindInvalid, "doc_id"},
		{"a doc id with a control character", vector.IngestInput{Store: "notes", DocID: "a\nb", Content: "x"}, fault.KindInvalid, "doc_id"},
		{"blank text", vector.IngestInput{Store: "notes", DocID: "a", Content: "  \n\n "}, fault.KindInvalid, "content"},
		{"too many metadata keys", vector.IngestInput{Store: "notes", DocID: "a", Content: "x", Metadata: manyKeys(vector.MaxMetadataKeys + 1)}, fault.KindInvalid, "metadata"},
		{"a bad metadata key", vector.IngestInput{Store: "notes", DocID: "a", Content: "x", Metadata: map[string]string{"a b": "x"}}, fault.KindInvalid, "metadata"},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			gets, heads := blobs.Gets.Load(), blobs.Heads.Load()
			_, err := svc.Ingest(ctx, acme, tc.in)
			wantKind(t, err, tc.kind)
			if f, ok := err.(*fault.Error); tc.field != "" && (!ok || f.Field != tc.field) {
				t.Errorf("error %v names the wrong field; want %s", err, tc.field)
			}
			if strings.HasPrefix(tc.name, "a key") && (blobs.Gets.Load() != gets || blobs.Heads.Load() != heads) {
				t.Errorf("the object store was read before the key was refused")
			}
		})
	}
}

func manyKeys(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

func TestWrongEmbedderIsRefused(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	small := vector.New(tbl, blobs, offline.NewEmbedder(32), &vector.Options{Cache: vector.NewCache(1 << 20)})
	if _, err := small.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "small"}); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Ingest(ctx, acme, vector.IngestInput{Store: "small", DocID: "a", Content: docs["tides.md"]}); err != nil {
		t.Fatal(err)
	}
	svc := newService(t, tbl, blobs, nil)
	_, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "small", DocID: "b", Content: docs["bread.md"]})
	wantKind(t, err, fault.KindInvalid)
	if !strings.Contains(err.Error(), "32 dimensions") || !strings.Contains(err.Error(), "64 dimensions") {
		t.Errorf("error %q does not name both embedders", err)
	}
	_, err = svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides", Stores: []string{"small"}})
	wantKind(t, err, fault.KindInvalid)
	out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides"})
	if err != nil || len(out.SearchedStores) != 0 {
		t.Errorf("store selection searched %v, %v; want the other embedder's store left out", out.SearchedStores, err)
	}
}

func TestRetrieveRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
	for _, tc := range []struct {
		name  string
		in    vector.RetrieveInput
		kind  fault.Kind
		field string
	}{
		{"an empty question", vector.RetrieveInput{Question: " "}, fault.KindInvalid, "question"},
		{"a question too long", vector.RetrieveInput{Question: strings.Repeat("a", vector.MaxQuestionChars+1)}, fault.KindInvalid, "question"},
		{"top_k over 50", vector.RetrieveInput{Question: "q", TopK: 51}, fault.KindInvalid, "top_k"},
		{"a negative top_k", vector.RetrieveInput{Question: "q", TopK: -1}, fault.KindInvalid, "top_k"},
		{"an unknown mode", vector.RetrieveInput{Question: "q", Mode: "semantic"}, fault.KindInvalid, "mode"},
		{"a bad store alias", vector.RetrieveInput{Question: "q", Stores: []string{"A B"}}, fault.KindInvalid, "stores"},
		{"an unknown store", vector.RetrieveInput{Question: "q", Stores: []string{"nothing"}}, fault.KindNotFound, ""},
		{"a filter key without values", vector.RetrieveInput{Question: "q", Filter: map[string][]string{"topic": {}}}, fault.KindInvalid, "filter"},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			_, err := svc.Retrieve(ctx, acme, tc.in)
			wantKind(t, err, tc.kind)
			if f, ok := err.(*fault.Error); tc.field != "" && (!ok || f.Field != tc.field) {
				t.Errorf("error %v names the wrong field; want %s", err, tc.field)
			}
		})
	}
	t.Run("an empty store returns no documents", func(t *testing.T) {
		out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "anything", Stores: []string{"notes"}})
		if err != nil || len(out.Documents) != 0 || len(out.SearchedStores) != 1 {
			t.Errorf("%+v, %v", out, err)
		}
	})
	t.Run("a tenant without stores gets no documents", func(t *testing.T) {
		out, err := svc.Retrieve(ctx, globex, vector.RetrieveInput{Question: "anything"})
		if err != nil || len(out.Documents) != 0 || len(out.SearchedStores) != 0 {
			t.Errorf("%+v, %v", out, err)
		}
	})
}

func TestIngestFromAnObjectKey(t *testing.T) {
	storetest.EachBlobs(t, func(t *testing.T, blobs store.Blobs) {
		ctx := context.Background()
		svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		key := "tenants/acme/documents/notes/guides/bread.md"
		if _, err := blobs.Put(ctx, key, []byte(docs["bread.md"]), nil); err != nil {
			t.Fatal(err)
		}
		out, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", Key: key})
		if err != nil || out.DocID != "guides/bread.md" || out.Status != "added" {
			t.Fatalf("%+v, %v; want doc id guides/bread.md", out, err)
		}
		other := "tenants/acme/uploads/volcanos.md"
		blobs.Put(ctx, other, []byte(docs["volcanos.md"]), nil)
		out, err = svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", Key: other})
		if err != nil || out.DocID != "volcanos.md" {
			t.Fatalf("%+v, %v; want doc id volcanos.md", out, err)
		}
		res, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "knead the dough"})
		if err != nil || len(res.Documents) == 0 || res.Documents[0].Metadata[vector.MetaSource] != key {
			t.Errorf("%+v, %v; want the key as source", res.Documents, err)
		}
	})
}

func TestConcurrentIngestsLoseNothing(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		const n = 12
		// A low shard limit makes compactions run, and race, among the ingests:
		// of several processes, since one process compacts a store once at a time.
		blobs := storetest.OpenLocalFS(t)
		var procs []*vector.Service
		for range 3 {
			procs = append(procs, newService(t, tbl, blobs, &vector.Options{MaxShards: 4}))
		}
		svc := procs[0]
		if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "crowd"}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				content := fmt.Sprintf("Document %d is about the word zq%dword and nothing else.", i, i)
				if _, err := procs[i%len(procs)].Ingest(ctx, acme, vector.IngestInput{Store: "crowd", DocID: fmt.Sprintf("doc%02d", i), Content: content}); err != nil {
					t.Errorf("ingest %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		st, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "crowd"})
		if err != nil || st.Documents != n || st.Chunks != n {
			t.Fatalf("store %+v, %v; want %d documents and chunks", st, err, n)
		}
		for i := range n {
			want := fmt.Sprintf("doc%02d", i)
			if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: fmt.Sprintf("zq%dword", i), Mode: "bm25"}); top != want {
				t.Errorf("zq%dword: top document %q, want %s", i, top, want)
			}
		}
	})
}

// TestAKeyReachesALocalFile puts a file by hand where a local server keeps
// blobs, at its key's path, and ingests it by key; a missing key says which
// file it looked for.
func TestAKeyReachesALocalFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	blobs := localfs.New(dir)
	t.Cleanup(func() { blobs.Close() })
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
	p := filepath.Join(dir, "tenants", "acme", "docs", "Tides.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(docs["tides.md"]), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", Key: "tenants/acme/docs/Tides.md"})
	if err != nil || out.Status != "added" || out.DocID != "Tides.md" {
		t.Fatalf("Ingest(key of a local file) = %+v, %v; want it added as Tides.md", out, err)
	}
	_, err = svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", Key: "tenants/acme/docs/none.md"})
	wantKind(t, err, fault.KindNotFound)
	if want := filepath.Join(dir, "tenants", "acme", "docs", "none.md"); !strings.Contains(err.Error(), "looked for the file "+want) {
		t.Errorf("error %q does not say it looked for %s", err, want)
	}
}

func TestADocumentWithoutTextIsErrNoText(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
	for _, in := range []vector.IngestInput{
		{Store: "notes", DocID: "blank", Content: " \n\n\t"},
		{Store: "notes", FileName: "blank.md", ContentBase64: base64.StdEncoding.EncodeToString([]byte("\n\n"))},
	} {
		_, err := svc.Ingest(ctx, acme, in)
		if !errors.Is(err, vector.ErrNoText) || fault.KindOf(err) != fault.KindInvalid {
			t.Errorf("Ingest(%+v) = %v; want invalid_argument wrapping ErrNoText", in, err)
		}
	}
}

// otherModel is the offline embedder under another model name, as an
// allowed override would be.
type otherModel struct{ provider.Embedder }

func (otherModel) Model() string { return "hashing-v2" }

// TestAnEmbeddingModelOverrideStillMeetsTheStoresEmbedder searches with a
// per-request embedding_model: one outside the allow-list is refused naming
// the field; an allowed one still cannot search a store built with another
// model (the store records its embedder), and store selection leaves such
// stores out.
func TestAnEmbeddingModelOverrideStillMeetsTheStoresEmbedder(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	def := offline.NewEmbedder(testDims)
	svc := vector.New(tbl, blobs, provider.WithEmbedders(def, otherModel{offline.NewEmbedder(testDims)}), &vector.Options{Cache: vector.NewCache(1 << 20)})
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	ingestAll(t, svc, acme, "notes")
	st, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
	if err != nil || st.Provider != offline.Name || st.Model != def.Model() || st.Dims != testDims {
		t.Fatalf("the store records %s/%s (%d), %v; want the embedder it was built with", st.Provider, st.Model, st.Dims, err)
	}
	if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "tides", Stores: []string{"notes"}, EmbeddingModel: def.Model()}); top != "tides.md" {
		t.Errorf("the configured model named explicitly found %q", top)
	}
	_, err = svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides", EmbeddingModel: "text-embedding-3-large"})
	if f, ok := err.(*fault.Error); !ok || f.Kind != fault.KindInvalid || f.Field != "embedding_model" {
		t.Errorf("a model outside the allow-list: %v, want invalid_argument naming embedding_model", err)
	}
	_, err = svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides", Stores: []string{"notes"}, EmbeddingModel: "hashing-v2"})
	wantKind(t, err, fault.KindInvalid)
	if !strings.Contains(err.Error(), "hashing-v1") || !strings.Contains(err.Error(), "hashing-v2") {
		t.Errorf("error %q does not name both embedders", err)
	}
	out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides", EmbeddingModel: "hashing-v2"})
	if err != nil || len(out.SearchedStores) != 0 {
		t.Errorf("store selection with another model searched %v, %v; want none", out.SearchedStores, err)
	}
}
