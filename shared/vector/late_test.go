package vector_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// countingTokens counts the document texts a multi-vector embedder encodes.
type countingTokens struct {
	multivector.Embedder
	docs atomic.Int64
}

func (e *countingTokens) EmbedTokens(ctx context.Context, req multivector.Request) (multivector.Embeddings, error) {
	if req.Purpose == provider.ForDocument {
		e.docs.Add(int64(len(req.Texts)))
	}
	return e.Embedder.EmbedTokens(ctx, req)
}

func lateService(t *testing.T, tbl store.Table, blobs store.Blobs, emb multivector.Embedder, opts *vector.Options) *vector.Service {
	t.Helper()
	o := vector.Options{}
	if opts != nil {
		o = *opts
	}
	o.MultiVector = emb
	return newService(t, tbl, blobs, &o)
}

func lateDocs(t *testing.T, out vector.LateOutput) []string {
	t.Helper()
	var ids []string
	for _, h := range out.Hits {
		ids = append(ids, h.DocID)
	}
	return ids
}

func TestLateInteractionFindsTheDocumentBothWays(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	emb := &countingTokens{Embedder: multivector.NewHashing(0)}
	svc := lateService(t, tbl, blobs, emb, nil)
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	ingestAll(t, svc, acme, "notes")
	q := "what makes lava erupt from a volcano?"
	out, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: q, Stores: []string{"notes"}, K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := lateDocs(t, out); len(got) == 0 || got[0] != "volcanos.md" {
		t.Errorf("centroid search found %v, want volcanos.md first", got)
	}
	if out.Source != vector.LateFromCentroids || out.CompressionRatio < 10 || out.TokenInteractions == 0 || out.Candidates == 0 || out.Model != multivector.HashingModel {
		t.Errorf("centroid search reported %+v", out)
	}
	if h := out.Hits[0]; h.Store != "notes" || h.ChunkID == "" || !strings.Contains(h.Content, "magma") || h.Metadata["topic"] != "volcanos" {
		t.Errorf("hit %+v lacks its chunk", h)
	}
	if n := emb.docs.Load(); n != 4+4 { // the codec's sample, then the shards
		t.Errorf("encoded %d document texts, want 8", n)
	}
	// Reranking given candidates scores exactly those, in MaxSim order.
	hyb, err := svc.Retrieve(ctx, acme, vector.RetrieveInput{Question: q, Stores: []string{"notes"}, TopK: 4})
	if err != nil {
		t.Fatal(err)
	}
	var cands []vector.LateCandidate
	for _, d := range slices.Backward(hyb.Documents) {
		cands = append(cands, vector.LateCandidate{Store: d.Store, ChunkID: d.ChunkID})
	}
	re, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: q, Stores: []string{"notes"}, Candidates: cands, K: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := lateDocs(t, re); len(got) != len(cands) || got[0] != "volcanos.md" || re.Source != vector.LateFromHybrid || re.Candidates != len(cands) {
		t.Errorf("rerank gave %v (%+v)", got, re)
	}
	for i := 1; i < len(re.Hits); i++ {
		if re.Hits[i].Score > re.Hits[i-1].Score {
			t.Errorf("rerank is not in score order: %v", re.Hits)
		}
	}
	if n := emb.docs.Load(); n != 8 {
		t.Errorf("a second search encoded %d more texts", n-8)
	}
	// A filter keeps only matching chunks.
	f, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: q, Stores: []string{"notes"}, K: 4, Filter: map[string][]string{"topic": {"chess"}}})
	if err != nil || !slices.Equal(lateDocs(t, f), []string{"chess.md"}) && len(f.Hits) != 0 {
		t.Errorf("filtered search: %v, %v", lateDocs(t, f), err)
	}
	for _, h := range f.Hits {
		if h.Metadata["topic"] != "chess" {
			t.Errorf("the filter let %s through", h.DocID)
		}
	}
}

// TestTokenShardsFollowTheChunksLifecycle checks that token vectors live and
// die with their chunks: a new document's shard alone is encoded, a deleted
// document leaves the results and its token shard the bucket, and a
// compaction copies tokens, so that a new process encodes nothing again.
func TestTokenShardsFollowTheChunksLifecycle(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	emb := &countingTokens{Embedder: multivector.NewHashing(0)}
	svc := lateService(t, tbl, blobs, emb, &vector.Options{MaxShards: 100})
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	ingestAll(t, svc, acme, "notes")
	search := func(svc *vector.Service, q string) []string {
		t.Helper()
		out, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: q, Stores: []string{"notes"}, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return lateDocs(t, out)
	}
	search(svc, "tides")
	prefix := "tenants/" + acme.Tenant + "/vector/notes/"
	if n := len(listKeys(t, blobs, prefix+"tokens/")); n != 4 {
		t.Fatalf("%d token shards for 4 chunk shards", n)
	}
	before := emb.docs.Load()
	if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "notes", DocID: "kites.md", Content: "# Kites\n\nA kite flies on the wind, held by a line."}); err != nil {
		t.Fatal(err)
	}
	if got := search(svc, "kite wind line"); len(got) == 0 || got[0] != "kites.md" {
		t.Errorf("the new document is not found first: %v", got)
	}
	if n := emb.docs.Load() - before; n != 1 {
		t.Errorf("after one ingest the search encoded %d texts, want 1", n)
	}

	if _, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "notes", DocID: "tides.md"}); err != nil {
		t.Fatal(err)
	}
	if got := search(svc, "tides moon sea"); slices.Contains(got, "tides.md") {
		t.Errorf("a deleted document is still found: %v", got)
	}
	if n := len(listKeys(t, blobs, prefix+"tokens/")); n != 4 {
		t.Errorf("%d token shards after the delete, want 4 (the deleted document's shard went)", n)
	}

	// A process with a lower shard limit merges shards.
	compactor := lateService(t, tbl, blobs, nil, &vector.Options{MaxShards: 2})
	if err := compactor.Compact(ctx, acme, "notes"); err != nil {
		t.Fatal(err)
	}
	shards, tokens := listKeys(t, blobs, prefix+"shards/"), listKeys(t, blobs, prefix+"tokens/")
	if len(shards) >= 4 || len(shards) != len(tokens) {
		t.Errorf("after compaction %d chunk shards and %d token shards; want fewer than 4, as many of each", len(shards), len(tokens))
	}
	fresh := &countingTokens{Embedder: multivector.NewHashing(0)}
	cold := lateService(t, tbl, blobs, fresh, nil)
	if got := search(cold, "kite wind line"); len(got) != 4 || got[0] != "kites.md" {
		t.Errorf("a new process found %v", got)
	}
	if n := fresh.docs.Load(); n != 0 {
		t.Errorf("a new process encoded %d document texts after compaction, want none", n)
	}
}

func TestLateInteractionRefuses(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	svc := lateService(t, tbl, blobs, multivector.NewHashing(0), &vector.Options{LateBytes: 4 << 10})
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "notes"}); err != nil {
		t.Fatal(err)
	}
	ingestAll(t, svc, acme, "notes")
	for _, tc := range []struct {
		name  string
		in    vector.LateInput
		field string
	}{
		{"an empty question", vector.LateInput{Question: " ", Stores: []string{"notes"}, K: 1}, "question"},
		{"no store", vector.LateInput{Question: "q", K: 1}, "stores"},
		{"a bad alias", vector.LateInput{Question: "q", Stores: []string{"No Such"}, K: 1}, "stores"},
		{"k of zero", vector.LateInput{Question: "q", Stores: []string{"notes"}}, "top_k"},
		{"a threshold above 1", vector.LateInput{Question: "q", Stores: []string{"notes"}, K: 1, Threshold: 2}, "interaction_threshold"},
		{"too many candidates", vector.LateInput{Question: "q", Stores: []string{"notes"}, K: 1, Candidates: make([]vector.LateCandidate, vector.MaxLateK+1)}, "candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.LateInteraction(ctx, acme, tc.in)
			if f, ok := err.(*fault.Error); !ok || f.Kind != fault.KindInvalid || f.Field != tc.field {
				t.Errorf("error %v, want invalid_argument naming %s", err, tc.field)
			}
		})
	}
	t.Run("a store past the memory bound", func(t *testing.T) {
		_, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: "tides", Stores: []string{"notes"}, K: 1})
		if fault.KindOf(err) != fault.KindQuotaExceeded || !strings.Contains(err.Error(), "notes") {
			t.Errorf("error %v, want quota_exceeded naming the store", err)
		}
	})
	t.Run("without a multi-vector embedder", func(t *testing.T) {
		_, err := newService(t, tbl, blobs, nil).LateInteraction(ctx, acme, vector.LateInput{Question: "tides", Stores: []string{"notes"}, K: 1})
		if fault.KindOf(err) != fault.KindUnavailable {
			t.Errorf("error %v, want unavailable", err)
		}
	})
	t.Run("a store that does not exist", func(t *testing.T) {
		_, err := svc.LateInteraction(ctx, acme, vector.LateInput{Question: "tides", Stores: []string{"nothere"}, K: 1})
		if fault.KindOf(err) != fault.KindNotFound {
			t.Errorf("error %v, want not_found", err)
		}
	})
}

// TestConcurrentLateSearchesAndIngestsLoseNothing runs searches of several
// processes while documents are ingested: every document is found at the end,
// and each chunk shard has one token shard.
func TestConcurrentLateSearchesAndIngestsLoseNothing(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	var procs []*vector.Service
	for range 3 {
		procs = append(procs, lateService(t, tbl, blobs, multivector.NewHashing(0), &vector.Options{MaxShards: 4}))
	}
	if _, err := procs[0].CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "crowd"}); err != nil {
		t.Fatal(err)
	}
	const n = 9
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p := procs[i%len(procs)]
			content := fmt.Sprintf("Document %d is about the word zq%dword and nothing else.", i, i)
			if _, err := p.Ingest(ctx, acme, vector.IngestInput{Store: "crowd", DocID: fmt.Sprintf("doc%02d", i), Content: content}); err != nil {
				t.Errorf("ingest %d: %v", i, err)
			}
			if _, err := p.LateInteraction(ctx, acme, vector.LateInput{Question: "zq1word", Stores: []string{"crowd"}, K: 3}); err != nil {
				t.Errorf("search during ingests: %v", err)
			}
		})
	}
	wg.Wait()
	prefix := "tenants/" + acme.Tenant + "/vector/crowd/"
	for _, p := range procs {
		out, err := p.LateInteraction(ctx, acme, vector.LateInput{Question: "document about the word", Stores: []string{"crowd"}, K: 2 * n})
		if err != nil {
			t.Fatal(err)
		}
		got := lateDocs(t, out)
		slices.Sort(got)
		var want []string
		for i := range n {
			want = append(want, fmt.Sprintf("doc%02d", i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("found %v, want every document once", got)
		}
	}
	// Each chunk shard has its token shard. (A search that read a manifest
	// older than a compaction may write the token shard of a merged-away
	// shard after the compaction removed it: garbage, removed with the store.)
	tokens := listKeys(t, blobs, prefix+"tokens/")
	for _, k := range listKeys(t, blobs, prefix+"shards/") {
		if tk := strings.Replace(strings.TrimSuffix(k, ".seg")+".tv", "/shards/", "/tokens/", 1); !slices.Contains(tokens, tk) {
			t.Errorf("chunk shard %s has no token shard", k)
		}
	}
}

// cancelling embeds document texts until its limit of calls, then ends the
// call's context, as a deadline would, and fails.
type cancelling struct {
	multivector.Embedder
	calls, limit int
	cancel       context.CancelFunc
}

func (e *cancelling) EmbedTokens(ctx context.Context, req multivector.Request) (multivector.Embeddings, error) {
	if req.Purpose == provider.ForDocument {
		if e.calls++; e.calls > e.limit {
			e.cancel()
			return multivector.Embeddings{}, ctx.Err()
		}
	}
	return e.Embedder.EmbedTokens(ctx, req)
}

// TestACallOutOfTimeInsideAShardLeavesItsWorkForTheNext ends a search while it
// encodes a shard: the chunks encoded are kept, and the next call encodes
// only the others.
func TestACallOutOfTimeInsideAShardLeavesItsWorkForTheNext(t *testing.T) {
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	ctx, cancel := context.WithCancel(context.Background())
	// The codec's sample takes 3 calls of 16 texts; the shard's first batch one more.
	stop := &cancelling{Embedder: multivector.NewHashing(0), limit: 4, cancel: cancel}
	svc := lateService(t, tbl, blobs, stop, nil)
	if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "long", ChunkSize: 200, ChunkOverlap: 1}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d tells of the river zq%dword and the hills around it, the mills, the bridges and the boats on the water.\n\n", i, i)
	}
	out, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "long", DocID: "river", Content: b.String()})
	if err != nil || out.Chunks <= 32 || out.Chunks > 48 {
		t.Fatalf("ingest: %+v, %v; want 33 to 48 chunks", out, err)
	}
	_, err = svc.LateInteraction(ctx, acme, vector.LateInput{Question: "river mills", Stores: []string{"long"}, K: 3})
	if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "retry to continue") {
		t.Fatalf("error %v, want unavailable asking to retry", err)
	}
	next := &countingTokens{Embedder: multivector.NewHashing(0)}
	res, err := lateService(t, tbl, blobs, next, nil).LateInteraction(context.Background(), acme, vector.LateInput{Question: "zq7word", Stores: []string{"long"}, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := next.docs.Load(); n != int64(out.Chunks-16) {
		t.Errorf("the next call encoded %d texts, want the %d the first left", n, out.Chunks-16)
	}
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Content, "zq7word") {
		t.Errorf("found %+v", res.Hits)
	}
	for _, k := range listKeys(t, blobs, "tenants/"+acme.Tenant+"/vector/long/tokens/") {
		if strings.HasSuffix(k, ".part") {
			t.Errorf("%s is left after the shard was built", k)
		}
	}
}
