package vector

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// DefaultCacheBytes bounds the process-wide cache of decoded shards and
// manifests when [Options.Cache] is nil: 100,000 chunks of 384 dimensions
// take about 460 MB decoded, which this keeps, with room, in a 2 GB function.
const DefaultCacheBytes = 1 << 30

// DefaultRevalidate is how long a cached shard is trusted after a Head
// showed its ETag unchanged, when [Options.Revalidate] is zero. Shards are
// immutable, so the check only guards against an object replaced behind
// Switchboard's back; checking on every query would cost a request per shard
// per query (on S3, tens of milliseconds even in parallel).
const DefaultRevalidate = 30 * time.Second

// never is the maxAge of objects read without revalidation: manifests, whose
// keys are never reused.
const never = time.Duration(math.MaxInt64)

// sharedCache is the cache every [Service] of the process uses unless told
// otherwise: a warm Lambda keeps what earlier invocations decoded.
var sharedCache = NewCache(DefaultCacheBytes)

// Cache keeps decoded objects (shards, manifests) in memory, keyed by object
// key, evicting the least recently used beyond a byte budget. An object read
// with revalidation is checked against the store's ETag (a Head) on every
// use and read again when it changed; shards are immutable, so that only
// guards against an object replaced behind Switchboard's back, and is done at
// most once per [Options.Revalidate] per object. A Cache is
// safe for concurrent use; concurrent loads of one key share one read.
type Cache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	lru     *list.List // of *cacheEntry, most recently used first
	entries map[string]*list.Element
	loading map[string]*flight
}

type cacheEntry struct {
	key     string
	etag    string
	size    int64
	value   any
	checked time.Time // when the ETag was last read from the store; guarded by Cache.mu
}

type flight struct {
	done  chan struct{}
	entry *cacheEntry
	err   error
}

// NewCache returns a cache holding up to maxBytes of decoded objects, as
// their decoders estimate them.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: maxBytes, lru: list.New(), entries: map[string]*list.Element{}, loading: map[string]*flight{}}
}

// Bytes returns the estimated size of what the cache holds.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len returns how many objects the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

func (c *Cache) lookup(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*cacheEntry)
	}
	return nil
}

func (c *Cache) add(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok {
		c.used -= el.Value.(*cacheEntry).size
		c.lru.Remove(el)
		delete(c.entries, e.key)
	}
	if e.size > c.max {
		return // too big to keep; the caller still gets it
	}
	c.entries[e.key] = c.lru.PushFront(e)
	c.used += e.size
	for c.used > c.max {
		last := c.lru.Back()
		old := last.Value.(*cacheEntry)
		c.lru.Remove(last)
		delete(c.entries, old.key)
		c.used -= old.size
	}
}

// Forget drops key from the cache.
func (c *Cache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.used -= el.Value.(*cacheEntry).size
		c.lru.Remove(el)
		delete(c.entries, key)
	}
}

// A decoder turns an object's bytes into the value to cache and estimates
// the memory that value holds.
type decoder[V any] func(data []byte) (value V, size int64, err error)

// cached returns the decoded object at key: from the cache when it holds it
// and either its ETag was checked less than maxAge ago or a Head shows the
// same ETag now; otherwise read from blobs and decoded. A maxAge of zero
// checks on every use; [never] never checks. Errors wrap [store.ErrNotFound]
// for a missing object.
func cached[V any](ctx context.Context, c *Cache, blobs store.Blobs, key string, maxAge time.Duration, decode decoder[V]) (V, error) {
	var zero V
	stale := c.lookup(key)
	if e := stale; e != nil {
		c.mu.Lock()
		fresh := maxAge == never || time.Since(e.checked) < maxAge
		c.mu.Unlock()
		if fresh {
			return e.value.(V), nil
		}
		info, err := blobs.Head(ctx, key)
		if err != nil {
			if isNotFound(err) {
				c.Forget(key)
			}
			return zero, fmt.Errorf("head %s: %w", key, err)
		}
		if info.ETag == e.etag {
			c.mu.Lock()
			e.checked = time.Now()
			c.mu.Unlock()
			return e.value.(V), nil
		}
	}
	e, err := c.load(ctx, blobs, key, stale, func(data []byte) (any, int64, error) { return decode(data) })
	if err != nil {
		return zero, err
	}
	return e.value.(V), nil
}

// load reads and decodes key once for every concurrent caller. An entry
// other than stale that another caller loaded meanwhile is taken as it is.
func (c *Cache) load(ctx context.Context, blobs store.Blobs, key string, stale *cacheEntry, decode decoder[any]) (*cacheEntry, error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok && el.Value.(*cacheEntry) != stale {
		c.mu.Unlock()
		return el.Value.(*cacheEntry), nil
	}
	if f, ok := c.loading[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.entry, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.loading[key] = f
	c.mu.Unlock()

	f.entry, f.err = read(ctx, blobs, key, decode)
	if f.err == nil {
		c.add(f.entry)
	}
	c.mu.Lock()
	delete(c.loading, key)
	c.mu.Unlock()
	close(f.done)
	return f.entry, f.err
}

func read(ctx context.Context, blobs store.Blobs, key string, decode decoder[any]) (*cacheEntry, error) {
	rc, info, err := blobs.Get(ctx, key, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	v, size, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return &cacheEntry{key: key, etag: info.ETag, size: size, value: v, checked: time.Now()}, nil
}
