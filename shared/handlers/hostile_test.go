package handlers_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/document/documenttest"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// maxHostileHeap bounds how far one refused call may grow the heap, however
// much its file would have expanded to (gigabytes, before the limits).
const maxHostileHeap = 256 << 20

// backend is a table and a blob store the same test runs on.
type backend struct {
	name  string
	table store.Table
	blobs store.Blobs
}

// backends returns the embedded table with the local folder and, when the
// test command started DynamoDB Local, DynamoDB Local with S3 (gofakes3).
func backends(t *testing.T) []func(t *testing.T) backend {
	tables, blobs := storetest.TableBackends(t), storetest.BlobBackends(t)
	var out []func(t *testing.T) backend
	for i := range min(len(tables), len(blobs)) {
		out = append(out, func(t *testing.T) backend {
			t.Logf("backends: %s table, %s blobs", tables[i].Name, blobs[i].Name)
			return backend{name: tables[i].Name + "+" + blobs[i].Name, table: tables[i].Open(t), blobs: blobs[i].Open(t)}
		})
	}
	return out
}

// writes records the keys a table and a blob store were asked to write.
type writes struct {
	mu    sync.Mutex
	items []string // pk
	blobs []string // keys put or deleted
}

func (w *writes) item(pk string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.items = append(w.items, pk)
}

func (w *writes) blob(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.blobs = append(w.blobs, key)
}

// take returns what was recorded since the last take.
func (w *writes) take() (items, blobs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	items, blobs, w.items, w.blobs = w.items, w.blobs, nil, nil
	return items, blobs
}

type recordingTable struct {
	store.Table
	w *writes
}

func (r recordingTable) Put(ctx context.Context, it store.Item, c store.Condition) error {
	r.w.item(it.PK)
	return r.Table.Put(ctx, it, c)
}

func (r recordingTable) Delete(ctx context.Context, pk, sk string, c store.Condition) error {
	r.w.item(pk)
	return r.Table.Delete(ctx, pk, sk, c)
}

func (r recordingTable) Transact(ctx context.Context, ws ...store.Write) error {
	for _, w := range ws {
		if w.Kind != store.WriteCheck {
			r.w.item(w.Item.PK)
		}
	}
	return r.Table.Transact(ctx, ws...)
}

type recordingBlobs struct {
	store.Blobs
	w *writes
}

func (r recordingBlobs) Put(ctx context.Context, key string, data []byte, opts *store.PutOptions) (store.BlobInfo, error) {
	r.w.blob(key)
	return r.Blobs.Put(ctx, key, data, opts)
}

func (r recordingBlobs) Delete(ctx context.Context, key string) error {
	r.w.blob(key)
	return r.Blobs.Delete(ctx, key)
}

// heapPeak samples the heap's live and unswept objects until stopped, and
// returns the most it saw above what it saw first.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if v := read(); v > peak.Load() {
			peak.Store(v)
		}
		return max(peak.Load(), base) - base
	}
}

// holdings lists what a tenant has: its objects, and the items of the
// partitions the ingestion tools write (besides the audit trail).
func holdings(t *testing.T, b backend, tn string, stores []string) []string {
	t.Helper()
	var out []string
	for _, info := range storetest.ListAllBlobs(t, b.blobs, tenant.BlobPrefix(tn)) {
		out = append(out, info.Key+" "+info.ETag)
	}
	pks := []string{tenant.Key(tn) + "vs", tenant.Key(tn) + "career#atoms", tenant.Key(tn) + "career#resumes"}
	for _, s := range stores {
		pks = append(pks, tenant.Key(tn)+"vs#"+s)
	}
	for _, pk := range pks {
		q := store.Query{}
		for {
			page, err := b.table.Query(t.Context(), pk, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				attrs, _ := json.Marshal(it.Attrs)
				out = append(out, it.PK+" "+it.SK+" "+string(attrs))
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	return out
}

// callTool invokes a tool through its function's Lambda handler and returns
// its classified error, if any.
func callTool(t *testing.T, inv invoke.Invoker, tn, name string, args any) (*invoke.Response, error) {
	t.Helper()
	tool, ok := catalog.Default().Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Invoke(t.Context(), tool.Function, &invoke.Request{Method: invoke.MethodCallTool, Tool: name, Arguments: raw,
		Caller: tenant.Caller{Tenant: tn, Principal: "attacker"}, RequestID: "req-" + name, TraceID: randomHex(16)})
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestHostileDocumentsAreRefusedAndStoreNothing sends every amplification
// file of documenttest.Hostile through the real tools (vector_document_ingest
// inline and by key, the S3 indexer, ingest_resume inline), through their
// Lambda handlers, on every reachable pair of backends. Each call is refused
// with an invalid_argument error naming the limit, grows the heap by less
// than maxHostileHeap, and leaves the tenant's store as it was: the only
// writes are the audit events of the refused calls.
func TestHostileDocumentsAreRefusedAndStoreNothing(t *testing.T) {
	for _, open := range backends(t) {
		b := open(t)
		t.Run(b.name, func(t *testing.T) {
			w := &writes{}
			d := lambdafn.Deps{Table: recordingTable{b.table, w}, Blobs: recordingBlobs{b.blobs, w}}
			cat := catalog.Default()
			inv := invoke.NewLocal(map[string]lambda.Handler{
				"vector/store_create":    vectorfn.StoreCreate.Build(d),
				"vector/document_ingest": vectorfn.DocumentIngest.Build(d),
				"career/ingest_resume":   careerfn.IngestResume.Build(d),
			}, &invoke.LocalOptions{Timeout: cat.Timeout})
			indexer := vectorfn.Indexer.Build(d)
			tn := "hostile-" + randomHex(8)
			files := documenttest.Hostile()
			// A store per chunk size the files need.
			storeOf := func(h documenttest.HostileFile) string {
				if h.ChunkSize == 0 {
					return "docs"
				}
				return fmt.Sprintf("chunks-%d", h.ChunkSize)
			}
			var stores []string
			for _, h := range files {
				if s := storeOf(h); !slices.Contains(stores, s) {
					stores = append(stores, s)
					args := map[string]any{"alias": s}
					if h.ChunkSize != 0 {
						args["chunk_size"] = h.ChunkSize
					}
					if resp, err := callTool(t, inv, tn, "vector_store_create", args); err != nil || resp.Error != nil {
						t.Fatalf("creating store %s: %v %+v", s, err, resp)
					}
				}
			}
			for _, h := range files {
				key := tenant.BlobPrefix(tn) + "documents/" + storeOf(h) + "/" + h.Name
				if _, err := b.blobs.Put(t.Context(), key, h.Data, nil); err != nil {
					t.Fatal(err)
				}
			}
			before := holdings(t, b, tn, stores)
			w.take()

			type route struct {
				name  string
				field string
				call  func(h documenttest.HostileFile) (kind, field, message string)
			}
			tool := func(name string, args map[string]any) (kind, field, message string) {
				resp, err := callTool(t, inv, tn, name, args)
				if err != nil {
					t.Fatalf("%s failed outright: %v", name, err)
				}
				if resp.Error == nil {
					return "", "", string(resp.Result)
				}
				return resp.Error.Kind, resp.Error.Field, resp.Error.Message
			}
			routes := []route{
				{"vector_document_ingest inline", "content_base64", func(h documenttest.HostileFile) (string, string, string) {
					args := map[string]any{"store": storeOf(h), "file_name": h.Name, "content_base64": base64.StdEncoding.EncodeToString(h.Data)}
					if ext := path.Ext(h.Name); ext == ".txt" || ext == ".md" {
						delete(args, "content_base64")
						args["content"] = string(h.Data)
					}
					if h.Metadata != nil {
						args["metadata"] = h.Metadata
					}
					return tool("vector_document_ingest", args)
				}},
				{"vector_document_ingest by key", "key", func(h documenttest.HostileFile) (string, string, string) {
					args := map[string]any{"store": storeOf(h), "key": tenant.BlobPrefix(tn) + "documents/" + storeOf(h) + "/" + h.Name}
					if h.Metadata != nil {
						args["metadata"] = h.Metadata
					}
					return tool("vector_document_ingest", args)
				}},
				{"the S3 indexer", "key", func(h documenttest.HostileFile) (string, string, string) {
					if h.Metadata != nil {
						return "skip", "", "" // an upload carries no metadata
					}
					key := tenant.BlobPrefix(tn) + "documents/" + storeOf(h) + "/" + h.Name
					ev := events.S3Event{Records: []events.S3EventRecord{{EventName: "ObjectCreated:Put",
						S3: events.S3Entity{Object: events.S3Object{Key: url.QueryEscape(key)}}}}}
					payload, _ := json.Marshal(ev)
					out, err := indexer.Invoke(t.Context(), payload)
					if err != nil {
						t.Fatalf("indexer: %v", err)
					}
					var rep vector.IndexReport
					if err := json.Unmarshal(out, &rep); err != nil || len(rep.Skipped) != 1 || len(rep.Ingested) != 0 {
						return "", "", string(out) // not refused
					}
					return "invalid_argument", "key", rep.Skipped[0]
				}},
				{"ingest_resume inline", "content_base64", func(h documenttest.HostileFile) (string, string, string) {
					if h.ChunkSize != 0 || h.Metadata != nil {
						return "skip", "", "" // these amplify only through vector chunks
					}
					return tool("ingest_resume", map[string]any{"file_name": h.Name, "content_base64": base64.StdEncoding.EncodeToString(h.Data)})
				}},
			}
			for _, h := range files {
				for _, p := range routes {
					t.Run(h.Name+" through "+p.name, func(t *testing.T) {
						stop := heapPeak()
						kind, field, msg := p.call(h)
						peak := stop()
						if kind == "skip" {
							return
						}
						t.Logf("%d bytes: heap grew %d MiB at most; %s: %s", len(h.Data), peak>>20, field, msg)
						wantField := p.field
						switch ext := path.Ext(h.Name); {
						case h.Metadata != nil:
							wantField = "metadata"
						case p.field == "content_base64" && (ext == ".txt" || ext == ".md") && p.name != "ingest_resume inline":
							wantField = "content" // text goes inline as text
						}
						if kind != "invalid_argument" || (field != wantField && p.name != "the S3 indexer") || !strings.Contains(msg, h.Limit) {
							t.Errorf("answer %s %s: %.300s; want invalid_argument on %s saying %q", kind, field, msg, wantField, h.Limit)
						}
						if peak > maxHostileHeap {
							t.Errorf("the heap grew by %d MiB, more than %d MiB", peak>>20, maxHostileHeap>>20)
						}
					})
				}
			}
			items, blobs := w.take()
			for _, pk := range items {
				if !strings.HasPrefix(pk, tenant.Key(tn)+"trace#") {
					t.Errorf("a refused call wrote to %s", pk)
				}
			}
			if len(blobs) > 0 {
				t.Errorf("refused calls wrote or deleted objects: %v", blobs)
			}
			if diff := cmp.Diff(before, holdings(t, b, tn, stores)); diff != "" {
				t.Errorf("the tenant's store changed (-before +after):\n%s", diff)
			}
		})
	}
}

// countingEmbedder counts the embedding calls it serves, those begun after
// their call's context ended, and those begun after the test stopped
// waiting. The call numbered holdAt, if any, waits for its context to end,
// as an embedding service slower than the call's deadline would.
type countingEmbedder struct {
	provider.Embedder
	holdAt             int64
	calls, late, after atomic.Int64
	returned           atomic.Bool
}

func (c *countingEmbedder) Embed(ctx context.Context, req provider.EmbedRequest) (provider.Embeddings, error) {
	n := c.calls.Add(1)
	if ctx.Err() != nil {
		c.late.Add(1)
	}
	if c.returned.Load() {
		c.after.Add(1)
	}
	if n == c.holdAt {
		<-ctx.Done()
		return provider.Embeddings{}, ctx.Err()
	}
	return c.Embedder.Embed(ctx, req)
}

// An ingestion past its deadline stops: the in-process invoker gives the
// handler the function's timeout as its context's deadline, and extraction,
// chunking, embedding and the shard write check it, so the call ends as
// Lambda's would (Sandbox.Timedout), no embedding begins after the deadline
// or after the call returned, no goroutine is left working, and nothing is
// stored.
func TestAnIngestionPastItsDeadlineStops(t *testing.T) {
	tbl, blobs := storetest.OpenEmbedded(t), storetest.OpenLocalFS(t)
	const tn = "deadline"
	uploads := map[string][]byte{
		// About 6 MiB of text: seconds of extraction.
		"big.pdf": documenttest.PDFTextOperators(7 << 20),
		// Enough passages for several embedding batches, and little enough
		// text that chunking it ends long before the deadline under any load.
		"big.md": documenttest.Prose(512 << 10),
	}
	for name, data := range uploads {
		if _, err := blobs.Put(t.Context(), tenant.BlobPrefix(tn)+"uploads/"+name, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.Default()
	tests := []struct {
		name    string
		file    string
		timeout time.Duration
		holdAt  int64 // the embedding call that outlasts the deadline, if any
	}{
		{"a call whose deadline passed as it began", "big.pdf", time.Millisecond, 0},
		{"a PDF being extracted", "big.pdf", 50 * time.Millisecond, 0},
		{"passages being embedded", "big.md", 10 * time.Second, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &writes{}
			emb := &countingEmbedder{Embedder: offline.NewEmbedder(offline.DefaultDims), holdAt: tt.holdAt}
			d := lambdafn.Deps{Table: recordingTable{tbl, w}, Blobs: recordingBlobs{blobs, w}, Embedder: emb}
			inv := invoke.NewLocal(map[string]lambda.Handler{
				"vector/store_create":    vectorfn.StoreCreate.Build(d),
				"vector/document_ingest": vectorfn.DocumentIngest.Build(d),
			}, &invoke.LocalOptions{Timeout: func(fn string) time.Duration {
				if fn == "vector/document_ingest" {
					return tt.timeout
				}
				return cat.Timeout(fn)
			}})
			alias := "s" + randomHex(8)
			if resp, err := callTool(t, inv, tn, "vector_store_create", map[string]any{"alias": alias}); err != nil || resp.Error != nil {
				t.Fatalf("creating the store: %v %+v", err, resp)
			}
			w.take()
			goroutines := runtime.NumGoroutine()
			_, err := callTool(t, inv, tn, "vector_document_ingest", map[string]any{"store": alias, "key": tenant.BlobPrefix(tn) + "uploads/" + tt.file})
			emb.returned.Store(true)
			var fe *invoke.FunctionError
			if !errors.As(err, &fe) || fe.Type != "Sandbox.Timedout" {
				t.Fatalf("error = %v, want the function to time out", err)
			}
			t.Logf("timed out after %d embedding calls", emb.calls.Load())
			if tt.holdAt > 0 && emb.calls.Load() != tt.holdAt {
				t.Errorf("%d embedding calls; want the deadline to stop them at call %d", emb.calls.Load(), tt.holdAt)
			}
			// Whatever the call left running would show here: give
			// goroutines time to wind down, then count them.
			for range 100 {
				if runtime.NumGoroutine() <= goroutines {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Errorf("%d goroutines after the call, %d before", n, goroutines)
			}
			if emb.late.Load() != 0 || emb.after.Load() != 0 {
				t.Errorf("%d embedding calls began after the deadline, %d after the call returned", emb.late.Load(), emb.after.Load())
			}
			items, objs := w.take()
			for _, pk := range items {
				if !strings.HasPrefix(pk, tenant.Key(tn)+"trace#") {
					t.Errorf("a timed-out call wrote to %s", pk)
				}
			}
			for _, k := range objs {
				if _, err := blobs.Head(t.Context(), k); err == nil {
					t.Errorf("a timed-out call left object %s", k)
				}
			}
		})
	}
}
