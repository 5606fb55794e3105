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
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
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
	// Searcher runs the workers of a search over several groups of shards
	// (a search of one group runs in process). If nil, defaults to the
	// service's [LocalSearcher].
	Searcher Searcher
	// GroupBytes bounds the encoded shard bytes one worker searches. If zero,
	// defaults to [DefaultGroupBytes].
	GroupBytes int64
	// Revalidate is how long a cached shard is trusted after a Head showed
	// its ETag unchanged. If zero, defaults to [DefaultRevalidate]; a
	// negative duration checks on every use.
	Revalidate time.Duration
	// MaxShards is how many shards a store may have before an ingest compacts
	// it. If zero, defaults to [MaxShards].
	MaxShards int
	// IVFThreshold is the live chunks past which compaction gives a store
	// an inverted-file index. If zero, defaults to [DefaultIVFThreshold]; a
	// negative value turns the index off (a store that has one keeps it
	// until compaction rewrites its shards).
	IVFThreshold int64
	// NProbe is how many clusters of a store's index a vector search scans
	// when the request names no number, within 1..[retrieval.MaxClusters]. If
	// zero, defaults to [retrieval.DefaultNProbe] of the store's k.
	NProbe int
	// Progress, if set, receives an ingest's progress (chunks embedded out
	// of the total) while it runs; the tool functions pass
	// lambdafn.ReportProgress, which relays it to the client.
	Progress func(ctx context.Context, done, total float64, message string)
	// GraphWeight weighs the entity graph's ranking against hybrid search's
	// (1) when a retrieval fuses them (graph_traversal_depth). If zero,
	// defaults to [DefaultGraphWeight].
	GraphWeight float64
	// Quotas bounds what each tenant stores, per store and in all; every
	// ingest and delete charges its change in its manifest commit. If nil,
	// defaults to [quota.DefaultLimits] kept in the service's table.
	Quotas *quota.Quotas
	// MultiVector embeds the token vectors of late interaction
	// ([Service.LateInteraction]). If nil, late interaction is not configured.
	MultiVector multivector.Embedder
	// LateBytes bounds the token vectors late interaction holds in memory,
	// over all stores. If zero, defaults to [DefaultLateBytes].
	LateBytes int64
	// Generator, if a hosted model (the offline generator counts as none),
	// extracts the entity graphs of ingested documents (graph.Prompted with
	// the tenant's prompt.GraphExtract, each chunk it fails extracted offline
	// and counted), writes community reports (prompt.GraphReport), and, if it
	// can hold a conversation (provider.ToolCallerOf), chooses the stores a
	// search naming none covers, asked with the optimizer_vs-table-selection
	// prompt (see [StoreSelection]). If nil or offline, all of these are
	// offline and store selection is the code-driven score alone.
	Generator provider.Generator
	// Prompts reads the tenants' prompts for Generator. If nil, defaults to
	// prompt.NewStore over the service's table.
	Prompts prompt.Lookup
	// TermsOnly matches questions to graph entities by their terms alone.
	// Otherwise, when the embedder is a hosted one, ingestion embeds the
	// names of each document's entities too, so that a question matches the
	// entities it means as well as those it names (the offline hashing
	// embedder's vectors of names add nothing their terms do not).
	TermsOnly bool
}

// Service implements the vector store tools on a [store.Table] and a
// [store.Blobs]. It is safe for concurrent use.
type Service struct {
	table    store.Table
	blobs    store.Blobs
	emb      provider.Embedder
	cache    *Cache
	now      func() time.Time
	log      *slog.Logger
	progress func(ctx context.Context, done, total float64, message string)
	quotas   *quota.Quotas

	searcher   Searcher
	groupBytes int64
	maxShards  int
	revalidate time.Duration

	ivfThreshold int64
	nprobe       int
	graphWeight  float64
	compacting   sync.Map // tenant and alias of the stores this process is compacting

	multi     multivector.Embedder
	lateBytes int64
	late      lateIndexes

	gen       provider.Generator
	chooser   provider.ToolCaller // nil: store selection by score alone
	prompts   prompt.Lookup
	termsOnly bool
}

// New returns a Service keeping records in table and shards in blobs, and
// embedding with emb; a nil emb means the offline hashing embedder of
// [offline.DefaultDims] dimensions.
func New(table store.Table, blobs store.Blobs, emb provider.Embedder, opts *Options) *Service {
	if emb == nil {
		emb = offline.NewEmbedder(offline.DefaultDims)
	}
	s := &Service{table: table, blobs: blobs, emb: emb, cache: sharedCache, now: time.Now, log: slog.New(slog.DiscardHandler),
		progress: func(context.Context, float64, float64, string) {}, groupBytes: DefaultGroupBytes, maxShards: MaxShards,
		revalidate: DefaultRevalidate, ivfThreshold: DefaultIVFThreshold, graphWeight: DefaultGraphWeight, lateBytes: DefaultLateBytes,
		late: lateIndexes{byStore: map[string]*lateIndex{}}}
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
		if opts.Progress != nil {
			s.progress = opts.Progress
		}
		s.searcher = opts.Searcher
		s.quotas = opts.Quotas
		s.multi = opts.MultiVector
		s.gen, s.termsOnly = opts.Generator, opts.TermsOnly
		if _, isOffline := s.gen.(offline.Generator); isOffline {
			s.gen = nil
		}
		if s.gen != nil {
			s.chooser, _ = provider.ToolCallerOf(s.gen)
		}
		if opts.Prompts != nil {
			s.prompts = opts.Prompts
		}
		if opts.LateBytes > 0 {
			s.lateBytes = opts.LateBytes
		}
		if opts.GroupBytes > 0 {
			s.groupBytes = opts.GroupBytes
		}
		if opts.MaxShards > 0 {
			s.maxShards = opts.MaxShards
		}
		if opts.IVFThreshold != 0 {
			s.ivfThreshold = opts.IVFThreshold
		}
		s.nprobe = min(max(opts.NProbe, 0), retrieval.MaxClusters)
		if opts.GraphWeight > 0 {
			s.graphWeight = opts.GraphWeight
		}
		switch {
		case opts.Revalidate < 0:
			s.revalidate = 0
		case opts.Revalidate > 0:
			s.revalidate = opts.Revalidate
		}
	}
	if s.quotas == nil {
		s.quotas = quota.New(table, nil)
	}
	if s.prompts == nil {
		s.prompts = prompt.NewStore(table, nil)
	}
	if s.searcher == nil {
		s.searcher = s.LocalSearcher()
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

// ErrNoText is the cause of the invalid_argument error of an ingestion whose
// document holds no text: bulk ingestion skips and counts such documents
// rather than stopping.
var ErrNoText = errors.New("holds no text to index")

// Limits of the retriever's and the ingestion tool's arguments.
const (
	// MaxQuestionChars bounds a question, as seed 002 bounds a query.
	MaxQuestionChars = 8000
	// DefaultTopK and MaxTopK bound how many documents a search returns.
	DefaultTopK = 5
	MaxTopK     = 50
	// MaxSearchStores, MaxFilterKeys and MaxFilterValues are query's
	// ([query.MaxSearchStores]).
	MaxSearchStores = query.MaxSearchStores
	MaxFilterKeys   = query.MaxFilterKeys
	MaxFilterValues = query.MaxFilterValues
	// MaxInlineBytes bounds a document passed inline (content or
	// content_base64, decoded); the tool's request limit (3 MiB) fits both
	// at once, as the schema allows. Larger documents go through S3 (the key
	// argument, or an upload under documents/<store>/).
	MaxInlineBytes = 1 << 20
)

// Modes are the search modes; hybrid is the default.
var Modes = []string{"bm25", "vector", "hybrid"}

// Formats are the document formats the format argument names.
var Formats = []string{"txt", "md", "pdf", "docx"}
