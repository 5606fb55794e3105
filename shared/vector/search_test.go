package vector_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

func listKeys(t *testing.T, blobs store.Blobs, prefix string) []string {
	t.Helper()
	var keys []string
	opts := &store.ListOptions{}
	for {
		page, err := blobs.List(context.Background(), prefix, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blobs {
			keys = append(keys, b.Key)
		}
		if page.Next == "" {
			return keys
		}
		opts.Cursor = page.Next
	}
}

func readAll(t *testing.T, blobs store.Blobs, key string) []byte {
	t.Helper()
	rc, _, err := blobs.Get(context.Background(), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

func TestWarmSearchesReadNoShards(t *testing.T) {
	storetest.EachBlobs(t, func(t *testing.T, raw store.Blobs) {
		ctx := context.Background()
		tbl := storetest.OpenEmbedded(t)
		writer := newService(t, tbl, raw, nil)
		writer.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		ingestAll(t, writer, acme, "notes")

		blobs := &vector.CountingBlobs{Blobs: raw}
		// A cold process: a cache of its own; checking ETags on every use.
		reader := newService(t, tbl, blobs, &vector.Options{Revalidate: -1})
		q := vector.RetrieveInput{Question: "moon tides", Stores: []string{"notes"}}
		if top := topDoc(t, reader, acme, q); top != "tides.md" {
			t.Fatalf("top %q", top)
		}
		if g := blobs.ShardGets.Load(); g != 4 {
			t.Fatalf("cold search read %d shards, want 4", g)
		}
		blobs.ShardGets.Store(0)
		topDoc(t, reader, acme, q)
		if g := blobs.ShardGets.Load(); g != 0 {
			t.Errorf("warm search read %d shard bodies, want 0", g)
		}

		t.Run("by default a warm search does not even check ETags", func(t *testing.T) {
			lazy := newService(t, tbl, blobs, nil)
			topDoc(t, lazy, acme, q)
			heads, gets := blobs.Heads.Load(), blobs.ShardGets.Load()
			topDoc(t, lazy, acme, q)
			if blobs.Heads.Load() != heads || blobs.ShardGets.Load() != gets {
				t.Errorf("the second search made %d heads and %d shard gets; want none", blobs.Heads.Load()-heads, blobs.ShardGets.Load()-gets)
			}
		})
		t.Run("a replaced shard object is read again", func(t *testing.T) {
			shards := listKeys(t, raw, "tenants/acme/vector/notes/shards/")
			var tides, bread string
			for _, k := range shards {
				switch body := string(readAll(t, raw, k)); {
				case strings.Contains(body, "Spring tides"):
					tides = k
				case strings.Contains(body, "Knead the dough"):
					bread = k
				}
			}
			// Put the bread shard's bytes where the tides shard was: the
			// same chunk count, another ETag.
			if _, err := raw.Put(ctx, tides, readAll(t, raw, bread), nil); err != nil {
				t.Fatal(err)
			}
			blobs.ShardGets.Store(0)
			out, err := reader.Retrieve(ctx, acme, vector.RetrieveInput{Question: "moon tides knead dough", Stores: []string{"notes"}, Mode: "bm25", TopK: 10})
			if err != nil {
				t.Fatal(err)
			}
			if g := blobs.ShardGets.Load(); g != 1 {
				t.Errorf("read %d shards, want 1 (the replaced one)", g)
			}
			for _, d := range out.Documents {
				if strings.Contains(d.Content, "Spring tides") {
					t.Errorf("the replaced shard's old content is still served")
				}
			}
		})
	})
}

func TestCorruptShardIsAnErrorNotAPanic(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	svc := newService(t, tbl, blobs, nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
	ingestAll(t, svc, acme, "notes")
	shards := listKeys(t, blobs, "tenants/acme/vector/notes/shards/")
	data := readAll(t, blobs, shards[0])
	data[len(data)/2] ^= 0xff
	if _, err := blobs.Put(ctx, shards[0], data, nil); err != nil {
		t.Fatal(err)
	}
	cold := newService(t, tbl, blobs, nil)
	_, err := cold.Retrieve(ctx, acme, vector.RetrieveInput{Question: "anything at all"})
	wantKind(t, err, fault.KindUnavailable)
	if !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), shards[0]) {
		t.Errorf("error %q does not say which shard is corrupt", err)
	}
}

// TestFanOutMatchesOneProcess checks the merge of a fanned-out search: shard
// groups searched apart, with global BM25 statistics, give exactly the hits of
// one process searching every shard.
func TestFanOutMatchesOneProcess(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	opts := &vector.Options{MaxShards: 1000}
	svc := newService(t, tbl, blobs, opts)
	for _, alias := range []string{"one", "two"} {
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: alias})
	}
	words := strings.Fields("moon tide sea wave river magma lava crust bread dough oven chess pawn queen knight " +
		"gravity orbit planet star comet basalt yeast flour salt water current storm")
	for i := range 40 {
		var b strings.Builder
		for j := range 30 {
			b.WriteString(words[(i*7+j*j+j*i)%len(words)] + " ")
			if j%10 == 9 {
				b.WriteString(".\n\n")
			}
		}
		alias := []string{"one", "two"}[i%2]
		md := map[string]string{"parity": []string{"even", "odd"}[i%2%2], "third": fmt.Sprint(i % 3)}
		if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: alias, DocID: fmt.Sprintf("d%02d", i), Content: b.String(), Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	// Replace and delete some, so dead chunks are excluded on both sides.
	svc.Ingest(ctx, acme, vector.IngestInput{Store: "one", DocID: "d00", Content: "moon moon lava"})
	svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "two", DocID: "d03"})

	whole := newService(t, tbl, blobs, opts)
	fanned := newService(t, tbl, blobs, &vector.Options{MaxShards: 1000, GroupBytes: 1}) // every shard a group
	for _, tc := range []vector.RetrieveInput{
		{Question: "moon tide and the sea", Mode: "bm25", TopK: 20},
		{Question: "lava crust magma basalt", Mode: "vector", TopK: 20},
		{Question: "bread dough yeast flour", Mode: "hybrid", TopK: 20},
		{Question: "queen knight pawn", TopK: 10, Filter: map[string][]string{"third": {"0", "2"}}},
		{Question: "storm current water", TopK: 15, Stores: []string{"one"}},
	} {
		t.Run(fmt.Sprintf("%s %q", tc.Mode, tc.Question), func(t *testing.T) {
			if len(tc.Stores) == 0 {
				tc.Stores = []string{"one", "two"}
			}
			want, err := whole.Retrieve(ctx, acme, tc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fanned.Retrieve(ctx, acme, tc)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Documents) < 5 {
				t.Fatalf("only %d documents: the test needs more", len(want.Documents))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fanned out differs from one process (-one +fanned):\n%s", diff)
			}
			for _, d := range got.Documents {
				if d.DocID == "d03" || d.DocID == "d00" && !strings.Contains(d.Content, "moon moon lava") {
					t.Errorf("a dead chunk was found: %+v", d)
				}
			}
		})
	}
	t.Run("documents rank alike too", func(t *testing.T) {
		in := vector.RetrieveInput{Question: "gravity orbit planet comet", Stores: []string{"one", "two"}}
		want, err := whole.RankDocuments(ctx, acme, in, 100)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fanned.RankDocuments(ctx, acme, in, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mismatch (-one +fanned):\n%s", diff)
		}
		seen := map[string]bool{}
		for _, d := range got.Documents {
			if seen[d.DocID] {
				t.Errorf("document %s ranked twice", d.DocID)
			}
			seen[d.DocID] = true
		}
	})
}

func TestCompactionKeepsEverythingSearchable(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		blobs := storetest.OpenLocalFS(t)
		svc := newService(t, tbl, blobs, &vector.Options{MaxShards: 4})
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		// Markers are letters only: the analyzer splits letter-digit words.
		for i := range 20 {
			content := fmt.Sprintf("Entry %d mentions the marker zz%cmark.", i, 'a'+i)
			if i%5 == 0 {
				content += "\n\n" + strings.Repeat("Filler sentence to make a second passage of this document appear. ", 30)
			}
			if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", DocID: fmt.Sprintf("e%02d", i), Content: content}); err != nil {
				t.Fatal(err)
			}
		}
		// Replace half, delete a few: dead chunks inside compacted shards.
		for i := 0; i < 20; i += 2 {
			svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", DocID: fmt.Sprintf("e%02d", i), Content: fmt.Sprintf("Entry %d now says yy%cnew.", i, 'a'+i)})
		}
		for _, i := range []int{1, 7, 13} {
			if _, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "notes", DocID: fmt.Sprintf("e%02d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		st, err := svc.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
		if err != nil {
			t.Fatal(err)
		}
		// e05 and e15 have two passages; the replaced e00 and e10 one now.
		if st.Shards > 4 || st.Documents != 17 || st.Chunks != 19 {
			t.Errorf("store %+v: want at most 4 shards, 17 documents, 19 chunks", st)
		}
		if keys := listKeys(t, blobs, tenant.BlobPrefix(acme.Tenant)+"vector/notes/shards/"); len(keys) != st.Shards {
			t.Errorf("%d shard objects for %d shards: compaction left garbage", len(keys), st.Shards)
		}
		if keys := listKeys(t, blobs, tenant.BlobPrefix(acme.Tenant)+"vector/notes/manifests/"); len(keys) != 1 {
			t.Errorf("%d manifests, want 1", len(keys))
		}
		for i := range 20 {
			old := topDoc(t, svc, acme, vector.RetrieveInput{Question: fmt.Sprintf("zz%cmark", 'a'+i), Mode: "bm25"})
			replaced := topDoc(t, svc, acme, vector.RetrieveInput{Question: fmt.Sprintf("yy%cnew", 'a'+i), Mode: "bm25"})
			id := fmt.Sprintf("e%02d", i)
			switch {
			case i == 1 || i == 7 || i == 13:
				if old == id {
					t.Errorf("deleted %s is found", id)
				}
			case i%2 == 0:
				if old == id || replaced != id {
					t.Errorf("replaced %s: old text finds %q, new text %q", id, old, replaced)
				}
			default:
				if old != id {
					t.Errorf("%s: top %q", id, old)
				}
			}
		}
	})
}

func TestCompactedStoreSearchesAsAnUncompactedOne(t *testing.T) {
	ctx := context.Background()
	// One store, searched before and after each compaction: chunk ids, which
	// break ties between equal scores, are drawn by each ingest, so two stores
	// of the same documents would not rank ties alike. Documents come in
	// batches, so later compactions merge merged shards with new ones.
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	plain := newService(t, tbl, blobs, &vector.Options{MaxShards: 1000})
	compacting := newService(t, tbl, blobs, &vector.Options{MaxShards: 1})
	words := strings.Fields("moon tide sea wave river magma lava crust bread dough oven chess pawn queen knight " +
		"gravity orbit planet star comet basalt yeast flour salt water current storm")
	const n, batch = 40, 10
	if _, err := plain.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	queries := []vector.RetrieveInput{
		{Question: "moon tide and the sea", Mode: "bm25", TopK: 20},
		{Question: "ccx lava crust", Mode: "bm25", TopK: 20},
		{Question: "lava crust magma basalt", Mode: "vector", TopK: 20},
		{Question: "bread dough yeast flour", Mode: "hybrid", TopK: 20},
		{Question: "queen knight pawn", TopK: 10, Filter: map[string][]string{"third": {"0", "2"}}},
	}
	for i := range n {
		var b strings.Builder
		for j := range 12 * (1 + i%8) {
			b.WriteString(words[(i*5+j*j+j*i)%len(words)] + " ")
			if j%12 == 11 {
				// A word only this document holds: terms leave and join dictionaries as shards merge.
				b.WriteString(strings.Repeat(string(rune('a'+i%26)), 2+i/26) + "x " + strings.Repeat("filler ", 120) + ".\n\n")
			}
		}
		md := map[string]string{"third": fmt.Sprint(i % 3)}
		if _, err := plain.Ingest(ctx, acme, vector.IngestInput{Store: "notes", DocID: fmt.Sprintf("d%02d", i), Content: b.String(), Metadata: md}); err != nil {
			t.Fatal(err)
		}
		if (i+1)%batch != 0 {
			continue
		}
		wants := make([]vector.RetrieveOutput, len(queries))
		for q, in := range queries {
			var err error
			if wants[q], err = plain.Retrieve(ctx, acme, in); err != nil {
				t.Fatal(err)
			}
			if i == n-1 && len(wants[q].Documents) < 5 {
				t.Fatalf("%q: only %d documents: the test needs more", in.Question, len(wants[q].Documents))
			}
		}
		// Size-tiered rounds, as ingests run them, down to one shard.
		st, err := plain.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
		for round := 0; err == nil && st.Shards > 1; round++ {
			if round == n {
				t.Fatalf("%d shards left after %d compactions", st.Shards, round)
			}
			if err = compacting.Compact(ctx, acme, "notes"); err == nil {
				st, err = plain.GetStore(ctx, acme, vector.StoreInput{Alias: "notes"})
			}
		}
		if err != nil || st.Documents != int64(i+1) || i == n-1 && st.Chunks <= 100 {
			t.Fatalf("store %+v, %v: want %d documents, and in the end more chunks than vector search rescores", st, err, i+1)
		}
		// The merged shards as the compacting process keeps them, and as a fresh one reads them.
		fresh := newService(t, tbl, blobs, nil)
		for q, in := range queries {
			for name, svc := range map[string]*vector.Service{"compacting": compacting, "fresh": fresh} {
				got, err := svc.Retrieve(ctx, acme, in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(wants[q], got); diff != "" {
					t.Errorf("%d documents, %s %q: the compacted store, read by the %s process, differs (-uncompacted +compacted):\n%s",
						i+1, in.Mode, in.Question, name, diff)
				}
			}
		}
	}
}

func TestTenantsAreIsolated(t *testing.T) {
	ctx := context.Background()
	blobs := storetest.OpenLocalFS(t)
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes", Description: "tides and volcanoes"})
	ingestAll(t, svc, acme, "notes")

	_, err := svc.Retrieve(ctx, globex, vector.RetrieveInput{Question: "tides", Stores: []string{"notes"}})
	wantKind(t, err, fault.KindNotFound)
	if out, err := svc.Retrieve(ctx, globex, vector.RetrieveInput{Question: "tides"}); err != nil || len(out.Documents) != 0 {
		t.Errorf("globex retrieves %v, %v", docIDs(out), err)
	}
	_, err = svc.Ingest(ctx, globex, vector.IngestInput{Store: "notes", DocID: "x", Content: "intruder"})
	wantKind(t, err, fault.KindNotFound)
	_, err = svc.DeleteDocument(ctx, globex, vector.DeleteDocumentInput{Store: "notes", DocID: "tides.md"})
	wantKind(t, err, fault.KindNotFound)
	_, err = svc.ListDocuments(ctx, globex, vector.ListDocumentsInput{Store: "notes"})
	wantKind(t, err, fault.KindNotFound)

	// globex's own store of the same name is another store.
	svc.CreateStore(ctx, globex, vector.CreateStoreInput{Alias: "notes"})
	svc.Ingest(ctx, globex, vector.IngestInput{Store: "notes", DocID: "own", Content: "Globex notes about tides."})
	out, err := svc.Retrieve(ctx, globex, vector.RetrieveInput{Question: "tides moon", TopK: 10})
	if err != nil || !slices.Equal(docIDs(out), []string{"own"}) {
		t.Errorf("globex finds %v, %v; want only its own document", docIDs(out), err)
	}
	if _, err := svc.DeleteStore(ctx, globex, vector.StoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "moon tides"}); top != "tides.md" {
		t.Errorf("acme's store after globex deleted its own: top %q", top)
	}
	for _, k := range listKeys(t, blobs, "tenants/") {
		if !strings.HasPrefix(k, "tenants/acme/vector/notes/") {
			t.Errorf("object %s left behind or misplaced", k)
		}
	}
}

func TestDeleteStoreRemovesEverything(t *testing.T) {
	storetest.EachTable(t, func(t *testing.T, tbl store.Table) {
		acme, globex := newTenants()
		_ = globex
		ctx := context.Background()
		blobs := storetest.OpenLocalFS(t)
		svc := newService(t, tbl, blobs, nil)
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		ingestAll(t, svc, acme, "notes")
		out, err := svc.DeleteStore(ctx, acme, vector.StoreInput{Alias: "notes"})
		if err != nil || out.Documents != 4 || out.Objects != 9 {
			t.Fatalf("%+v, %v; want 4 documents and 9 objects (4 shards, their 4 graph packs, 1 manifest) removed", out, err)
		}
		if keys := listKeys(t, blobs, tenant.BlobPrefix(acme.Tenant)); len(keys) != 0 {
			t.Errorf("objects left: %v", keys)
		}
		page, err := tbl.Query(ctx, tenant.Key(acme.Tenant)+"vs#notes", store.Query{})
		if err != nil || len(page.Items) != 0 {
			t.Errorf("document records left: %v, %v", page.Items, err)
		}
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"})
		if out, _ := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "tides"}); len(out.Documents) != 0 {
			t.Errorf("a re-created store finds %v", docIDs(out))
		}
	})
}

func TestStoreSelection(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, storetest.OpenEmbedded(t), storetest.OpenLocalFS(t), nil)
	stores := map[string]struct {
		description string
		docs        []string
	}{
		"kitchen":  {"Recipes and baking", []string{docs["bread.md"], "Simmer the tomato sauce with garlic and basil for twenty minutes."}},
		"geology":  {"Earth science notes", []string{docs["volcanos.md"], "Earthquakes happen where tectonic plates slide past each other."}},
		"games":    {"Board games", []string{docs["chess.md"]}},
		"oceanics": {"", []string{docs["tides.md"], "Ocean currents carry warm water from the equator towards the poles."}},
	}
	for alias, s := range stores {
		svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: alias, Description: s.description})
		for i, d := range s.docs {
			if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: alias, DocID: fmt.Sprint(i), Content: d}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		question string
		want     []string
	}{
		{"how long should I bake a loaf of bread?", []string{"kitchen"}},
		{"what causes an earthquake or a volcano eruption?", []string{"geology"}},
		{"which board game openings offer a pawn?", []string{"games"}},
		{"why do ocean currents and tides move water?", []string{"oceanics"}}, // by content alone: no description
		{"zebra xylophone", []string{"geology", "kitchen", "oceanics"}},       // nothing fits: the largest three
		{"baking bread and chess games", []string{"games", "kitchen"}},        // two fit
	} {
		t.Run(tc.question, func(t *testing.T) {
			out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: tc.question})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(out.SearchedStores))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("searched stores mismatch (-want +got):\n%s", diff)
			}
			for _, d := range out.Documents {
				if !slices.Contains(out.SearchedStores, d.Store) {
					t.Errorf("document from unsearched store %q", d.Store)
				}
			}
		})
	}
	t.Run("results of several stores are merged and name their store", func(t *testing.T) {
		out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "lava and bread crust", Stores: []string{"kitchen", "geology"}, TopK: 4})
		if err != nil {
			t.Fatal(err)
		}
		var from []string
		for _, d := range out.Documents {
			from = append(from, d.Store)
		}
		if !slices.Contains(from, "kitchen") || !slices.Contains(from, "geology") {
			t.Errorf("documents come from %v; want both stores", from)
		}
	})
	t.Run("the same passage in two stores is returned once", func(t *testing.T) {
		svc.Ingest(ctx, acme, vector.IngestInput{Store: "games", DocID: "copy", Content: docs["bread.md"]})
		out, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: "knead the dough", Stores: []string{"kitchen", "games"}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range out.Documents {
			if strings.Contains(d.Content, "Knead the dough") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the passage is returned %d times", n)
		}
	})
}
