package vector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// The documents the model plays with, and the versions each has.
const (
	modelDocs     = 4
	modelVersions = 3
)

// A version is one content of a model document. Each of its passages holds
// its tag, so a search for every tag finds every passage search shows.
type version struct{ tag, text, rev string }

// versionOf returns version v of document doc: a short text (one passage),
// a long one (several) and the short text again under other metadata, so
// that the first and the last differ only by their content hash.
func versionOf(doc, v int) version {
	short := func(tag string) string {
		return fmt.Sprintf("%s zqall first %s zqall second %s zqall.", tag, tag, tag)
	}
	long := func(tag string) string {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, "%s zqall w%d ", tag, i)
		}
		return b.String()
	}
	a, b := fmt.Sprintf("zq%da", doc), fmt.Sprintf("zq%db", doc)
	return []version{{a, short(a), "0"}, {b, long(b), "1"}, {a, short(a), "2"}}[v]
}

func modelDocID(doc int) string { return fmt.Sprintf("d%d", doc) }

// modelQuery finds every passage of every version.
func modelQuery() string {
	terms := []string{"zqall"}
	for doc := range modelDocs {
		terms = append(terms, versionOf(doc, 0).tag, versionOf(doc, 1).tag)
	}
	return strings.Join(terms, " ")
}

type opKind int

const (
	opIngest opKind = iota
	opDelete
	opCompact
)

// lifeOp is one step of a store's life.
type lifeOp struct {
	kind         opKind
	doc, version int
}

func ingestOp(doc, v int) lifeOp { return lifeOp{kind: opIngest, doc: doc, version: v} }
func deleteOp(doc int) lifeOp    { return lifeOp{kind: opDelete, doc: doc} }
func compactOp() lifeOp          { return lifeOp{kind: opCompact} }

func (o lifeOp) String() string {
	switch o.kind {
	case opIngest:
		return fmt.Sprintf("ingest %s version %d", modelDocID(o.doc), o.version)
	case opDelete:
		return "delete " + modelDocID(o.doc)
	}
	return "compact"
}

// TestSearchFindsExactlyTheLiveVersions plays a store's life, scripted or as
// seeded random sequences of ingests, replacements, deletions and
// compactions (some of whose writes fail, lose their answer or crash the
// process), against a model of which version of each document is live. After
// every step a BM25 search must find every passage of the live versions and
// nothing of a replaced or deleted one, and document_list and the store's
// counts must agree with the model.
func TestSearchFindsExactlyTheLiveVersions(t *testing.T) {
	tests := []struct {
		name      string
		maxShards int
		// ivf, if set, is the store's IVF threshold: its centroids come and
		// go as its live chunks cross it.
		ivf    int64
		script []lifeOp
		// A random life instead of a script: its seed and length, and the
		// chances that a step is a compaction, and that one of its writes
		// goes wrong.
		seed          uint64
		steps         int
		compact, fail float64
	}{
		{name: "a version ingested again after another, each in a shard of its own, is found", maxShards: 100,
			script: []lifeOp{ingestOp(1, 0), ingestOp(0, 0), ingestOp(0, 1), ingestOp(0, 0)}},
		{name: "a version ingested again after compaction merged it with other documents is found", maxShards: 3,
			script: []lifeOp{ingestOp(1, 0), ingestOp(2, 0), ingestOp(3, 0), ingestOp(0, 0), ingestOp(0, 1), ingestOp(0, 0)}},
		{name: "a version ingested again with compactions in between is found", maxShards: 100,
			script: []lifeOp{ingestOp(1, 0), ingestOp(0, 0), compactOp(), ingestOp(0, 1), compactOp(), ingestOp(0, 0), compactOp()}},
		{name: "a deleted version ingested again is found", maxShards: 100,
			script: []lifeOp{ingestOp(1, 0), ingestOp(0, 0), compactOp(), deleteOp(0), ingestOp(0, 0), compactOp(), deleteOp(0), compactOp()}},
		{name: "two versions taking turns leave only the last one found", maxShards: 100,
			script: []lifeOp{ingestOp(1, 0), ingestOp(0, 0), compactOp(), ingestOp(0, 1), ingestOp(0, 0), ingestOp(0, 1), compactOp(), ingestOp(0, 0), compactOp()}},
		{name: "the same text under other metadata replaces the first", maxShards: 100,
			script: []lifeOp{ingestOp(1, 0), ingestOp(0, 0), compactOp(), ingestOp(0, 2), ingestOp(0, 0), compactOp(), ingestOp(0, 2)}},
		{name: "a random life with many shards allowed and a compaction now and then keeps search exact", maxShards: 100, seed: 1, steps: 300, compact: 0.1},
		{name: "a random life compacting past 3 shards keeps search exact", maxShards: 3, seed: 2, steps: 300},
		{name: "a random life with compactions between steps keeps search exact", maxShards: 3, seed: 3, steps: 300, compact: 0.25},
		{name: "a random life whose writes fail, lose their answers or crash keeps search exact", maxShards: 3, seed: 4, steps: 300, compact: 0.2, fail: 0.3},
		{name: "a version ingested again after another, with an inverted-file index, is found", maxShards: 3, ivf: 16,
			script: []lifeOp{ingestOp(1, 1), ingestOp(2, 1), ingestOp(3, 1), compactOp(), ingestOp(0, 0), ingestOp(0, 1), compactOp(), ingestOp(0, 0), compactOp(), deleteOp(1), compactOp(), ingestOp(1, 1)}},
		{name: "a random life with an inverted-file index coming and going keeps search exact", maxShards: 3, ivf: 16, seed: 5, steps: 300, compact: 0.25},
		{name: "a random life with an inverted-file index whose writes fail, lose their answers or crash keeps search exact", maxShards: 3, ivf: 16, seed: 6, steps: 300, compact: 0.2, fail: 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, be := range storetest.TableBackends(t) {
				t.Run(be.Name, func(t *testing.T) {
					// DynamoDB goes with S3, as on AWS; the embedded table with a folder.
					blobs := storetest.OpenLocalFS(t)
					if be.Name != "embedded" {
						blobs = storetest.OpenFakeS3(t)
					}
					w := newWorld(t, be.Open(t), blobs, tt.maxShards, tt.ivf)
					w.createStore()
					play(t, w, tt.script, tt.seed, tt.steps, tt.compact, tt.fail)
				})
			}
		})
	}
}

// play runs script, or else a random life of steps steps from seed, on w.
func play(t *testing.T, w *world, script []lifeOp, seed uint64, steps int, compact, fail float64) {
	if script != nil {
		for i, op := range script {
			w.step(i, op, noFault, 0)
		}
		return
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range steps {
		var op lifeOp
		switch p := rng.Float64(); {
		case p < compact:
			op = compactOp()
		case p < compact+0.2:
			op = deleteOp(rng.IntN(modelDocs))
		default:
			op = ingestOp(rng.IntN(modelDocs), rng.IntN(modelVersions))
		}
		kind, at := noFault, 0
		if rng.Float64() < fail {
			kind, at = faultKind(1+rng.IntN(4)), 1+rng.IntN(10)
		}
		w.step(i, op, kind, at)
	}
}

// world is a store under test and the model of it.
type world struct {
	t      *testing.T
	ctx    context.Context
	c      tenant.Caller
	faults *faults
	open   func() // starts a new process: svc and compactor
	// svc ingests, deletes and searches; compactor compacts whenever a store
	// has more than one shard.
	svc, compactor *vector.Service

	ivf     bool        // the store gets an inverted-file index
	live    map[int]int // document -> live version
	chunks  [modelDocs][modelVersions]int
	hashes  [modelDocs][modelVersions]string
	history []string
}

func newWorld(t *testing.T, tbl store.Table, blobs store.Blobs, maxShards int, ivf int64) *world {
	t.Helper()
	acme, _ := newTenants()
	f := &faults{}
	w := &world{t: t, ctx: context.Background(), c: acme, faults: f, live: map[int]int{}, ivf: ivf > 0}
	ftbl, fblobs := &faultyTable{Table: tbl, f: f}, &faultyBlobs{Blobs: blobs, f: f}
	w.open = func() {
		w.svc = newService(t, ftbl, fblobs, &vector.Options{MaxShards: maxShards, IVFThreshold: ivfOption(ivf)})
		w.compactor = newService(t, ftbl, fblobs, &vector.Options{MaxShards: 1, IVFThreshold: ivfOption(ivf)})
	}
	w.open()
	// What each version becomes, learned in a store of its own.
	if _, err := w.svc.CreateStore(w.ctx, acme, modelStore("probe")); err != nil {
		t.Fatal(err)
	}
	for doc := range modelDocs {
		for v := range modelVersions {
			ver := versionOf(doc, v)
			out, err := w.svc.Ingest(w.ctx, acme, vector.IngestInput{Store: "probe", DocID: fmt.Sprintf("p%d-%d", doc, v),
				Content: ver.text, Metadata: map[string]string{"rev": ver.rev}})
			if err != nil {
				t.Fatal(err)
			}
			w.chunks[doc][v], w.hashes[doc][v] = out.Chunks, out.ContentHash
		}
	}
	return w
}

// ivfOption is the IVF threshold option of a world with threshold ivf
// (0: none).
func ivfOption(ivf int64) int64 {
	if ivf == 0 {
		return -1
	}
	return ivf
}

// modelStore is the store the model plays with, or one like it.
func modelStore(alias string) vector.CreateStoreInput {
	return vector.CreateStoreInput{Alias: alias, ChunkSize: 100, ChunkOverlap: 20}
}

// createStore creates the store the model plays with, empty.
func (w *world) createStore() {
	w.t.Helper()
	if _, err := w.svc.CreateStore(w.ctx, w.c, modelStore("s")); err != nil {
		w.t.Fatal(err)
	}
}

// step applies op, with a fault at its at-th write, to the store and the
// model, and checks that they agree.
func (w *world) step(i int, op lifeOp, kind faultKind, at int) {
	w.t.Helper()
	desc := op.String()
	if kind != noFault {
		desc += fmt.Sprintf(" (%s at write %d)", kind, at)
	}
	w.history = append(w.history, desc)
	w.faults.arm(kind, at)
	err := w.apply(op)
	landed, crashed := w.faults.disarm()
	if kind == noFault && err != nil {
		w.fail(i, "%v", err)
	}
	if kind != noFault && landed > 0 {
		// The commit landed, whatever the call returned.
		switch op.kind {
		case opIngest:
			w.live[op.doc] = op.version
		case opDelete:
			delete(w.live, op.doc)
		}
	}
	if crashed {
		w.open() // the process died: a new one carries on
	}
	w.check(i)
}

// apply runs op and, when no fault was injected, checks what the call
// returned and updates the model with it.
func (w *world) apply(op lifeOp) error {
	status, n, err := w.run(op)
	if w.faults.armed() || op.kind == opCompact {
		return err
	}
	v, live := w.live[op.doc]
	if op.kind == opDelete {
		switch {
		case !live && fault.KindOf(err) != fault.KindNotFound:
			return fmt.Errorf("deleting a document that is not there: %v, want not found", err)
		case !live:
			return nil
		case err != nil:
			return err
		case n != w.chunks[op.doc][v]:
			return fmt.Errorf("delete removed %d chunks, want %d", n, w.chunks[op.doc][v])
		}
		delete(w.live, op.doc)
		return nil
	}
	if err != nil {
		return err
	}
	want := "added"
	switch {
	case live && v == op.version:
		want = "unchanged"
	case live:
		want = "replaced"
	}
	if status != want || n != w.chunks[op.doc][op.version] {
		return fmt.Errorf("ingest: %s with %d chunks, want %s with %d", status, n, want, w.chunks[op.doc][op.version])
	}
	w.live[op.doc] = op.version
	return nil
}

// run applies op to the store alone, and returns its status ("" for a
// compaction) and the chunks it added (an ingest) or removed (a delete).
func (w *world) run(op lifeOp) (string, int, error) {
	switch op.kind {
	case opCompact:
		return "", 0, w.compactor.Compact(w.ctx, w.c, "s")
	case opDelete:
		out, err := w.svc.DeleteDocument(w.ctx, w.c, vector.DeleteDocumentInput{Store: "s", DocID: modelDocID(op.doc)})
		return out.Status, out.Removed, err
	}
	ver := versionOf(op.doc, op.version)
	out, err := w.svc.Ingest(w.ctx, w.c, vector.IngestInput{Store: "s", DocID: modelDocID(op.doc), Content: ver.text,
		Metadata: map[string]string{"rev": ver.rev}})
	return out.Status, out.Chunks, err
}

// check compares the store with the model: BM25 search, and with an
// inverted-file index, vector search probing one cluster, must find every
// live passage (the store holds fewer than top_k).
func (w *world) check(i int) {
	w.t.Helper()
	w.checkSearch(i, "bm25")
	if w.ivf {
		w.checkSearch(i, "vector")
	}
	w.checkCounts(i)
}

// checkSearch compares what a search in mode finds with the model.
func (w *world) checkSearch(i int, mode string) {
	w.t.Helper()
	out, err := w.svc.Retrieve(w.ctx, w.c, vector.RetrieveInput{Question: modelQuery(), Stores: []string{"s"}, Mode: mode, TopK: vector.MaxTopK, NProbe: 1})
	if err != nil {
		w.fail(i, "search: %v", err)
	}
	found := map[string][]vector.Document{}
	for _, d := range out.Documents {
		found[d.DocID] = append(found[d.DocID], d)
	}
	for doc := range modelDocs {
		id := modelDocID(doc)
		hits := found[id]
		delete(found, id)
		v, live := w.live[doc]
		if !live {
			if len(hits) > 0 {
				w.fail(i, "%s is deleted, yet search finds %d of its passages: %q", id, len(hits), hits[0].Content)
			}
			continue
		}
		ver := versionOf(doc, v)
		for _, h := range hits {
			if !strings.Contains(h.Content, ver.tag) || h.Metadata["rev"] != ver.rev {
				w.fail(i, "%s is at version %d, yet search finds a passage of another (rev %s): %q", id, v, h.Metadata["rev"], h.Content)
			}
		}
		if len(hits) != w.chunks[doc][v] {
			w.fail(i, "%s is at version %d, of %d passages; %s search finds %d", id, v, w.chunks[doc][v], mode, len(hits))
		}
	}
	for id := range found {
		w.fail(i, "search finds a document that was never ingested: %s", id)
	}
}

// checkCounts compares document_list and the store's counts with the model.
func (w *world) checkCounts(i int) {
	w.t.Helper()
	wantDocs, gotDocs := map[string]string{}, map[string]string{}
	var wantChunks int64
	for doc, v := range w.live {
		wantDocs[modelDocID(doc)] = fmt.Sprintf("%s, %d chunks", w.hashes[doc][v], w.chunks[doc][v])
		wantChunks += int64(w.chunks[doc][v])
	}
	list, err := w.svc.ListDocuments(w.ctx, w.c, vector.ListDocumentsInput{Store: "s"})
	if err != nil {
		w.fail(i, "document_list: %v", err)
	}
	for _, d := range list.Documents {
		gotDocs[d.DocID] = fmt.Sprintf("%s, %d chunks", d.ContentHash, d.Chunks)
	}
	if diff := cmp.Diff(wantDocs, gotDocs); diff != "" {
		w.fail(i, "document_list mismatch (-want +got):\n%s", diff)
	}
	st, err := w.svc.GetStore(w.ctx, w.c, vector.StoreInput{Alias: "s"})
	if err != nil || st.Documents != int64(len(wantDocs)) || st.Chunks != wantChunks {
		w.fail(i, "store counts %d documents, %d chunks (%v); want %d, %d", st.Documents, st.Chunks, err, len(wantDocs), wantChunks)
	}
}

// fail ends the test, naming the step and the steps that led to it.
func (w *world) fail(i int, format string, args ...any) {
	w.t.Helper()
	msg := fmt.Sprintf("step %d: %s", i, fmt.Sprintf(format, args...))
	if from := max(0, len(w.history)-12); len(w.history) > 0 {
		msg += fmt.Sprintf("\nsteps %d-%d: %s", from, len(w.history)-1, strings.Join(w.history[from:], "; "))
	}
	w.t.Fatal(msg)
}

// errInjected is the error of a write a fault disturbed.
var errInjected = errors.New("injected failure")

// A faultKind is what befalls the write a fault is armed at.
type faultKind int

const (
	noFault    faultKind = iota
	failWrite            // the write does not land, and fails
	loseAnswer           // the write lands, and fails as if its answer were lost
	crashOn              // the process dies before the write: no write lands from then on
	crashAfter           // the process dies after the write landed
)

func (k faultKind) String() string {
	return [...]string{"no fault", "failed write", "lost answer", "crash before the write", "crash after the write"}[k]
}

// faults disturbs the at-th write (a table Put, Delete or Transact, a blob
// Put or Delete) after it is armed.
type faults struct {
	mu         sync.Mutex
	kind       faultKind
	at, writes int
	landed     int  // transactions that landed since armed
	dead       bool // the process crashed
}

func (f *faults) arm(kind faultKind, at int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kind, f.at, f.writes, f.landed, f.dead = kind, at, 0, 0, false
}

func (f *faults) armed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kind != noFault
}

// disarm returns how many transactions landed while armed, and whether the
// process crashed.
func (f *faults) disarm() (landed int, crashed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	landed, crashed = f.landed, f.dead
	f.kind, f.dead = noFault, false
	return landed, crashed
}

func (f *faults) write(txn bool, do func() error) error {
	f.mu.Lock()
	f.writes++
	hit := f.kind != noFault && f.writes == f.at
	if hit && f.kind == crashOn {
		f.dead = true
	}
	dead := f.dead
	f.mu.Unlock()
	if dead || hit && f.kind == failWrite {
		return errInjected
	}
	err := do()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && txn {
		f.landed++
	}
	if hit && err == nil && (f.kind == loseAnswer || f.kind == crashAfter) {
		f.dead = f.kind == crashAfter
		return errInjected
	}
	return err
}

type faultyTable struct {
	store.Table
	f *faults
}

func (t *faultyTable) Put(ctx context.Context, it store.Item, c store.Condition) error {
	return t.f.write(false, func() error { return t.Table.Put(ctx, it, c) })
}

func (t *faultyTable) Delete(ctx context.Context, pk, sk string, c store.Condition) error {
	return t.f.write(false, func() error { return t.Table.Delete(ctx, pk, sk, c) })
}

func (t *faultyTable) Transact(ctx context.Context, writes ...store.Write) error {
	return t.f.write(true, func() error { return t.Table.Transact(ctx, writes...) })
}

type faultyBlobs struct {
	store.Blobs
	f *faults
}

func (b *faultyBlobs) Put(ctx context.Context, key string, data []byte, opts *store.PutOptions) (store.BlobInfo, error) {
	var info store.BlobInfo
	err := b.f.write(false, func() error {
		var err error
		info, err = b.Blobs.Put(ctx, key, data, opts)
		return err
	})
	return info, err
}

func (b *faultyBlobs) Delete(ctx context.Context, key string) error {
	return b.f.write(false, func() error { return b.Blobs.Delete(ctx, key) })
}

// TestAStoreWrittenBeforeNonces loads a store as the code before chunk ids
// had nonces left it (testdata/legacy-store: its table items and objects
// after d1 v1, d2 v1, d3 v0, d0 v0, a compaction, d3 v2, d0 v1, d0 v0, the
// tenant named "legacy"). Its dead list still means what it meant: d3's
// replaced version stays hidden, and so does d0, which that code hid by
// mistake (its ids were those of the copy it had replaced). Then the store
// heals, and lives on as any other.
func TestAStoreWrittenBeforeNonces(t *testing.T) {
	tests := []struct {
		name string
		// heal brings d0 back: an ingest of its text, which is not unchanged
		// while the dead list hides it; or a compaction of the shards holding
		// its two copies, which keeps one of them (the dead list names one).
		heal []healStep
	}{
		{"re-ingesting the hidden version brings it back", []healStep{{ingestOp(0, 0), "replaced"}}},
		{"compacting the shards that hold the hidden version brings it back", []healStep{{compactOp(), ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, be := range storetest.TableBackends(t) {
				t.Run(be.Name, func(t *testing.T) {
					blobs := storetest.OpenLocalFS(t)
					if be.Name != "embedded" {
						blobs = storetest.OpenFakeS3(t)
					}
					tbl := be.Open(t)
					w := newWorld(t, tbl, blobs, 3, 0)
					loadLegacyStore(t, tbl, blobs, w.c)

					out, err := w.svc.Retrieve(w.ctx, w.c, vector.RetrieveInput{Question: modelQuery(), Stores: []string{"s"}, Mode: "bm25", TopK: vector.MaxTopK})
					if err != nil {
						t.Fatal(err)
					}
					found := map[string]string{}
					for _, d := range out.Documents {
						found[d.DocID+" rev "+d.Metadata["rev"]] = "found"
					}
					want := map[string]string{"d1 rev 1": "found", "d2 rev 1": "found", "d3 rev 2": "found"}
					if diff := cmp.Diff(want, found); diff != "" {
						t.Fatalf("the stored store searches differently (-want +got):\n%s", diff)
					}
					// Both copies of rev 0 are hidden: d3's replaced one, and d0.
					out, err = w.svc.Retrieve(w.ctx, w.c, vector.RetrieveInput{Question: modelQuery(), Stores: []string{"s"}, Mode: "bm25",
						Filter: map[string][]string{"rev": {"0"}}})
					if err != nil || len(out.Documents) > 0 {
						t.Fatalf("search for rev 0 finds %v, %v; want nothing", docIDs(out), err)
					}

					for _, h := range tt.heal {
						if got, _, err := w.run(h.op); err != nil || got != h.want {
							t.Fatalf("%s: %q, %v; want %q", h.op, got, err, h.want)
						}
					}
					w.live = map[int]int{0: 0, 1: 1, 2: 1, 3: 2}
					w.check(0)
					play(t, w, nil, 5, 100, 0.2, 0.2)
				})
			}
		})
	}
}

// healStep is an operation and the status it must return.
type healStep struct {
	op   lifeOp
	want string
}

// legacyTenant is the tenant of testdata/legacy-store.
const legacyTenant = "legacy"

// loadLegacyStore writes testdata/legacy-store into tbl and blobs, under
// tenant c.
func loadLegacyStore(t *testing.T, tbl store.Table, blobs store.Blobs, c tenant.Caller) {
	t.Helper()
	ctx := context.Background()
	retenant := strings.NewReplacer(tenant.Key(legacyTenant), tenant.Key(c.Tenant),
		tenant.BlobPrefix(legacyTenant), tenant.BlobPrefix(c.Tenant))
	data, err := os.ReadFile("testdata/legacy-store/items.json")
	if err != nil {
		t.Fatal(err)
	}
	var items []struct {
		PK, SK string
		Attrs  map[string]any
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		attrs := store.Attrs{}
		for k, v := range it.Attrs {
			switch v := v.(type) {
			case json.Number:
				n, err := v.Int64()
				if err != nil {
					t.Fatalf("item %s %s: %s: %v", it.PK, it.SK, k, err)
				}
				attrs[k] = n
			case string:
				attrs[k] = retenant.Replace(v)
			default:
				attrs[k] = v
			}
		}
		if err := tbl.Put(ctx, store.Item{PK: retenant.Replace(it.PK), SK: it.SK, Attrs: attrs}, store.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	root := "testdata/legacy-store/blobs"
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".json") {
			data = []byte(retenant.Replace(string(data)))
		}
		rel, _ := filepath.Rel(root, p)
		_, err = blobs.Put(ctx, tenant.BlobPrefix(c.Tenant)+filepath.ToSlash(rel), data, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentVersionsLeaveOneFound has processes ingest versions of the
// same documents, and delete them, at once, while compactions race (the
// shard limit is low): after each round, the version document_list names
// must be the only one search finds.
func TestConcurrentVersionsLeaveOneFound(t *testing.T) {
	for _, be := range storetest.TableBackends(t) {
		t.Run(be.Name, func(t *testing.T) {
			blobs := storetest.OpenLocalFS(t)
			if be.Name != "embedded" {
				blobs = storetest.OpenFakeS3(t)
			}
			tbl := be.Open(t)
			w := newWorld(t, tbl, blobs, 2, 0)
			w.createStore()
			var procs []*vector.Service
			for range 3 {
				procs = append(procs, newService(t, tbl, blobs, &vector.Options{MaxShards: 2}))
			}
			rng := rand.New(rand.NewPCG(6, 7))
			for round := range 12 {
				var ops []lifeOp
				for range 6 {
					op := ingestOp(rng.IntN(2), rng.IntN(modelVersions))
					if rng.IntN(5) == 0 {
						op = deleteOp(op.doc)
					}
					ops = append(ops, op)
				}
				var wg sync.WaitGroup
				for i, op := range ops {
					svc := procs[i%len(procs)]
					wg.Go(func() {
						var err error
						if op.kind == opDelete {
							_, err = svc.DeleteDocument(w.ctx, w.c, vector.DeleteDocumentInput{Store: "s", DocID: modelDocID(op.doc)})
						} else {
							ver := versionOf(op.doc, op.version)
							_, err = svc.Ingest(w.ctx, w.c, vector.IngestInput{Store: "s", DocID: modelDocID(op.doc), Content: ver.text,
								Metadata: map[string]string{"rev": ver.rev}})
						}
						if k := fault.KindOf(err); err != nil && k != fault.KindConflict && !(op.kind == opDelete && k == fault.KindNotFound) {
							t.Errorf("round %d: %s: %v", round, op, err)
						}
					})
				}
				wg.Go(func() {
					if err := w.compactor.Compact(w.ctx, w.c, "s"); err != nil {
						t.Errorf("round %d: compact: %v", round, err)
					}
				})
				wg.Wait()
				w.history = append(w.history, fmt.Sprintf("round %d: %v at once", round, ops))
				w.live = w.listed(round)
				w.check(round)
			}
		})
	}
}

// listed returns the versions document_list names.
func (w *world) listed(i int) map[int]int {
	w.t.Helper()
	list, err := w.svc.ListDocuments(w.ctx, w.c, vector.ListDocumentsInput{Store: "s"})
	if err != nil {
		w.fail(i, "document_list: %v", err)
	}
	live := map[int]int{}
	for _, d := range list.Documents {
		v := -1
		for doc := range modelDocs {
			for ver := range modelVersions {
				if modelDocID(doc) == d.DocID && w.hashes[doc][ver] == d.ContentHash {
					live[doc], v = ver, ver
				}
			}
		}
		if v < 0 {
			w.fail(i, "document_list names a version never ingested: %+v", d)
		}
	}
	return live
}
