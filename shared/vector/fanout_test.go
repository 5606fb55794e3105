package vector_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// acmeGroup returns a service holding acme's store "notes" of four shards,
// read through blobs, and the group of those shards.
func acmeGroup(t *testing.T) (*vector.Service, *vector.CountingBlobs, vector.ShardGroup) {
	t.Helper()
	blobs := &vector.CountingBlobs{Blobs: storetest.OpenLocalFS(t)}
	svc := newService(t, storetest.OpenEmbedded(t), blobs, nil)
	svc.CreateStore(context.Background(), acme, vector.CreateStoreInput{Alias: "notes"})
	ingestAll(t, svc, acme, "notes")
	var g vector.ShardGroup
	for _, k := range listKeys(t, blobs, "tenants/acme/vector/notes/shards/") {
		g.Shards = append(g.Shards, vector.GroupShard{Store: "notes", Key: k, Chunks: 1})
	}
	if len(g.Shards) != 4 {
		t.Fatalf("%d shards, want 4", len(g.Shards))
	}
	return svc, blobs, g
}

func TestSearchGroupRunsEachOperation(t *testing.T) {
	ctx := context.Background()
	svc, _, g := acmeGroup(t)
	st, err := svc.SearchGroup(ctx, acme, vector.SearchGroupInput{Op: vector.OpStats, Group: g, Terms: []string{"tide", "lava"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Stats == nil || st.Stats.Chunks != 4 || st.Stats.DF["tide"] != 1 || st.Result != nil || st.Vectors != nil {
		t.Errorf("stats answered %+v; want 4 chunks, tide in 1, and nothing else", st)
	}
	res, err := svc.SearchGroup(ctx, acme, vector.SearchGroupInput{Op: vector.OpSearch, Group: g,
		Query: &vector.GroupQuery{Text: "moon tides", Mode: retrieval.ModeBM25, K: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Result == nil || len(res.Result.Lists.BM25) == 0 || res.Result.Lists.BM25[0].DocID != "tides.md" {
		t.Fatalf("search answered %+v; want tides.md first", res)
	}
	top := res.Result.Lists.BM25[0]
	if c := res.Result.Chunks[top.ChunkID]; c.Store != "notes" || !strings.Contains(c.Text, "Spring tides") {
		t.Errorf("the top hit's chunk is %+v", c)
	}
	vecs, err := svc.SearchGroup(ctx, acme, vector.SearchGroupInput{Op: vector.OpVectors, Group: g, Hits: []retrieval.Hit{top}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs.Vectors) != 1 || len(vecs.Vectors[0]) != testDims {
		t.Errorf("vectors answered %d vectors, want 1 of %d dimensions", len(vecs.Vectors), testDims)
	}
}

func TestSearchGroupRefusesBadCalls(t *testing.T) {
	svc, blobs, g := acmeGroup(t)
	own := g.Shards[0]
	for _, tc := range []struct {
		name  string
		in    vector.SearchGroupInput
		field string
	}{
		{"an unknown operation", vector.SearchGroupInput{Op: "delete", Group: g}, "op"},
		{"a search without its query", vector.SearchGroupInput{Op: vector.OpSearch, Group: g}, "query"},
		{"another tenant's shard", vector.SearchGroupInput{Op: vector.OpStats, Group: vector.ShardGroup{Shards: []vector.GroupShard{
			{Store: "notes", Key: strings.Replace(own.Key, "tenants/acme/", "tenants/globex/", 1), Chunks: 1}, own}}}, "group.shards[0].key"},
		{"a key climbing out of the tenant", vector.SearchGroupInput{Op: vector.OpStats, Group: vector.ShardGroup{Shards: []vector.GroupShard{
			own, {Store: "notes", Key: "tenants/acme/vector/notes/shards/../../../../globex/vector/notes/shards/x.seg", Chunks: 1}}}}, "group.shards[1].key"},
		{"a shard named under another of the tenant's stores", vector.SearchGroupInput{Op: vector.OpStats, Group: vector.ShardGroup{Shards: []vector.GroupShard{
			{Store: "other", Key: own.Key, Chunks: 1}}}}, "group.shards[0].key"},
		{"an object of the store that is no shard", vector.SearchGroupInput{Op: vector.OpStats, Group: vector.ShardGroup{Shards: []vector.GroupShard{
			{Store: "notes", Key: "tenants/acme/vector/notes/manifests/000000000001-abcd.json", Chunks: 1}}}}, "group.shards[0].key"},
		{"a store that is no alias", vector.SearchGroupInput{Op: vector.OpStats, Group: vector.ShardGroup{Shards: []vector.GroupShard{
			{Store: "../globex", Key: own.Key, Chunks: 1}}}}, "group.shards[0].store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blobs.Gets.Store(0)
			blobs.Heads.Store(0)
			_, err := svc.SearchGroup(context.Background(), acme, tc.in)
			wantKind(t, err, fault.KindInvalid)
			if _, field, _ := fault.Public(err); field != tc.field {
				t.Errorf("error %v names %q, want %q", err, field, tc.field)
			}
			if n := blobs.Gets.Load() + blobs.Heads.Load(); n != 0 {
				t.Errorf("%d objects were read before the call was refused", n)
			}
		})
	}
	t.Run("the shard's own tenant is refused it when calling as another", func(t *testing.T) {
		_, err := svc.SearchGroup(context.Background(), globex, vector.SearchGroupInput{Op: vector.OpStats, Group: g})
		wantKind(t, err, fault.KindInvalid)
	})
}

func TestSearchGroupReportsAGoneShardAsNotFound(t *testing.T) {
	ctx := context.Background()
	_, blobs, g := acmeGroup(t)
	if err := blobs.Delete(ctx, g.Shards[2].Key); err != nil {
		t.Fatal(err)
	}
	cold := newService(t, storetest.OpenEmbedded(t), blobs, nil) // a worker: its cache holds nothing yet
	_, err := cold.SearchGroup(ctx, acme, vector.SearchGroupInput{Op: vector.OpStats, Group: g, Terms: []string{"tide"}})
	wantKind(t, err, fault.KindNotFound)
	if !strings.Contains(err.Error(), g.Shards[2].Key) {
		t.Errorf("error %q does not name the shard", err)
	}
}

// unreachable is a Searcher that fails every call.
type unreachable struct{}

var errFannedOut = errors.New("the search fanned out")

func (unreachable) Stats(context.Context, tenant.Caller, vector.ShardGroup, []string) (retrieval.Stats, error) {
	return retrieval.Stats{}, errFannedOut
}

func (unreachable) Search(context.Context, tenant.Caller, vector.ShardGroup, vector.GroupQuery) (vector.GroupResult, error) {
	return vector.GroupResult{}, errFannedOut
}

func (unreachable) Vectors(context.Context, tenant.Caller, vector.ShardGroup, []retrieval.Hit) ([][]float32, error) {
	return nil, errFannedOut
}

// TestOneGroupIsSearchedInProcess checks that a search whose shards make one
// group calls no worker: on AWS that would be an invocation for nothing.
func TestOneGroupIsSearchedInProcess(t *testing.T) {
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	svc := newService(t, tbl, blobs, &vector.Options{Searcher: unreachable{}})
	svc.CreateStore(context.Background(), acme, vector.CreateStoreInput{Alias: "notes"})
	ingestAll(t, svc, acme, "notes")
	for _, mode := range vector.Modes {
		if top := topDoc(t, svc, acme, vector.RetrieveInput{Question: "moon tides", Mode: mode}); top != "tides.md" {
			t.Errorf("%s: top %q", mode, top)
		}
	}
	t.Run("while several groups go to the workers", func(t *testing.T) {
		fanned := newService(t, tbl, blobs, &vector.Options{Searcher: unreachable{}, GroupBytes: 1})
		_, err := fanned.RankDocuments(context.Background(), acme, vector.RetrieveInput{Question: "moon tides", Stores: []string{"notes"}}, 10)
		if !errors.Is(err, errFannedOut) {
			t.Errorf("error %v; want the workers' %v", err, errFannedOut)
		}
	})
}
