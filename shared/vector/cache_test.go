package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// CountingBlobs counts the reads that reach a store.Blobs; the tests of
// package vector_test use it too.
type CountingBlobs struct {
	store.Blobs
	Gets, Heads atomic.Int64
	// ShardGets counts the Gets of shard objects.
	ShardGets atomic.Int64
}

func (b *CountingBlobs) Get(ctx context.Context, key string, opts *store.GetOptions) (io.ReadCloser, store.BlobInfo, error) {
	b.Gets.Add(1)
	if strings.HasSuffix(key, ".seg") {
		b.ShardGets.Add(1)
	}
	return b.Blobs.Get(ctx, key, opts)
}

func (b *CountingBlobs) Head(ctx context.Context, key string) (store.BlobInfo, error) {
	b.Heads.Add(1)
	return b.Blobs.Head(ctx, key)
}

func upper(data []byte) (string, int64, error) {
	if strings.HasPrefix(string(data), "corrupt") {
		return "", 0, errors.New("corrupt object")
	}
	return strings.ToUpper(string(data)), int64(len(data)), nil
}

func TestCache(t *testing.T) {
	storetest.EachBlobs(t, func(t *testing.T, b store.Blobs) {
		ctx := context.Background()
		put := func(key, body string) {
			t.Helper()
			if _, err := b.Put(ctx, key, []byte(body), nil); err != nil {
				t.Fatal(err)
			}
		}
		t.Run("a second read of an unchanged object reads no body", func(t *testing.T) {
			cb := &CountingBlobs{Blobs: b}
			c := NewCache(1 << 20)
			put("a/one", "hello")
			for range 3 {
				got, err := cached(ctx, c, cb, "a/one", 0, upper)
				if err != nil || got != "HELLO" {
					t.Fatalf("got %q, %v", got, err)
				}
			}
			if g, h := cb.Gets.Load(), cb.Heads.Load(); g != 1 || h != 2 {
				t.Errorf("gets, heads = %d, %d; want 1, 2", g, h)
			}
		})
		t.Run("a replaced object is read again", func(t *testing.T) {
			cb := &CountingBlobs{Blobs: b}
			c := NewCache(1 << 20)
			put("a/two", "first")
			if got, _ := cached(ctx, c, cb, "a/two", 0, upper); got != "FIRST" {
				t.Fatalf("got %q", got)
			}
			put("a/two", "second")
			if got, _ := cached(ctx, c, cb, "a/two", 0, upper); got != "SECOND" {
				t.Errorf("after replacing: got %q, want SECOND", got)
			}
			if g := cb.Gets.Load(); g != 2 {
				t.Errorf("gets = %d, want 2", g)
			}
		})
		t.Run("without revalidation a cached object costs no request", func(t *testing.T) {
			cb := &CountingBlobs{Blobs: b}
			c := NewCache(1 << 20)
			put("a/three", "x")
			cached(ctx, c, cb, "a/three", never, upper)
			cached(ctx, c, cb, "a/three", never, upper)
			if g, h := cb.Gets.Load(), cb.Heads.Load(); g != 1 || h != 0 {
				t.Errorf("gets, heads = %d, %d; want 1, 0", g, h)
			}
		})
		t.Run("within maxAge a cached object costs no request", func(t *testing.T) {
			cb := &CountingBlobs{Blobs: b}
			c := NewCache(1 << 20)
			put("a/seven", "x")
			for range 3 {
				cached(ctx, c, cb, "a/seven", time.Hour, upper)
			}
			if g, h := cb.Gets.Load(), cb.Heads.Load(); g != 1 || h != 0 {
				t.Errorf("gets, heads = %d, %d; want 1, 0", g, h)
			}
		})
		t.Run("a missing object is not found", func(t *testing.T) {
			_, err := cached(ctx, NewCache(1<<20), b, "a/none", 0, upper)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
		})
		t.Run("a deleted object is forgotten", func(t *testing.T) {
			c := NewCache(1 << 20)
			put("a/four", "x")
			cached(ctx, c, b, "a/four", 0, upper)
			b.Delete(ctx, "a/four")
			if _, err := cached(ctx, c, b, "a/four", 0, upper); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("err = %v, want ErrNotFound", err)
			}
			if c.Len() != 0 {
				t.Errorf("cache holds %d entries, want 0", c.Len())
			}
		})
		t.Run("a corrupt object is an error, not cached", func(t *testing.T) {
			c := NewCache(1 << 20)
			put("a/five", "corrupt!")
			if _, err := cached(ctx, c, b, "a/five", 0, upper); err == nil || !strings.Contains(err.Error(), "corrupt object") {
				t.Errorf("err = %v, want the decoder's", err)
			}
			if c.Len() != 0 {
				t.Errorf("cache holds %d entries, want 0", c.Len())
			}
		})
		t.Run("the least recently used object goes first beyond the budget", func(t *testing.T) {
			c := NewCache(10)
			put("l/a", "aaaa")
			put("l/b", "bbbb")
			put("l/c", "cccc")
			cached(ctx, c, b, "l/a", never, upper)
			cached(ctx, c, b, "l/b", never, upper)
			cached(ctx, c, b, "l/a", never, upper) // a is now the most recent
			cached(ctx, c, b, "l/c", never, upper) // 12 bytes: b goes
			if c.lookup("l/b") != nil || c.lookup("l/a") == nil || c.lookup("l/c") == nil {
				t.Errorf("want a and c kept, b evicted")
			}
			if c.Bytes() != 8 {
				t.Errorf("Bytes = %d, want 8", c.Bytes())
			}
		})
		t.Run("concurrent loads share one read", func(t *testing.T) {
			cb := &CountingBlobs{Blobs: b}
			c := NewCache(1 << 20)
			put("a/six", "shared")
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if got, err := cached(ctx, c, cb, "a/six", never, upper); err != nil || got != "SHARED" {
						t.Errorf("got %q, %v", got, err)
					}
				})
			}
			wg.Wait()
			if g := cb.Gets.Load(); g != 1 {
				t.Errorf("gets = %d", g)
			}
		})
	})
}

// TestAGroupFitsTheCache checks what a worker relies on to keep its group
// warm: a default group of shards, decoded, fits the default cache.
func TestAGroupFitsTheCache(t *testing.T) {
	if got := segmentBytes(DefaultGroupBytes); got > DefaultCacheBytes {
		t.Errorf("a group of %d bytes decodes to about %d, more than the cache's %d", DefaultGroupBytes, got, DefaultCacheBytes)
	}
}

func TestShardKeysMatchesShardsNotManifestsOrUploads(t *testing.T) {
	c := tenant.Caller{Tenant: "acme"}
	for key, want := range map[string]bool{
		shardKey(c, "notes", randomID(8)):   true,
		manifestKey(c, "notes", 7):          false,
		"tenants/acme/documents/notes/a.md": false,
	} {
		// IAM's * also matches "/", path.Match's does not: a match here is one there too.
		if got, _ := path.Match(ShardKeys, key); got != want {
			t.Errorf("ShardKeys matches %s: %v, want %v", key, got, want)
		}
	}
}

// A worker that fails to load one shard of its group stops loading the
// others: they would only be thrown away.
func TestAWorkerStopsLoadingAfterTheFirstShardItCannotRead(t *testing.T) {
	blobs := &CountingBlobs{Blobs: storetest.OpenLocalFS(t)}
	s := New(storetest.OpenEmbedded(t), blobs, nil, &Options{Cache: NewCache(1 << 20)})
	var g ShardGroup
	for i := range 10 * loadParallelism {
		g.Shards = append(g.Shards, GroupShard{Store: "kb", Key: fmt.Sprintf("tenants/acme/vector/kb/shards/%016x.seg", i), Chunks: 1})
	}
	if _, err := s.LocalSearcher().Stats(context.Background(), tenant.Caller{Tenant: "acme"}, g, []string{"x"}); err == nil {
		t.Fatal("a group of missing shards loaded")
	}
	if reads := blobs.Gets.Load() + blobs.Heads.Load(); reads > loadParallelism+1 {
		t.Errorf("%d reads for %d missing shards: loading went on after the first failed", reads, len(g.Shards))
	}
}
