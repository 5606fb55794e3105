package vector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/graph"
	"github.com/switchboard-dev/switchboard/shared/prompt"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// A store's entity graph (issue 15) lives beside its chunks and follows
// their lifecycle. Each chunk shard has a graph pack (graph.MarshalPack): the
// graph shards of the document versions it holds, each under the id of its
// version's first chunk, built by the ingest that writes the chunk shard
// (by the configured generator, graph.Prompted, or offline, graph.Heuristic)
// and named by the shard's manifest entry. Compaction writes the merged
// shard's pack from the packs of the shards it merges, keeping the versions
// whose chunks it keeps (never extracting again; shards written before
// graphs are extracted then, see backfill.go). A store's graph is the union of the live versions' shards
// (graph.Build): a version on the manifest's dead list (replaced or deleted)
// is left out, so its entities and relations leave with its chunks, and an
// unchanged document is skipped before its pack would be built. The packs
// change only in manifest commits, so concurrent ingests lose nothing.
//
//	tenants/<tenant>/vector/<alias>/graph/<shard id>[-<rand>].sbgp  the pack of a chunk shard (rand: backfilled)
//	tenants/<tenant>/vector/<alias>/graph/reports-<ver>.json       community reports of manifest version ver
//
// A process builds a store's graph once per manifest version and keeps it
// in the shard cache; community reports are built on demand by global search
// ([Service.CommunityReports]).

func graphKey(c tenant.Caller, alias, shardID string) string {
	return storePrefix(c, alias) + "graph/" + shardID + ".sbgp"
}

func reportsPrefix(c tenant.Caller, alias string) string {
	return storePrefix(c, alias) + "graph/reports-"
}

func reportsKey(c tenant.Caller, alias string, version int64) string {
	return fmt.Sprintf("%s%012d.json", reportsPrefix(c, alias), version)
}

// writeGraph extracts the entity graph of one document version's chunks and
// writes it as the pack of the chunk shard shardID, returning its key and
// size and how many chunks the generator's extraction fell back on.
func (s *Service) writeGraph(ctx context.Context, c tenant.Caller, alias, shardID, docID string, chunks []retrieval.Chunk) (string, int64, int, error) {
	ex, err := s.extractor(ctx, c)
	if err != nil {
		return "", 0, 0, err
	}
	sh, err := s.graphShard(ctx, docID, chunks, ex)
	if err != nil {
		return "", 0, 0, err
	}
	key, size, err := s.writePack(ctx, c, alias, shardID, []graph.PackEntry{{Version: chunks[0].ID, Shard: sh}})
	return key, size, sh.Fallbacks, err
}

// extractor is what extracts the entity graphs of caller c's ingests: the
// generator when one is configured (with the tenant's extraction prompt,
// each chunk it fails extracted offline), else the offline extractor.
func (s *Service) extractor(ctx context.Context, c tenant.Caller) (graph.Extractor, error) {
	if s.gen == nil {
		return graph.Heuristic{}, nil
	}
	system, err := s.prompts.Text(ctx, c.Tenant, prompt.GraphExtract)
	if err != nil {
		return nil, fault.Unavailable(err, "reading the entity extraction prompt failed; retry")
	}
	return graph.Prompted{Generator: s.gen, System: system, Fallback: graph.Heuristic{}}, nil
}

// graphShard extracts the entity graph of one document version's chunks
// with ex, its entities' names embedded when the embedder is a hosted one
// (see [Options.TermsOnly]).
func (s *Service) graphShard(ctx context.Context, docID string, chunks []retrieval.Chunk, ex graph.Extractor) (*graph.Shard, error) {
	doc := graph.Document{ID: docID, Chunks: make([]graph.Chunk, len(chunks))}
	for i, ch := range chunks {
		doc.Chunks[i] = graph.Chunk{ID: ch.ID, Text: ch.Text}
	}
	var emb provider.Embedder
	if !s.termsOnly && s.emb.Provider() != offline.Name {
		emb = s.emb
	}
	sh, err := graph.NewShard(ctx, doc, ex, emb, graph.Limits{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("extracting the entity graph of %s: %w", docID, err)
	}
	return sh, nil
}

func (s *Service) writePack(ctx context.Context, c tenant.Caller, alias, shardID string, entries []graph.PackEntry) (string, int64, error) {
	data, err := graph.MarshalPack(entries)
	if err != nil {
		return "", 0, fmt.Errorf("encoding a graph pack: %w", err)
	}
	key := graphKey(c, alias, shardID)
	info, err := s.blobs.Put(ctx, key, data, &store.PutOptions{IfAbsent: true})
	if err != nil {
		return "", 0, fault.Unavailable(err, "writing the entity graph of vector store %q failed; retry", alias)
	}
	s.cache.add(&cacheEntry{key: key, etag: info.ETag, size: packBytes(len(data)), value: entries, checked: time.Now()})
	return key, info.Size, nil
}

// packs reads the graph packs of shards (nil for a shard written before
// graphs). Errors wrap [store.ErrNotFound] when a pack is gone.
func (s *Service) packs(ctx context.Context, shards []shardRef) ([][]graph.PackEntry, error) {
	out := make([][]graph.PackEntry, len(shards))
	for i, sh := range shards {
		if sh.Graph == "" {
			continue
		}
		var err error
		if out[i], err = s.pack(ctx, sh.Graph); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mergeGraphs writes the pack of a merged shard: the entries of the merged
// shards' packs whose versions the merge kept (kept holds the merged
// shard's chunk ids).
func (s *Service) mergeGraphs(ctx context.Context, c tenant.Caller, alias, shardID string, packs [][]graph.PackEntry, kept map[string]bool) (string, int64, error) {
	var entries []graph.PackEntry
	for _, pack := range packs {
		for _, e := range pack {
			if kept[e.Version] {
				entries = append(entries, e)
			}
		}
	}
	if len(entries) == 0 {
		return "", 0, nil
	}
	return s.writePack(ctx, c, alias, shardID, entries)
}

// packBytes estimates the memory a decoded pack of n bytes holds.
func packBytes(n int) int64 { return int64(n) * 3 }

func (s *Service) pack(ctx context.Context, key string) ([]graph.PackEntry, error) {
	entries, err := cached(ctx, s.cache, s.blobs, key, never, func(data []byte) ([]graph.PackEntry, int64, error) {
		e, err := graph.DecodePack(data)
		return e, packBytes(len(data)), err
	})
	switch {
	case isNotFound(err):
		return nil, err
	case errors.Is(err, graph.ErrCorrupt):
		return nil, fault.Unavailable(err, "entity graph %s is corrupt: %v; re-ingest its documents, or delete and rebuild the store", key, err)
	case err != nil:
		return nil, fault.Unavailable(err, "reading entity graph %s failed; retry", key)
	}
	return entries, nil
}

// storeGraph is a store's graph at one manifest version, and where its
// chunks are.
type storeGraph struct {
	g       *graph.Graph
	shardOf map[string]int // chunk id -> index into shards
	shards  []shardRef
	// fallbacks sums the live documents' [graph.Shard.Fallbacks].
	fallbacks int
}

// graphs deduplicates concurrent builds of one store graph.
var graphs singleflight.Group

// storeGraph returns the graph of store r at manifest m, built once per
// manifest version and process (it stays in the cache while it is used);
// the graphs of shards written before graphs are extracted in memory, at
// most [MaxBackfillChunks] chunks of them.
func (s *Service) storeGraph(ctx context.Context, r storeRec, m *manifest) (*storeGraph, error) {
	key := r.Manifest + "#graph"
	if e := s.cache.lookup(key); e != nil {
		return e.value.(*storeGraph), nil
	}
	v, err, _ := graphs.Do(key, func() (any, error) {
		if e := s.cache.lookup(key); e != nil {
			return e.value.(*storeGraph), nil
		}
		sg := &storeGraph{shardOf: map[string]int{}, shards: m.Shards}
		byDoc := map[string]*graph.Shard{}
		var order []string
		backfill := 0
		for i, sh := range m.Shards {
			var pack []graph.PackEntry
			var err error
			switch {
			case sh.Graph != "":
				pack, err = s.pack(ctx, sh.Graph)
			case backfill < MaxBackfillChunks:
				// Written before graphs: extracted here, kept with the graph (see backfill.go).
				backfill += sh.Chunks
				pack, err = s.extractPack(ctx, sh, m)
			}
			if err != nil {
				return nil, err
			}
			for _, e := range pack {
				if m.dead[e.Version] {
					continue
				}
				if _, ok := byDoc[e.Shard.DocID]; !ok {
					order = append(order, e.Shard.DocID)
				}
				byDoc[e.Shard.DocID] = e.Shard // a later shard holds a later version
				for _, id := range e.Shard.Chunks {
					sg.shardOf[id] = i
				}
			}
		}
		shards := make([]*graph.Shard, 0, len(order))
		for _, d := range order {
			shards = append(shards, byDoc[d])
			sg.fallbacks += byDoc[d].Fallbacks
		}
		g, err := graph.Build(shards)
		if errors.Is(err, graph.ErrTooLarge) {
			return nil, fault.Unavailable(err, "the entity graph of vector store %q is too large to search: %v", r.Alias, err)
		}
		if err != nil {
			return nil, fmt.Errorf("building the entity graph of %q: %w", r.Alias, err)
		}
		sg.g = g
		size := int64(g.Entities())*160 + int64(g.Edges())*48 + int64(len(sg.shardOf))*64
		s.cache.add(&cacheEntry{key: key, size: size, value: sg, checked: time.Now()})
		return sg, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*storeGraph), nil
}

// chunkTexts returns the chunks of sg named by ids, by id, read from their
// shards (one pass over each shard holding some).
func (s *Service) chunkTexts(ctx context.Context, alias string, sg *storeGraph, ids []string) (map[string]ChunkContent, error) {
	byShard := map[int]map[string]bool{}
	for _, id := range ids {
		if i, ok := sg.shardOf[id]; ok {
			if byShard[i] == nil {
				byShard[i] = map[string]bool{}
			}
			byShard[i][id] = true
		}
	}
	out := make(map[string]ChunkContent, len(ids))
	for i, want := range byShard {
		seg, err := s.segment(ctx, sg.shards[i])
		if err != nil {
			return nil, err
		}
		for j := range seg.Len() {
			if want[seg.ChunkID(j)] {
				ch := seg.Chunk(j)
				out[ch.ID] = ChunkContent{Store: alias, Text: ch.Text, Metadata: ch.Metadata}
			}
		}
	}
	return out, nil
}

// GraphSearch is [query.GraphSearch].
type GraphSearch = query.GraphSearch

// graphPool is how deep the hybrid and graph rankings fused go.
const graphPool = 100

// DefaultGraphWeight is the weight of the graph's ranking in the fusion,
// hybrid's being 1 (see [Options.GraphWeight]).
const DefaultGraphWeight = 1.0

// fuseGraph ranks the chunks of recs' graphs for question by Personalized
// PageRank, depth relations from the entities the question names (or, for
// a graph whose entity names emb embedded, means), and fuses
// that ranking with hybrid's by reciprocal rank ([graph.Fuse]); each
// returned chunk's Score is its rrf_score. A chunk only the graph found is
// read from its shard, and must pass filter.
func (s *Service) fuseGraph(ctx context.Context, recs []storeRec, emb provider.Embedder, question string, depth int, hybrid []ScoredChunk, filter map[string][]string, perDoc bool, k int) ([]ScoredChunk, GraphSearch, error) {
	info := GraphSearch{Depth: depth, EntitiesMatched: []string{}}
	type ranked struct {
		hit   retrieval.Hit
		store int
	}
	var walked []ranked
	sgs := make([]*storeGraph, len(recs))
	for i, r := range recs {
		m, err := s.loadManifest(ctx, r)
		if err != nil {
			return nil, info, err
		}
		sg, err := s.storeGraph(ctx, r, m)
		if err != nil {
			return nil, info, err
		}
		sgs[i] = sg
		local, err := sg.g.Local(ctx, question, graph.LocalOptions{Depth: depth, K: graphPool, Embedder: emb})
		if err != nil {
			return nil, info, err
		}
		for _, seed := range local.Seeds {
			if !slices.Contains(info.EntitiesMatched, seed.Name) {
				info.EntitiesMatched = append(info.EntitiesMatched, seed.Name)
			}
		}
		info.EntitiesReached += local.Entities
		info.ExtractionFallbacks += sg.fallbacks
		for _, h := range local.Hits {
			walked = append(walked, ranked{h, i})
		}
	}
	info.GraphChunks = len(walked)
	slices.SortStableFunc(walked, func(a, b ranked) int { return cmp.Compare(b.hit.Score, a.hit.Score) })

	// Both rankings identify a chunk by its store and id (by store and
	// document when ranking documents).
	id := func(store, chunk, doc string) string {
		if perDoc {
			return store + "\x00" + doc
		}
		return store + "\x00" + chunk
	}
	byID := map[string]ScoredChunk{}
	hyb := make([]retrieval.Hit, 0, len(hybrid))
	for _, h := range hybrid {
		key := id(h.Store, h.ChunkID, h.DocID)
		byID[key] = h
		hyb = append(hyb, retrieval.Hit{ChunkID: key, DocID: h.DocID})
	}
	gr := make([]retrieval.Hit, 0, len(walked))
	where := map[string]ranked{}
	for _, w := range walked {
		key := id(recs[w.store].Alias, w.hit.ChunkID, w.hit.DocID)
		if _, dup := where[key]; dup {
			continue // a document's lesser chunk, when ranking documents
		}
		where[key] = w
		gr = append(gr, retrieval.Hit{ChunkID: key, DocID: w.hit.DocID})
	}
	fused := graph.Fuse(len(hyb)+len(gr), s.graphWeight, hyb, gr)

	// Read the graph-only chunks among the best, store by store, until k
	// pass the filter (or the ranking ends).
	var out []ScoredChunk
	for start := 0; start < len(fused) && len(out) < k; {
		end := min(len(fused), start+k-len(out))
		want := map[int][]string{}
		for _, h := range fused[start:end] {
			if _, ok := byID[h.ChunkID]; !ok {
				w := where[h.ChunkID]
				want[w.store] = append(want[w.store], w.hit.ChunkID)
			}
		}
		read := map[string]ChunkContent{}
		for st, ids := range want {
			got, err := s.chunkTexts(ctx, recs[st].Alias, sgs[st], ids)
			if err != nil {
				return nil, info, err
			}
			for cid, cc := range got {
				read[recs[st].Alias+"\x00"+cid] = cc
			}
		}
		for _, h := range fused[start:end] {
			sc, ok := byID[h.ChunkID]
			if !ok {
				w := where[h.ChunkID]
				cc, found := read[recs[w.store].Alias+"\x00"+w.hit.ChunkID]
				if !found || !passes(cc.Metadata, filter) {
					continue
				}
				// Segment -1 marks a chunk only the graph found.
				sc = ScoredChunk{Hit: retrieval.Hit{ChunkID: w.hit.ChunkID, DocID: w.hit.DocID, Segment: -1, Index: -1}, ChunkContent: cc}
			}
			sc.Score = h.Score
			out = append(out, sc)
		}
		start = end
	}
	return out, info, nil
}

// passes reports whether metadata md passes a retrieval filter.
func passes(md map[string]string, filter map[string][]string) bool {
	for k, accepted := range filter {
		v, ok := md[k]
		if !ok || !slices.Contains(accepted, v) {
			return false
		}
	}
	return true
}

// ReportsInput is [query.ReportsInput].
type ReportsInput = query.ReportsInput

// StoreReports is [query.StoreReports].
type StoreReports = query.StoreReports

// ReportsStaleness is how far community reports may lag their store before
// global search builds them again: [MinReportsStaleness] manifest versions,
// or one per ReportsStaleness of its documents when that is more (a tenth:
// about a tenth of the documents ingested or deleted since, as each ingest
// and delete is one version, compaction steps a few more).
const (
	ReportsStaleness    = 10
	MinReportsStaleness = 8
)

// reportsSeed seeds community detection, so a store's communities are the
// same in every process.
const reportsSeed = 1

// CommunityReports returns the community reports of the stores a global
// search covers: the newest stored ones, unless they lag the store by more
// than the staleness bound above, in which case they are built from the
// store's current graph (communities at every level, reports over their
// central chunks: written by the configured generator with the tenant's
// prompt.GraphReport, else extractive) and stored under
// the current manifest version, older ones deleted.
func (s *Service) CommunityReports(ctx context.Context, c tenant.Caller, in ReportsInput) ([]StoreReports, error) {
	if _, err := validateQuery(RetrieveInput{Question: in.Question, Stores: in.Stores}); err != nil {
		return nil, err
	}
	emb, err := provider.EmbedderFor(s.emb, in.EmbeddingModel)
	if err != nil {
		return nil, err
	}
	recs, _, err := s.searchStores(ctx, c, RetrieveInput{Question: in.Question, Stores: in.Stores}, emb)
	if err != nil {
		return nil, err
	}
	out := make([]StoreReports, 0, len(recs))
	for _, r := range recs {
		sr, err := s.storeReports(ctx, c, r)
		if err != nil {
			return nil, err
		}
		out = append(out, sr)
	}
	return out, nil
}

func (s *Service) storeReports(ctx context.Context, c tenant.Caller, r storeRec) (StoreReports, error) {
	prefix := reportsPrefix(c, r.Alias)
	page, err := s.blobs.List(ctx, prefix, nil)
	if err != nil {
		return StoreReports{}, fault.Unavailable(err, "listing the community reports of vector store %q failed; retry", r.Alias)
	}
	var newest string
	var version int64 = -1
	for _, o := range page.Blobs {
		if v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), ".json"), 10, 64); err == nil && v > version {
			newest, version = o.Key, v
		}
	}
	bound := max(MinReportsStaleness, r.Documents/ReportsStaleness)
	if newest != "" && r.Version-version <= bound {
		reports, err := cached(ctx, s.cache, s.blobs, newest, never, func(data []byte) ([]graph.Report, int64, error) {
			rs, err := graph.DecodeReports(data)
			return rs, int64(2 * len(data)), err
		})
		if err == nil {
			return StoreReports{Store: r.Alias, Reports: reports, Version: version, Behind: r.Version - version}, nil
		}
		if !isNotFound(err) {
			return StoreReports{}, fault.Unavailable(err, "reading the community reports of vector store %q failed; retry", r.Alias)
		}
	}
	r, m, err := s.graphManifest(ctx, c, r)
	if err != nil {
		return StoreReports{}, fault.Unavailable(err, "reading the manifest of vector store %q failed; retry", r.Alias)
	}
	sg, err := s.storeGraph(ctx, r, m)
	if err != nil {
		return StoreReports{}, err
	}
	texts := func(ctx context.Context, ids []string) (map[string]string, error) {
		got, err := s.chunkTexts(ctx, r.Alias, sg, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[string]string, len(got))
		for id, cc := range got {
			out[id] = cc.Text
		}
		return out, nil
	}
	var system string
	if s.gen != nil {
		if system, err = s.prompts.Text(ctx, c.Tenant, prompt.GraphReport); err != nil {
			return StoreReports{}, fault.Unavailable(err, "reading the community report prompt failed; retry")
		}
	}
	reports, err := sg.g.Reports(ctx, sg.g.Communities(reportsSeed), texts, s.gen, system)
	if err != nil {
		return StoreReports{}, err
	}
	data, err := graph.MarshalReports(reports)
	if err != nil {
		return StoreReports{}, err
	}
	key := reportsKey(c, r.Alias, r.Version)
	if _, err := s.blobs.Put(ctx, key, data, &store.PutOptions{ContentType: "application/json"}); err != nil {
		s.log.WarnContext(ctx, "storing community reports failed", "store", r.Alias, "error", err)
	} else {
		var old []string
		for _, o := range page.Blobs {
			if o.Key != key {
				old = append(old, o.Key)
			}
		}
		s.removeObjects(ctx, old...)
	}
	return StoreReports{Store: r.Alias, Reports: reports, Version: r.Version, Built: true}, nil
}
