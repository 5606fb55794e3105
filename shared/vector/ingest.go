package vector

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/document"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/retrieval"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/text"
)

// Ingestion settings.
const (
	// EmbedBatch is how many passages one embedding call carries.
	EmbedBatch = 64
	// ShardProfileTerms bounds the term profile a shard's manifest entry keeps.
	ShardProfileTerms = 64
)

// Metadata keys every chunk gets from its document, unless the caller's
// metadata sets them.
const (
	MetaSource = "source"
	MetaTitle  = "title"
	MetaFormat = "format"
)

// source is a document's bytes and the name its format is read from.
type source struct {
	name  string // file name, for the format
	from  string // the file name or object key, for the source metadata
	data  []byte
	field string // the argument that gave it, for errors
}

// Ingest adds a document to a store, or replaces the stored document with
// the same id: it extracts the text (document.Extract), cuts it into
// passages (text.Passages with the store's chunking), embeds them in
// batches, writes them as a new immutable shard and commits it to the
// store's manifest, removing the document's previous chunks from search in
// the same commit, charged against the store's and the tenant's quotas
// (package quota; a refusal stores nothing). A document whose text and metadata are unchanged is
// skipped before anything is embedded. A document past a limit (those of
// package document, [MaxDocumentChunks], [MaxDocumentMetadataBytes]) is
// refused before anything is embedded or stored; a call whose context ends
// stops at the next stage, leaving nothing behind.
func (s *Service) Ingest(ctx context.Context, c tenant.Caller, in IngestInput) (IngestOutput, error) {
	if err := ValidateAlias("store", in.Store); err != nil {
		return IngestOutput{}, err
	}
	if err := validateMetadata(in.Metadata); err != nil {
		return IngestOutput{}, err
	}
	given := 0
	for _, v := range []string{in.Content, in.ContentBase64, in.Key} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return IngestOutput{}, fault.Invalid("content", "give the document exactly one way: content (text), content_base64 (binary) or key (an object under your tenant)")
	}
	if in.Format != "" && !slices.Contains(Formats, in.Format) {
		return IngestOutput{}, fault.Invalid("format", "%q is not a format: use txt, md, pdf or docx", in.Format)
	}
	r, err := s.loadStore(ctx, c, in.Store, false)
	if err != nil {
		return IngestOutput{}, err
	}
	if err := s.checkEmbedder(r); err != nil {
		return IngestOutput{}, err
	}
	src, err := s.readSource(ctx, c, in)
	if err != nil {
		return IngestOutput{}, err
	}
	docID := in.DocID
	if docID == "" {
		docID = defaultDocID(c, in)
	}
	if docID == "" {
		return IngestOutput{}, fault.Invalid("doc_id", "is required when there is no file_name or key to take it from")
	}
	if err := ValidateDocID("doc_id", docID); err != nil {
		return IngestOutput{}, err
	}
	doc, err := document.Extract(ctx, src.name, src.data)
	switch {
	case errors.Is(err, document.ErrUnsupported):
		field := "file_name"
		if in.FileName == "" && in.Format != "" {
			field = "format"
		}
		return IngestOutput{}, fault.Invalid(field, "%v", err)
	case errors.Is(err, document.ErrTooLarge):
		return IngestOutput{}, fault.Invalid(src.field, "%v", err)
	case errors.Is(err, document.ErrCorrupt):
		return IngestOutput{}, fault.Invalid(src.field, "cannot be read as %s: %v", path.Ext(src.name), err)
	case err != nil:
		return IngestOutput{}, err // the call's deadline passed
	}
	md := chunkMetadata(in.Metadata, src.from, doc)
	hash := contentHash(doc.Markdown, md)
	out := IngestOutput{Store: in.Store, DocID: docID, Status: "unchanged", ContentHash: hash, Format: doc.Format,
		Title: doc.Title, Provider: r.Provider, Model: r.Model, Dims: r.Dims}

	old, found, err := s.loadDoc(ctx, c, in.Store, docID)
	if err != nil {
		return IngestOutput{}, err
	}
	if found && old.Hash == hash {
		unchanged := old.Nonce != ""
		if !unchanged {
			// Written before nonces: unchanged only if search shows it.
			_, m, err := s.snapshot(ctx, c, in.Store)
			if err != nil {
				return IngestOutput{}, err
			}
			unchanged = !m.hides(old)
		}
		if unchanged {
			out.Chunks = old.Chunks
			return out, nil
		}
	}
	passages, err := text.Passages(doc.Markdown, text.PassageOptions{Size: r.ChunkSize, Overlap: r.ChunkOverlap, Max: MaxDocumentChunks})
	if errors.Is(err, text.ErrTooManyPassages) {
		return IngestOutput{}, fault.Invalid(src.field, "the document's text makes more than %d chunks of %d characters, the limit per document; split it, or ingest it into a store with larger chunks",
			MaxDocumentChunks, r.ChunkSize)
	}
	if err != nil {
		return IngestOutput{}, fmt.Errorf("cutting passages: %w", err)
	}
	if len(passages) == 0 {
		return IngestOutput{}, &fault.Error{Kind: fault.KindInvalid, Field: src.field, Message: ErrNoText.Error(), Err: ErrNoText}
	}
	if err := checkChunkMetadata(md, len(passages), src.field, in.Metadata); err != nil {
		return IngestOutput{}, err
	}
	if err := ctx.Err(); err != nil {
		return IngestOutput{}, err
	}
	nonce := randomID(8)
	chunks := make([]retrieval.Chunk, len(passages))
	for i, p := range passages {
		chunks[i] = retrieval.Chunk{ID: chunkID(in.Store, docID, hash, nonce, i), DocID: docID, Text: p.Text, Metadata: md}
	}
	if err := s.embedChunks(ctx, r, chunks); err != nil {
		return IngestOutput{}, err
	}
	if err := ctx.Err(); err != nil {
		return IngestOutput{}, err
	}
	seg, err := retrieval.NewSegment(chunks, r.Dims)
	if err != nil {
		return IngestOutput{}, fmt.Errorf("building a shard: %w", err)
	}
	ref, err := s.writeShard(ctx, c, in.Store, seg)
	if err != nil {
		return IngestOutput{}, err
	}
	// The graph pack is stored with the shard and charged with it.
	var graphBytes int64
	if ref.Graph, graphBytes, out.GraphFallbacks, err = s.writeGraph(ctx, c, in.Store, ref.ID, docID, chunks); err != nil {
		s.removeObjects(ctx, ref.Key)
		return IngestOutput{}, err
	}
	rec := docRec{DocID: docID, Hash: hash, Nonce: nonce, Chunks: len(chunks), Bytes: ref.Size + graphBytes, Shard: ref.ID, Format: doc.Format, Title: doc.Title,
		Source: src.from, Metadata: in.Metadata, Ingested: s.now()}
	var dropped []string
	_, m, err := s.commit(ctx, c, in.Store, func(r *storeRec, m *manifest) ([]store.Write, error) {
		cur, found, err := s.loadDoc(ctx, c, in.Store, docID)
		if err != nil {
			return nil, err
		}
		dropped, out.Removed, out.Status = nil, 0, "added"
		delta := rec.usage()
		switch {
		case found && cur.Hash == hash && !m.hides(cur):
			out.Status = "unchanged" // a concurrent ingest of the same text won
			return nil, errNoChange
		case found:
			dropped = m.kill(cur.version())
			out.Removed, out.Status = cur.Chunks, "replaced"
			delta = delta.Add(cur.released())
		default:
			r.Documents++
		}
		// Charged in the commit, on the state it changes: a refusal stores
		// nothing (the shard is removed below), and concurrent ingests cannot
		// pass a quota together, since the counters' writes are conditional.
		charge, err := s.quotas.Charge(ctx, c.Tenant, in.Store, delta)
		if err != nil {
			return nil, err
		}
		m.Shards = append(m.Shards, ref)
		return append([]store.Write{store.Put(rec.item(c, in.Store), store.Condition{})}, charge...), nil
	})
	if err != nil || out.Status == "unchanged" {
		if !errors.Is(err, errMaybeCommitted) {
			s.removeObjects(ctx, ref.Key, ref.Graph)
		}
		return out, err
	}
	s.removeObjects(ctx, dropped...)
	out.Chunks = len(chunks)
	if s.needsCompaction(m, r.Dims) {
		if err := s.compact(ctx, c, in.Store); err != nil {
			// The document is in; the next ingest tries again.
			s.log.WarnContext(ctx, "compaction failed", "store", in.Store, "error", err)
		}
	}
	return out, nil
}

// readSource returns the document's bytes from whichever argument gave them.
// An object key is checked against the caller's tenant before anything is read.
func (s *Service) readSource(ctx context.Context, c tenant.Caller, in IngestInput) (source, error) {
	name := in.FileName
	if name == "" && in.Format != "" {
		name = "document." + in.Format
	}
	switch {
	case in.Content != "":
		if len(in.Content) > MaxInlineBytes {
			return source{}, fault.Invalid("content", "is %d bytes, more than %d; upload larger documents to documents/%s/ in the bucket, or pass their key", len(in.Content), MaxInlineBytes, in.Store)
		}
		if name == "" {
			name = "document.txt"
		}
		return source{name: name, from: in.FileName, data: []byte(in.Content), field: "content"}, nil
	case in.ContentBase64 != "":
		if name == "" {
			return source{}, fault.Invalid("file_name", "is required with content_base64 (or give format): its extension says how to read the bytes")
		}
		data, err := base64.StdEncoding.DecodeString(in.ContentBase64)
		if err != nil {
			return source{}, fault.Invalid("content_base64", "is not standard base64: %v", err)
		}
		if len(data) > MaxInlineBytes {
			return source{}, fault.Invalid("content_base64", "is %d bytes decoded, more than %d; pass larger documents by key", len(data), MaxInlineBytes)
		}
		return source{name: name, from: in.FileName, data: data, field: "content_base64"}, nil
	}
	if err := tenant.OwnBlobKey(c, in.Key); err != nil {
		return source{}, fault.Invalid("key", "%v", err)
	}
	if name == "" {
		name = path.Base(in.Key)
	}
	info, err := s.blobs.Head(ctx, in.Key)
	if isNotFound(err) {
		return source{}, fault.NotFound("no object %q (%s): put the document there first", in.Key, store.LookedFor(s.blobs, in.Key))
	}
	if err != nil {
		return source{}, fault.Unavailable(err, "reading object %q failed; retry", in.Key)
	}
	if info.Size > document.MaxBytes {
		return source{}, fault.Invalid("key", "object %q is %d bytes, more than %d", in.Key, info.Size, document.MaxBytes)
	}
	rc, _, err := s.blobs.Get(ctx, in.Key, &store.GetOptions{Length: document.MaxBytes + 1})
	if isNotFound(err) {
		return source{}, fault.NotFound("no object %q (%s): put the document there first", in.Key, store.LookedFor(s.blobs, in.Key))
	}
	if err != nil {
		return source{}, fault.Unavailable(err, "reading object %q failed; retry", in.Key)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return source{}, fault.Unavailable(err, "reading object %q failed; retry", in.Key)
	}
	if len(data) > document.MaxBytes {
		return source{}, fault.Invalid("key", "object %q is more than %d bytes", in.Key, document.MaxBytes)
	}
	return source{name: name, from: in.Key, data: data, field: "key"}, nil
}

// defaultDocID is the document id when the caller gives none: the part of
// the key after documents/<store>/ (what the indexer uses for an upload
// there, so both name it alike), else the key's or the file's base name.
func defaultDocID(c tenant.Caller, in IngestInput) string {
	if in.Key != "" {
		if rest, ok := strings.CutPrefix(in.Key, documentsPrefix(c, in.Store)); ok && rest != "" {
			return rest
		}
		return path.Base(in.Key)
	}
	return in.FileName
}

// documentsPrefix is where uploads to a store go: the indexer ingests objects
// created under it.
func documentsPrefix(c tenant.Caller, alias string) string {
	return tenant.BlobPrefix(c.Tenant) + "documents/" + alias + "/"
}

// chunkMetadata is the metadata every chunk of a document carries: the
// caller's, plus the document's source, title and format where the caller set
// none of those keys.
func chunkMetadata(user map[string]string, from string, doc document.Document) map[string]string {
	md := maps.Clone(user)
	if md == nil {
		md = map[string]string{}
	}
	for k, v := range map[string]string{MetaSource: from, MetaTitle: doc.Title, MetaFormat: doc.Format} {
		if _, set := md[k]; !set && v != "" {
			md[k] = v
		}
	}
	return md
}

// checkChunkMetadata refuses a document whose chunks would carry more than
// MaxDocumentMetadataBytes of metadata in all: md on each of n chunks.
func checkChunkMetadata(md map[string]string, n int, contentField string, user map[string]string) error {
	size := 0
	for k, v := range md {
		size += len(k) + len(v)
	}
	if int64(size)*int64(n) <= MaxDocumentMetadataBytes {
		return nil
	}
	field := contentField
	if len(user) > 0 {
		field = "metadata"
	}
	return fault.Invalid(field, "%d bytes of metadata (source, title and format included) on each of %d chunks make %d MiB, more than %d MiB, the limit per document; shorten the metadata or split the document",
		size, n, int64(size)*int64(n)>>20, MaxDocumentMetadataBytes>>20)
}

// contentHash fingerprints what a document's chunks are made of: its
// metadata and its text.
func contentHash(markdown string, md map[string]string) string {
	b, _ := json.Marshal(md) // encoding/json sorts map keys
	return text.Hash64Hex(string(b) + "\x00" + markdown)
}

// embedChunks fills in the chunks' vectors, a batch at a time, reporting
// progress when there is more than one batch.
func (s *Service) embedChunks(ctx context.Context, r storeRec, chunks []retrieval.Chunk) error {
	for start := 0; start < len(chunks); start += EmbedBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+EmbedBatch, len(chunks))
		texts := make([]string, end-start)
		for i := range texts {
			texts[i] = chunks[start+i].Text
		}
		e, err := s.emb.Embed(ctx, provider.EmbedRequest{Texts: texts, Purpose: provider.ForDocument})
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fault.Unavailable(err, "embedding passages with %s/%s failed; retry", r.Provider, r.Model)
		}
		if e.Dims != r.Dims || len(e.Vectors) != len(texts) {
			return fault.Unavailable(nil, "embedder %s/%s returned %d vectors of %d dimensions for %d passages; the store needs %d dimensions",
				e.Provider, e.Model, len(e.Vectors), e.Dims, len(texts), r.Dims)
		}
		for i, v := range e.Vectors {
			chunks[start+i].Vector = v
		}
		if len(chunks) > EmbedBatch {
			s.progress(ctx, float64(end), float64(len(chunks)), fmt.Sprintf("embedded %d of %d passages", end, len(chunks)))
		}
	}
	return nil
}

// writeShard writes seg as a new shard object and returns its manifest
// entry. The segment goes into the cache, so this process's next search
// does not read it back.
func (s *Service) writeShard(ctx context.Context, c tenant.Caller, alias string, seg *retrieval.Segment) (shardRef, error) {
	data, err := seg.MarshalBinary()
	if err != nil {
		return shardRef{}, fmt.Errorf("encoding a shard: %w", err)
	}
	id := randomID(8)
	key := shardKey(c, alias, id)
	info, err := s.blobs.Put(ctx, key, data, &store.PutOptions{IfAbsent: true})
	if err != nil {
		return shardRef{}, fault.Unavailable(err, "writing a shard of vector store %q failed; retry", alias)
	}
	s.cache.add(&cacheEntry{key: key, etag: info.ETag, size: segmentBytes(int64(len(data))), value: seg, checked: time.Now()})
	docs := map[string]bool{}
	for i := range seg.Len() {
		docs[seg.DocID(i)] = true
	}
	return shardRef{ID: id, Key: key, ETag: info.ETag, Size: info.Size, Chunks: seg.Len(), Docs: len(docs),
		Terms: termProfile(seg)}, nil
}

// termProfile counts, for the most frequent terms of seg, the chunks that
// hold them. The counts come from the segment's postings: analysing the
// texts again cost as much as indexing them.
func termProfile(seg *retrieval.Segment) map[string]int {
	type term struct {
		t string
		n int
	}
	order := func(a, b term) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.t, b.t)) }
	top := make([]term, 0, ShardProfileTerms+1) // the best so far, in order
	for t, n := range seg.Terms() {
		x := term{t, n}
		if len(t) < 2 || len(top) == ShardProfileTerms && order(x, top[len(top)-1]) > 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, x, order)
		top = slices.Insert(top, i, x)
		top = top[:min(len(top), ShardProfileTerms)]
	}
	out := make(map[string]int, len(top))
	for _, x := range top {
		out[x.t] = x.n
	}
	return out
}

// segmentBytes estimates the memory a decoded shard of n bytes holds. The
// encoding holds what the decoded shard does (float32 and int8 vectors,
// texts, postings), mostly as flat arrays; a quarter more covers the
// strings' and maps' headers. Twice the size, as first estimated, made a
// 100,000-chunk store overflow a 512 MB cache and reload on every query.
func segmentBytes(n int64) int64 { return n * 5 / 4 }

func decodeSegment(data []byte) (*retrieval.Segment, int64, error) {
	seg, err := retrieval.DecodeSegment(data)
	if err != nil {
		return nil, 0, err
	}
	return seg, segmentBytes(int64(len(data))), nil
}
