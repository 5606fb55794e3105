package vector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// wordyDoc is document i of a store of many: a few words drawn from a
// small vocabulary, so that vectors cluster, plus a word of its own.
func wordyDoc(i int) string {
	rng := rand.New(rand.NewPCG(uint64(i), 3))
	words := strings.Fields("tide moon sea wave bread dough oven crust lava magma crust cone chess pawn queen gambit river delta silt flood")
	var b strings.Builder
	for range 8 {
		b.WriteString(words[rng.IntN(len(words))] + " ")
	}
	fmt.Fprintf(&b, "zq%dword.", i)
	return b.String()
}

func vectorTop(t *testing.T, svc *vector.Service, c tenant.Caller, q string, nprobe int) []string {
	t.Helper()
	out, err := svc.Retrieve(context.Background(), c, vector.RetrieveInput{Question: q, Stores: []string{"big"}, Mode: "vector", TopK: 10, NProbe: nprobe})
	if err != nil {
		t.Fatal(err)
	}
	return docIDs(out)
}

// TestAStoreCrossingTheThresholdSearchesAlike ingests a store past the IVF
// threshold: compaction trains its centroids and partitions its shards, and
// vector search then finds what the exact scan found before (all of it when
// it probes every cluster); hybrid search keeps working.
func TestAStoreCrossingTheThresholdSearchesAlike(t *testing.T) {
	for _, be := range storetest.TableBackends(t) {
		t.Run(be.Name, func(t *testing.T) {
			blobs := storetest.OpenLocalFS(t)
			if be.Name != "embedded" {
				blobs = storetest.OpenFakeS3(t)
			}
			tbl := be.Open(t)
			ctx := context.Background()
			acme, _ := newTenants()
			exact := newService(t, tbl, blobs, &vector.Options{MaxShards: 4, IVFThreshold: -1})
			ivf := newService(t, tbl, blobs, &vector.Options{MaxShards: 4, IVFThreshold: 300})
			if _, err := exact.CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "big"}); err != nil {
				t.Fatal(err)
			}
			const n = 320
			for i := range n {
				if _, err := exact.Ingest(ctx, acme, vector.IngestInput{Store: "big", DocID: fmt.Sprintf("doc%03d", i), Content: wordyDoc(i)}); err != nil {
					t.Fatal(err)
				}
			}
			queries := []string{"moon tide sea", "bread oven", "lava cone magma", "queen pawn gambit", "river silt flood", "wave crust"}
			before := map[string][]string{}
			for _, q := range queries {
				before[q] = vectorTop(t, exact, acme, q, 0)
			}
			if sets, _, _, _ := exact.IndexState(ctx, acme, "big"); sets != 0 {
				t.Fatalf("%d sets of centroids with the index off", sets)
			}
			if err := ivf.Compact(ctx, acme, "big"); err != nil {
				t.Fatal(err)
			}
			sets, partitioned, loose, err := ivf.IndexState(ctx, acme, "big")
			if err != nil || sets != 1 || partitioned < 9*n/10 {
				t.Fatalf("after compaction: %d sets of centroids, %d chunks partitioned, %d loose (%v); want 1 set and nearly all partitioned", sets, partitioned, loose, err)
			}
			found, total := 0, 0
			for _, q := range queries {
				if got := vectorTop(t, ivf, acme, q, 2048); strings.Join(got, " ") != strings.Join(before[q], " ") {
					t.Errorf("%q probing every cluster: %v, exactly %v", q, got, before[q])
				}
				want := map[string]bool{}
				for _, id := range before[q] {
					want[id] = true
				}
				for _, id := range vectorTop(t, ivf, acme, q, 0) {
					if want[id] {
						found++
					}
				}
				total += len(before[q])
			}
			if recall := float64(found) / float64(total); recall < 0.9 {
				t.Errorf("recall@10 with the default nprobe %.2f, want at least 0.9", recall)
			}
			for _, i := range []int{0, 77, 319} {
				want := fmt.Sprintf("doc%03d", i)
				if top := topDoc(t, ivf, acme, vector.RetrieveInput{Question: wordyDoc(i), Stores: []string{"big"}}); top != want {
					t.Errorf("hybrid search for document %d's text: top %s, want %s", i, top, want)
				}
			}
		})
	}
}

// TestConcurrentIngestsDuringAnIndexBuildLoseNothing ingests from three
// processes while a fourth compacts, training centroids once the store
// passes the threshold: every document is found, by BM25 and by vector.
func TestConcurrentIngestsDuringAnIndexBuildLoseNothing(t *testing.T) {
	for _, be := range storetest.TableBackends(t) {
		t.Run(be.Name, func(t *testing.T) {
			blobs := storetest.OpenLocalFS(t)
			if be.Name != "embedded" {
				blobs = storetest.OpenFakeS3(t)
			}
			tbl := be.Open(t)
			ctx := context.Background()
			acme, _ := newTenants()
			var procs []*vector.Service
			for range 3 {
				procs = append(procs, newService(t, tbl, blobs, &vector.Options{MaxShards: 4, IVFThreshold: 40}))
			}
			compactor := newService(t, tbl, blobs, &vector.Options{MaxShards: 1, IVFThreshold: 40})
			if _, err := procs[0].CreateStore(ctx, acme, vector.CreateStoreInput{Alias: "big"}); err != nil {
				t.Fatal(err)
			}
			const n = 90
			var wg sync.WaitGroup
			done := make(chan struct{})
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					if err := compactor.Compact(ctx, acme, "big"); err != nil {
						t.Errorf("compact: %v", err)
						return
					}
				}
			})
			var ingests sync.WaitGroup
			for p := range procs {
				ingests.Go(func() {
					for i := p; i < n; i += len(procs) {
						if _, err := procs[p].Ingest(ctx, acme, vector.IngestInput{Store: "big", DocID: fmt.Sprintf("doc%03d", i), Content: wordyDoc(i)}); err != nil {
							t.Errorf("ingest %d: %v", i, err)
						}
					}
				})
			}
			ingests.Wait()
			close(done)
			wg.Wait()
			if err := compactor.Compact(ctx, acme, "big"); err != nil {
				t.Fatal(err)
			}
			st, err := procs[0].GetStore(ctx, acme, vector.StoreInput{Alias: "big"})
			if err != nil || st.Documents != n || st.Chunks != n {
				t.Fatalf("store %+v, %v; want %d documents and chunks", st, err, n)
			}
			if sets, partitioned, _, err := compactor.IndexState(ctx, acme, "big"); err != nil || sets == 0 || partitioned == 0 {
				t.Fatalf("%d sets of centroids, %d chunks partitioned (%v); want an index", sets, partitioned, err)
			}
			for i := range n {
				want := fmt.Sprintf("doc%03d", i)
				if top := topDoc(t, procs[0], acme, vector.RetrieveInput{Question: fmt.Sprintf("zq%dword", i), Stores: []string{"big"}, Mode: "bm25"}); top != want {
					t.Errorf("bm25 zq%dword: top %q, want %s", i, top, want)
				}
				if top := vectorTop(t, procs[0], acme, wordyDoc(i), 2048); len(top) == 0 || top[0] != want {
					t.Errorf("vector search for document %d's text: %v, want %s first", i, top, want)
				}
			}
		})
	}
}
