package remote_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
	"github.com/switchboard-dev/switchboard/shared/vector/remote"
)

var (
	acme   = tenant.Caller{Tenant: "acme", Principal: "alice"}
	globex = tenant.Caller{Tenant: "globex", Principal: "bob"}
)

// The search worker's tool and function, as the catalog names them.
var worker, _ = catalog.Default().Tool("optimizer_vs-search-group")

// recorder is an invoke.Invoker that records the operations it carries to
// the worker, and may act before passing a call on.
type recorder struct {
	invoke.Invoker
	mu     sync.Mutex
	ops    []string
	before func(op string) // if set, runs before each call
}

func (r *recorder) Invoke(ctx context.Context, function string, req *invoke.Request) (*invoke.Response, error) {
	var in vector.SearchGroupInput
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ops = append(r.ops, in.Op)
	before := r.before
	r.mu.Unlock()
	if before != nil {
		before(in.Op)
	}
	return r.Invoker.Invoke(ctx, function, req)
}

func (r *recorder) called(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.ops {
		if o == op {
			n++
		}
	}
	return n
}

// workers returns the invoker of the real search worker over blobs, with
// its catalog timeout, wrapped in a recorder.
func workers(blobs store.Blobs) *recorder {
	return &recorder{Invoker: invoke.NewLocal(map[string]lambda.Handler{worker.Function: vectorfn.SearchGroup.Build(lambdafn.Deps{Blobs: blobs})},
		&invoke.LocalOptions{Timeout: catalog.Default().Timeout})}
}

// fanned returns a service whose every shard is a group of its own,
// searched by the workers inv reaches.
func fanned(tbl store.Table, blobs store.Blobs, inv invoke.Invoker) *vector.Service {
	return vector.New(tbl, blobs, nil, &vector.Options{
		Cache: vector.NewCache(64 << 20), MaxShards: 1000, GroupBytes: 1,
		Searcher: remote.New(inv, worker.Function, worker.Name),
	})
}

// corpus fills acme's stores "one" and "two" with 40 documents of one shard
// each, then replaces one and deletes another, so that dead chunks are
// excluded on both sides of the wire. It returns the writer, one process
// searching everything with a cache of its own.
func corpus(t *testing.T, tbl store.Table, blobs store.Blobs) *vector.Service {
	t.Helper()
	ctx := context.Background()
	svc := vector.New(tbl, blobs, nil, &vector.Options{Cache: vector.NewCache(64 << 20), MaxShards: 1000})
	words := strings.Fields("moon tide sea wave river magma lava crust bread dough oven chess pawn queen knight " +
		"gravity orbit planet star comet basalt yeast flour salt water current storm")
	for _, alias := range []string{"one", "two"} {
		if _, err := svc.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: alias}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		var b strings.Builder
		for j := range 24 {
			b.WriteString(words[(i*5+j*j+2*j*i)%len(words)] + " ")
			if j%8 == 7 {
				b.WriteString(".\n\n")
			}
		}
		in := vector.IngestInput{Store: []string{"one", "two"}[i%2], DocID: fmt.Sprintf("d%02d", i), Content: b.String(),
			Metadata: map[string]string{"third": fmt.Sprint(i % 3)}}
		if _, err := svc.Ingest(ctx, acme, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Ingest(ctx, acme, vector.IngestInput{Store: "one", DocID: "d00", Content: "moon moon lava"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "two", DocID: "d03"}); err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestFanOutThroughFunctionsMatchesOneProcess searches with every shard a
// group of its own, each group's calls crossing invoke.Local to the real
// worker handler as JSON, and checks the result is exactly one process's.
func TestFanOutThroughFunctionsMatchesOneProcess(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	whole := corpus(t, tbl, blobs)
	for _, tc := range []struct {
		in  vector.RetrieveInput
		ops []string // the worker operations the search must use
	}{
		{vector.RetrieveInput{Question: "moon tide and the sea", Mode: "bm25", TopK: 20}, []string{vector.OpStats, vector.OpSearch}},
		{vector.RetrieveInput{Question: "lava crust magma basalt", Mode: "vector", TopK: 20}, []string{vector.OpSearch}},
		// Hybrid: statistics, a BM25 round, the feedback vectors, a vector round.
		{vector.RetrieveInput{Question: "bread dough yeast flour", Mode: "hybrid", TopK: 20}, []string{vector.OpStats, vector.OpSearch, vector.OpVectors}},
		{vector.RetrieveInput{Question: "queen knight pawn", TopK: 10, Filter: map[string][]string{"third": {"0", "2"}}}, []string{vector.OpStats, vector.OpSearch, vector.OpVectors}},
	} {
		t.Run(fmt.Sprintf("%s %q", tc.in.Mode, tc.in.Question), func(t *testing.T) {
			tc.in.Stores = []string{"one", "two"}
			want, err := whole.Retrieve(ctx, acme, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			inv := workers(blobs)
			got, err := fanned(tbl, blobs, inv).Retrieve(ctx, acme, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Documents) < 10 {
				t.Fatalf("only %d documents: the test needs more", len(want.Documents))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fanned out over functions differs from one process (-one +fanned):\n%s", diff)
			}
			for _, op := range vector.SearchGroupOps {
				if n := inv.called(op); (n > 0) != (strings.Contains(strings.Join(tc.ops, " "), op)) {
					t.Errorf("the workers were called %d times for %s; want calls for %v only", n, op, tc.ops)
				}
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
		got, err := fanned(tbl, blobs, workers(blobs)).RankDocuments(ctx, acme, in, 100)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mismatch (-one +fanned):\n%s", diff)
		}
	})
}

// TestAShardGoneMidSearchIsFoundAgainAcrossTheWire deletes a document that
// was alone in its shard just as the workers are first called: the worker
// reports the shard gone, and the coordinator reads the manifests again and
// answers from the new ones.
func TestAShardGoneMidSearchIsFoundAgainAcrossTheWire(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	whole := corpus(t, tbl, blobs)
	inv := workers(blobs)
	var once sync.Once
	inv.before = func(string) {
		once.Do(func() {
			if _, err := whole.DeleteDocument(ctx, acme, vector.DeleteDocumentInput{Store: "one", DocID: "d10"}); err != nil {
				t.Error(err)
			}
		})
	}
	in := vector.RetrieveInput{Question: "moon tide and the sea", Mode: "bm25", TopK: 20, Stores: []string{"one", "two"}}
	got, err := fanned(tbl, blobs, inv).Retrieve(ctx, acme, in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Retrieve(ctx, acme, in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-one process after the delete +fanned):\n%s", diff)
	}
	// 39 shards were live when the search began, 38 after the delete.
	if n := inv.called(vector.OpStats); n != 39+38 {
		t.Errorf("%d stats calls; want 39, then 38 over the new manifests", n)
	}
}

func TestAFailingWorkerFailsTheSearch(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	corpus(t, tbl, blobs)
	in := vector.RetrieveInput{Question: "moon tide and the sea", Stores: []string{"one", "two"}}
	for _, tc := range []struct {
		name   string
		worker lambda.Handler
		says   string
	}{
		{"a worker that crashes", lambda.NewHandler(func(context.Context, invoke.Request) (invoke.Response, error) {
			panic("out of memory")
		}), "a search worker (vector/search_group) failed (Runtime.Panic); retry"},
		{"a worker that times out", lambda.NewHandler(func(ctx context.Context, _ invoke.Request) (invoke.Response, error) {
			<-ctx.Done() // until the function's timeout, as invoke.Local enforces it
			return invoke.Response{}, ctx.Err()
		}), "a search worker (vector/search_group) timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := invoke.NewLocal(map[string]lambda.Handler{worker.Function: tc.worker}, &invoke.LocalOptions{Timeout: func(string) time.Duration { return time.Millisecond }})
			_, err := fanned(tbl, blobs, inv).Retrieve(ctx, acme, in)
			if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v (%s); want unavailable, saying %q", err, fault.KindOf(err), tc.says)
			}
		})
	}
	t.Run("a worker that finds a corrupt shard", func(t *testing.T) {
		keys := shardKeys(t, blobs, "tenants/acme/vector/two/shards/")
		rc, _, err := blobs.Get(ctx, keys[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		data[len(data)/2] ^= 0xff
		if _, err := blobs.Put(ctx, keys[0], data, nil); err != nil {
			t.Fatal(err)
		}
		_, err = fanned(tbl, blobs, workers(blobs)).Retrieve(ctx, acme, in)
		if fault.KindOf(err) != fault.KindUnavailable || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), keys[0]) {
			t.Errorf("error %v (%s); want unavailable, saying shard %s is corrupt", err, fault.KindOf(err), keys[0])
		}
	})
}

// TestTheWorkerRefusesAnotherTenantsShards calls the worker as the
// coordinator would, through invoke.Local, but naming acme's shards for
// globex: it refuses, naming the key, and reads nothing.
func TestTheWorkerRefusesAnotherTenantsShards(t *testing.T) {
	ctx := context.Background()
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	corpus(t, tbl, blobs)
	keys := shardKeys(t, blobs, "tenants/acme/vector/one/shards/")
	counting := &readCounter{Blobs: blobs}
	inv := workers(counting)
	for _, c := range []tenant.Caller{globex, {Tenant: "acme-evil", Principal: "mallory"}} {
		t.Run(c.Tenant, func(t *testing.T) {
			args, _ := json.Marshal(vector.SearchGroupInput{Op: vector.OpStats, Terms: []string{"moon"},
				Group: vector.ShardGroup{Shards: []vector.GroupShard{{Store: "one", Key: keys[0], Chunks: 1}}}})
			resp, err := inv.Invoke(ctx, worker.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: worker.Name, Arguments: args, Caller: c})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Error == nil || resp.Error.Kind != string(fault.KindInvalid) || resp.Error.Field != "group.shards[0].key" {
				t.Errorf("answered %s, error %+v; want group.shards[0].key refused", resp.Result, resp.Error)
			}
			if n := counting.reads.Load(); n != 0 {
				t.Errorf("%d objects were read", n)
			}
		})
	}
	t.Run("through the searcher, the refusal is an error of the search, not the caller's", func(t *testing.T) {
		_, err := remote.New(inv, worker.Function, worker.Name).Stats(ctx, globex,
			vector.ShardGroup{Shards: []vector.GroupShard{{Store: "one", Key: keys[0], Chunks: 1}}}, []string{"moon"})
		if err == nil || fault.KindOf(err) != fault.KindInternal || !strings.Contains(err.Error(), "group.shards[0].key") {
			t.Errorf("error %v (%s); want an internal error naming the refused key", err, fault.KindOf(err))
		}
	})
}

func shardKeys(t *testing.T, blobs store.Blobs, prefix string) []string {
	t.Helper()
	page, err := blobs.List(context.Background(), prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, b := range page.Blobs {
		keys = append(keys, b.Key)
	}
	if len(keys) == 0 {
		t.Fatalf("no objects under %s", prefix)
	}
	return keys
}

// readCounter counts the object reads that reach a store.Blobs.
type readCounter struct {
	store.Blobs
	reads atomic.Int64
}

func (r *readCounter) Get(ctx context.Context, key string, opts *store.GetOptions) (io.ReadCloser, store.BlobInfo, error) {
	r.reads.Add(1)
	return r.Blobs.Get(ctx, key, opts)
}

func (r *readCounter) Head(ctx context.Context, key string) (store.BlobInfo, error) {
	r.reads.Add(1)
	return r.Blobs.Head(ctx, key)
}
