// Package vector keeps vector stores: documents cut into overlapping
// passages (chunks), embedded, and written to S3 as immutable shards that a
// warm function keeps decoded in memory; and retrieval over them by BM25,
// exact vector search or both fused (the default), across one store or
// several picked to fit the question. It is the vector-search family of the
// Oracle AI Optimizer seed, serverless.
//
// A store's record in the table points at its current manifest, the list of
// live shards; every change (an ingest, a delete, a compaction) writes a new
// manifest and moves the pointer with a write conditional on the record's
// version, so concurrent writers never lose each other's shards:
//
//	t#<tenant>#vs           <alias>        settings, embedder, counts, ver, manifest key, term profile
//	t#<tenant>#vs#<alias>   doc#<doc id>   content hash, chunks, shard, format, title, source, metadata
//	tenants/<tenant>/vector/<alias>/shards/<id>.seg              immutable shards (retrieval.Segment)
//	tenants/<tenant>/vector/<alias>/manifests/<ver>-<rand>.json  manifests
//
//	svc := vector.New(table, blobs, embedder, nil)
//	_, _ = svc.CreateStore(ctx, caller, vector.CreateStoreInput{Alias: "docs", Description: "product manuals"})
//	_, _ = svc.Ingest(ctx, caller, vector.IngestInput{Store: "docs", FileName: "guide.md", Content: md})
//	res, _ := svc.Retrieve(ctx, caller, vector.RetrieveInput{Question: "how do I reset it?"})
//	// res.Documents: best chunks first, each naming its store
package vector

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// Options configures [New]. A nil *Options uses the defaults.
type Options struct {
	// Cache keeps decoded shards and manifests. If nil, defaults to one cache
	// shared by the whole process, [DefaultCacheBytes] large.
	Cache *Cache
	// Now returns the current time. If nil, defaults to time.Now.
	Now func() time.Time
	// Logger receives warnings. If nil, logs are discarded.
	Logger *slog.Logger
}

// Service implements the vector store tools on a [store.Table] and a
// [store.Blobs]. It is safe for concurrent use.
type Service struct {
	table store.Table
	blobs store.Blobs
	emb   provider.Embedder
	cache *Cache
	now   func() time.Time
	log   *slog.Logger
}

// New returns a Service keeping records in table and shards in blobs, and
// embedding with emb.
func New(table store.Table, blobs store.Blobs, emb provider.Embedder, opts *Options) *Service {
	s := &Service{table: table, blobs: blobs, emb: emb, cache: sharedCache, now: time.Now, log: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.Cache != nil {
			s.cache = opts.Cache
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.Logger != nil {
			s.log = opts.Logger
		}
	}
	s.log = s.log.With("component", "vector")
	return s
}

// embedderName names the configured embedder.
func (s *Service) embedderName() (providerName, model string, dims int) {
	return s.emb.Provider(), s.emb.Model(), s.emb.Dims()
}

func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// hash64Hex is FNV-1a 64 in 16 hex digits.
func hash64Hex(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}

// defaultChunking is text.DefaultPassageOptions, until package text lands here.
func defaultChunking() struct{ Size, Overlap int } { return struct{ Size, Overlap int }{1500, 200} }
