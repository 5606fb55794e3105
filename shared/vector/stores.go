package vector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
	"github.com/switchboard-dev/switchboard/shared/vector/query"
)

// AliasPattern is [query.AliasPattern].
const AliasPattern = query.AliasPattern

// Limits of store settings.
const (
	MaxDescriptionChars = 2000
	MinChunkSize        = 100
	MaxChunkSize        = 8000
)

// ValidateAlias is [query.ValidateAlias].
func ValidateAlias(field, alias string) error { return query.ValidateAlias(field, alias) }

// ValidateFilter is [query.ValidateFilter].
func ValidateFilter(field string, f map[string][]string) error { return query.ValidateFilter(field, f) }

// Table keys. A tenant's stores share one partition, so listing them is one
// query; each store's documents have a partition of their own:
//
//	t#<tenant>#vs           <alias>        the store record
//	t#<tenant>#vs#<alias>   doc#<doc id>   a document record
func storesPK(c tenant.Caller) string             { return tenant.Key(c.Tenant) + "vs" }
func docsPK(c tenant.Caller, alias string) string { return tenant.Key(c.Tenant) + "vs#" + alias }

const docPrefix = "doc#"

// Object keys: everything of a store lies under one prefix, so deleting it is
// one listing.
//
//	tenants/<tenant>/vector/<alias>/shards/<id>.seg
//	tenants/<tenant>/vector/<alias>/manifests/<version>-<random>.json
func storePrefix(c tenant.Caller, alias string) string {
	return tenant.BlobPrefix(c.Tenant) + "vector/" + alias + "/"
}

func shardKey(c tenant.Caller, alias, id string) string {
	return storePrefix(c, alias) + "shards/" + id + ".seg"
}

// ShardKeys matches the key of every shard object, in the wildcard syntax of
// IAM resources: what a function that only searches shards may read.
const ShardKeys = "tenants/*/vector/*/shards/*.seg"

func manifestKey(c tenant.Caller, alias string, version int64) string {
	return fmt.Sprintf("%smanifests/%012d-%s.json", storePrefix(c, alias), version, randomID(4))
}

// storeRec is a store's record: its settings, its counts, and the pointer to
// its current manifest, which every change moves with a write conditional on
// Version (optimistic concurrency).
type storeRec struct {
	Alias        string
	Description  string
	Provider     string
	Model        string
	Dims         int
	ChunkSize    int
	ChunkOverlap int
	Documents    int64
	Chunks       int64
	Shards       int
	Version      int64
	Manifest     string // object key of the current manifest; empty before the first document
	Profile      map[string]float64
	Deleting     bool
	Created      time.Time
	Updated      time.Time
}

func (r storeRec) item(c tenant.Caller) store.Item {
	profile, _ := json.Marshal(r.Profile) // a map of strings to floats always encodes
	return store.Item{PK: storesPK(c), SK: r.Alias, Attrs: store.Attrs{
		"description": r.Description, "provider": r.Provider, "model": r.Model, "dims": r.Dims,
		"chunk_size": r.ChunkSize, "chunk_overlap": r.ChunkOverlap,
		"docs": r.Documents, "chunks": r.Chunks, "shards": r.Shards, "ver": r.Version, "manifest": r.Manifest,
		"profile": string(profile), "deleting": r.Deleting,
		"created_at": r.Created.UTC().Format(time.RFC3339Nano), "updated_at": r.Updated.UTC().Format(time.RFC3339Nano),
	}}
}

func parseStoreRec(it store.Item) storeRec {
	r := storeRec{
		Alias: it.SK, Description: it.String("description"), Provider: it.String("provider"), Model: it.String("model"),
		Dims: int(it.Int("dims")), ChunkSize: int(it.Int("chunk_size")), ChunkOverlap: int(it.Int("chunk_overlap")),
		Documents: it.Int("docs"), Chunks: it.Int("chunks"), Shards: int(it.Int("shards")), Version: it.Int("ver"),
		Manifest: it.String("manifest"), Deleting: it.Bool("deleting"),
		Created: parseTime(it.String("created_at")), Updated: parseTime(it.String("updated_at")),
	}
	_ = json.Unmarshal([]byte(it.String("profile")), &r.Profile) // a damaged profile only weakens store selection
	return r
}

func (r storeRec) public() Store {
	return Store{Alias: r.Alias, Description: r.Description, Provider: r.Provider, Model: r.Model, Dims: r.Dims,
		ChunkSize: r.ChunkSize, ChunkOverlap: r.ChunkOverlap, Documents: r.Documents, Chunks: r.Chunks,
		Shards: r.Shards, Version: r.Version, CreatedAt: r.Created, UpdatedAt: r.Updated}
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func storeNotFound(alias string) error {
	return fault.NotFound("vector store %q does not exist; create it with vector_store_create, or list yours with vector_store_list", alias)
}

// loadStore reads a store's record. A store being deleted is reported as
// missing unless forDelete is set.
func (s *Service) loadStore(ctx context.Context, c tenant.Caller, alias string, forDelete bool) (storeRec, error) {
	it, err := s.table.Get(ctx, storesPK(c), alias)
	if errors.Is(err, store.ErrNotFound) {
		return storeRec{}, storeNotFound(alias)
	}
	if err != nil {
		return storeRec{}, fault.Unavailable(err, "reading vector store %q failed; retry", alias)
	}
	r := parseStoreRec(it)
	if r.Deleting && !forDelete {
		return storeRec{}, fault.NotFound("vector store %q is being deleted; run vector_store_delete again to finish", alias)
	}
	return r, nil
}

// checkEmbedder refuses to use a store with an embedder other than the one it
// was built with: vectors of different models are not comparable.
func (s *Service) checkEmbedder(r storeRec) error { return embedderFits(r, s.emb) }

// embedderFits refuses a store built with another embedder than e.
func embedderFits(r storeRec, e provider.Embedder) error {
	p, m, d := e.Provider(), e.Model(), e.Dims()
	if r.Provider != p || r.Model != m || r.Dims != d {
		return fault.Invalid("store", "vector store %q was built with embedder %s/%s (%d dimensions), but this server embeds with %s/%s (%d dimensions); configure that embedder, or create a new store",
			r.Alias, r.Provider, r.Model, r.Dims, p, m, d)
	}
	return nil
}

// CreateStore creates an empty vector store, recording the embedder and the
// chunking settings every later ingest uses.
func (s *Service) CreateStore(ctx context.Context, c tenant.Caller, in CreateStoreInput) (Store, error) {
	if err := ValidateAlias("alias", in.Alias); err != nil {
		return Store{}, err
	}
	if n := utf8.RuneCountInString(in.Description); n > MaxDescriptionChars {
		return Store{}, fault.Invalid("description", "is %d characters, more than %d", n, MaxDescriptionChars)
	}
	size, overlap := in.ChunkSize, in.ChunkOverlap
	def := text.DefaultPassageOptions
	if size == 0 {
		size = def.Size
	}
	if in.ChunkOverlap == 0 {
		overlap = min(def.Overlap, size/2)
	}
	if size < MinChunkSize || size > MaxChunkSize {
		return Store{}, fault.Invalid("chunk_size", "%d is outside %d..%d", size, MinChunkSize, MaxChunkSize)
	}
	if overlap < 0 || overlap > size/2 {
		return Store{}, fault.Invalid("chunk_overlap", "%d is outside 0..%d (half the chunk size)", overlap, size/2)
	}
	p, m, d := s.embedderName()
	now := s.now()
	r := storeRec{Alias: in.Alias, Description: in.Description, Provider: p, Model: m, Dims: d,
		ChunkSize: size, ChunkOverlap: overlap, Created: now, Updated: now}
	err := s.table.Put(ctx, r.item(c), store.IfAbsent())
	if errors.Is(err, store.ErrConditionFailed) {
		return Store{}, fault.Conflict(err, "vector store %q already exists; pick another alias, or delete it first", in.Alias)
	}
	if err != nil {
		return Store{}, fault.Unavailable(err, "creating vector store %q failed; retry", in.Alias)
	}
	return r.public(), nil
}

// GetStore describes a store.
func (s *Service) GetStore(ctx context.Context, c tenant.Caller, in StoreInput) (Store, error) {
	if err := ValidateAlias("alias", in.Alias); err != nil {
		return Store{}, err
	}
	r, err := s.loadStore(ctx, c, in.Alias, false)
	if err != nil {
		return Store{}, err
	}
	return r.public(), nil
}

// MaxListLimit bounds one page of vector_store_list and vector_document_list.
const MaxListLimit = store.MaxQueryLimit

func listLimit(n int) (int, error) {
	switch {
	case n == 0:
		return store.DefaultQueryLimit, nil
	case n < 1 || n > MaxListLimit:
		return 0, fault.Invalid("limit", "%d is outside 1..%d", n, MaxListLimit)
	}
	return n, nil
}

// ListStores returns a page of the caller's stores, by alias. Stores being
// deleted are left out.
func (s *Service) ListStores(ctx context.Context, c tenant.Caller, in ListStoresInput) (ListStoresOutput, error) {
	limit, err := listLimit(in.Limit)
	if err != nil {
		return ListStoresOutput{}, err
	}
	recs, next, err := s.storePage(ctx, c, in.Cursor, limit)
	if err != nil {
		return ListStoresOutput{}, err
	}
	out := ListStoresOutput{Stores: []Store{}, NextCursor: next}
	for _, r := range recs {
		if !r.Deleting {
			out.Stores = append(out.Stores, r.public())
		}
	}
	return out, nil
}

func (s *Service) storePage(ctx context.Context, c tenant.Caller, cursor string, limit int) ([]storeRec, string, error) {
	page, err := s.table.Query(ctx, storesPK(c), store.Query{Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return nil, "", fault.Invalid("cursor", "is not a cursor from a previous vector_store_list call")
	}
	if err != nil {
		return nil, "", fault.Unavailable(err, "listing vector stores failed; retry")
	}
	recs := make([]storeRec, len(page.Items))
	for i, it := range page.Items {
		recs[i] = parseStoreRec(it)
	}
	return recs, page.Next, nil
}

// allStores returns every store of the caller that is not being deleted.
func (s *Service) allStores(ctx context.Context, c tenant.Caller) ([]storeRec, error) {
	var out []storeRec
	cursor := ""
	for {
		recs, next, err := s.storePage(ctx, c, cursor, store.MaxQueryLimit)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if !r.Deleting {
				out = append(out, r)
			}
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// DeleteStore removes a store with all its documents, shards and manifests.
// It first marks the store as being deleted, so nothing writes to it while it
// is taken apart; if interrupted, running it again finishes the job.
func (s *Service) DeleteStore(ctx context.Context, c tenant.Caller, in StoreInput) (DeleteStoreOutput, error) {
	if err := ValidateAlias("alias", in.Alias); err != nil {
		return DeleteStoreOutput{}, err
	}
	err := store.Retry(ctx, func() error {
		r, err := s.loadStore(ctx, c, in.Alias, true)
		if err != nil || r.Deleting {
			return err
		}
		prev := r.Version
		r.Deleting, r.Version, r.Updated = true, r.Version+1, s.now()
		return s.table.Put(ctx, r.item(c), store.IfEquals("ver", prev))
	})
	if err != nil {
		return DeleteStoreOutput{}, lostRace(err, in.Alias)
	}
	out := DeleteStoreOutput{Status: "deleted", Alias: in.Alias}
	unfinished := func(err error) (DeleteStoreOutput, error) {
		return DeleteStoreOutput{}, fault.Unavailable(err, "deleting vector store %q failed part way; run vector_store_delete again to finish", in.Alias)
	}
	if out.Documents, err = s.deleteDocRecords(ctx, c, in.Alias); err != nil {
		return unfinished(err)
	}
	if out.Objects, err = s.deleteObjects(ctx, storePrefix(c, in.Alias)); err != nil {
		return unfinished(err)
	}
	// The store's usage leaves its tenant's in the transaction that deletes
	// its record, so an interrupted deletion never releases it twice.
	err = store.Retry(ctx, func() error {
		drop, err := s.quotas.Drop(ctx, c.Tenant, in.Alias)
		if err != nil {
			return err
		}
		return s.table.Transact(ctx, append([]store.Write{store.Delete(storesPK(c), in.Alias, store.Condition{})}, drop...)...)
	})
	if err != nil {
		return unfinished(err)
	}
	return out, nil
}

// deleteDocRecords deletes every document record of a store, 100 at a time.
func (s *Service) deleteDocRecords(ctx context.Context, c tenant.Caller, alias string) (int, error) {
	pk, n := docsPK(c, alias), 0
	for {
		// Always read the first page: the previous one is gone.
		page, err := s.table.Query(ctx, pk, store.Query{Prefix: docPrefix, Limit: store.MaxTransactWrites})
		if err != nil {
			return n, err
		}
		if len(page.Items) == 0 {
			return n, nil
		}
		ws := make([]store.Write, len(page.Items))
		for i, it := range page.Items {
			ws[i] = store.Delete(pk, it.SK, store.Condition{})
		}
		if err := s.table.Transact(ctx, ws...); err != nil {
			return n, err
		}
		n += len(ws)
	}
}

// deleteObjects deletes every object under prefix.
func (s *Service) deleteObjects(ctx context.Context, prefix string) (int, error) {
	n := 0
	for {
		page, err := s.blobs.List(ctx, prefix, &store.ListOptions{Limit: store.MaxQueryLimit})
		if err != nil {
			return n, err
		}
		if len(page.Blobs) == 0 {
			return n, nil
		}
		for _, b := range page.Blobs {
			if err := s.blobs.Delete(ctx, b.Key); err != nil {
				return n, err
			}
			s.cache.Forget(b.Key)
			n++
		}
	}
}

// lostRace turns a lost optimistic-concurrency fight into a conflict the
// caller can retry, and other unclassified failures into unavailable.
func lostRace(err error, alias string) error {
	if errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrConflict) {
		return fault.Conflict(err, "vector store %q is changing too fast to update; retry", alias)
	}
	if err != nil && fault.KindOf(err) == fault.KindInternal {
		return fault.Unavailable(err, "updating vector store %q failed; retry", alias)
	}
	return err
}
