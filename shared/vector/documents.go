package vector

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Limits of document ids and metadata.
const (
	MaxDocIDBytes    = 512
	MaxMetadataKeys  = 32
	MaxMetadataValue = 1024
	// MaxMetadataKeyBytes is the longest metadata key metadataKeyPatten admits.
	MaxMetadataKeyBytes = 64
	metadataKeyPatten   = `^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$`
)

// Limits of what one document becomes. Its text is bounded by
// [document.MaxTextBytes]; these bound the shard it is written as, checked
// before anything is embedded or written.
const (
	// MaxDocumentChunks bounds the chunks one document is cut into: 8 MiB of
	// prose makes about 12,000 at the default chunk size.
	MaxDocumentChunks = 20_000
	// MaxDocumentMetadataBytes bounds a document's metadata (its keys and
	// values, the source, title and format included) times its chunks,
	// since every chunk carries a copy.
	MaxDocumentMetadataBytes = 64 << 20
)

var metadataKeyRE = regexp.MustCompile(metadataKeyPatten)

// ValidateDocID checks a document id: 1 to [MaxDocIDBytes] bytes of UTF-8
// without control characters or leading or trailing spaces. File names and
// paths ("guides/setup.md") are valid ids.
func ValidateDocID(field, id string) error {
	switch {
	case id == "" || len(id) > MaxDocIDBytes:
		return fault.Invalid(field, "must be 1-%d bytes", MaxDocIDBytes)
	case !utf8.ValidString(id):
		return fault.Invalid(field, "is not valid UTF-8")
	case strings.TrimSpace(id) != id:
		return fault.Invalid(field, "%q begins or ends with a space", id)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fault.Invalid(field, "%q contains a control character", id)
	}
	return nil
}

// validateMetadata checks a metadata map against the bounds above.
func validateMetadata(md map[string]string) error {
	if len(md) > MaxMetadataKeys {
		return fault.Invalid("metadata", "has %d keys, more than %d", len(md), MaxMetadataKeys)
	}
	for k, v := range md {
		if !metadataKeyRE.MatchString(k) {
			return fault.Invalid("metadata", "key %q must be 1-64 letters, digits, '_', '.', ':' or '-'", k)
		}
		if n := utf8.RuneCountInString(v); n > MaxMetadataValue {
			return fault.Invalid("metadata", "value of %q is %d characters, more than %d", k, n, MaxMetadataValue)
		}
	}
	return nil
}

// docRec is a document's record: which version of it is live, and where.
type docRec struct {
	DocID    string
	Hash     string // text.Hash64Hex of the extracted text
	Nonce    string // the ingest's, in its chunk ids (see chunkID); "" in records written before nonces
	Chunks   int
	Bytes    int64  // the size of the shard it was ingested as, what its quota charge counts; 0 in records written before quotas
	Shard    string // id of the shard its chunks were written to
	Format   string
	Title    string
	Source   string
	Metadata map[string]string
	Ingested time.Time
}

func (d docRec) item(c tenant.Caller, alias string) store.Item {
	md, _ := json.Marshal(d.Metadata) // a map of strings always encodes
	return store.Item{PK: docsPK(c, alias), SK: docPrefix + d.DocID, Attrs: store.Attrs{
		"hash": d.Hash, "nonce": d.Nonce, "chunks": d.Chunks, "bytes": d.Bytes, "shard": d.Shard, "format": d.Format, "title": d.Title,
		"source": d.Source, "metadata": string(md), "ingested_at": d.Ingested.UTC().Format(time.RFC3339Nano),
	}}
}

func parseDocRec(it store.Item) docRec {
	d := docRec{DocID: strings.TrimPrefix(it.SK, docPrefix), Hash: it.String("hash"), Nonce: it.String("nonce"), Chunks: int(it.Int("chunks")), Bytes: it.Int("bytes"),
		Shard: it.String("shard"), Format: it.String("format"), Title: it.String("title"), Source: it.String("source"),
		Ingested: parseTime(it.String("ingested_at"))}
	_ = json.Unmarshal([]byte(it.String("metadata")), &d.Metadata) // written by item, from a map
	return d
}

// version returns the dead list's entry for this version, once it leaves search.
func (d docRec) version() deadDoc {
	return deadDoc{Shard: d.Shard, DocID: d.DocID, Hash: d.Hash, Nonce: d.Nonce, Chunks: d.Chunks}
}

// usage is what the version counts against its store's and tenant's quotas.
func (d docRec) usage() quota.Usage {
	return quota.Usage{Documents: 1, Chunks: int64(d.Chunks), Bytes: d.Bytes}
}

// released is the change to usage when the version leaves the store.
func (d docRec) released() quota.Usage {
	u := d.usage()
	return quota.Usage{Documents: -u.Documents, Chunks: -u.Chunks, Bytes: -u.Bytes}
}

func (d docRec) public() DocumentInfo {
	return DocumentInfo{DocID: d.DocID, Chunks: d.Chunks, ContentHash: d.Hash, Format: d.Format, Title: d.Title,
		Source: d.Source, Metadata: d.Metadata, IngestedAt: d.Ingested}
}

// loadDoc reads a document's record; found is false if there is none.
func (s *Service) loadDoc(ctx context.Context, c tenant.Caller, alias, docID string) (d docRec, found bool, err error) {
	it, err := s.table.Get(ctx, docsPK(c, alias), docPrefix+docID)
	if errors.Is(err, store.ErrNotFound) {
		return docRec{}, false, nil
	}
	if err != nil {
		return docRec{}, false, fault.Unavailable(err, "reading document %q of vector store %q failed; retry", docID, alias)
	}
	return parseDocRec(it), true, nil
}

// ListDocuments returns a page of a store's documents, by id.
func (s *Service) ListDocuments(ctx context.Context, c tenant.Caller, in ListDocumentsInput) (ListDocumentsOutput, error) {
	if err := ValidateAlias("store", in.Store); err != nil {
		return ListDocumentsOutput{}, err
	}
	limit, err := listLimit(in.Limit)
	if err != nil {
		return ListDocumentsOutput{}, err
	}
	if _, err := s.loadStore(ctx, c, in.Store, false); err != nil {
		return ListDocumentsOutput{}, err
	}
	page, err := s.table.Query(ctx, docsPK(c, in.Store), store.Query{Prefix: docPrefix, Cursor: in.Cursor, Limit: limit})
	if errors.Is(err, store.ErrInvalid) {
		return ListDocumentsOutput{}, fault.Invalid("cursor", "is not a cursor from a previous vector_document_list call on this store")
	}
	if err != nil {
		return ListDocumentsOutput{}, fault.Unavailable(err, "listing documents of vector store %q failed; retry", in.Store)
	}
	out := ListDocumentsOutput{Store: in.Store, Documents: make([]DocumentInfo, len(page.Items)), NextCursor: page.Next}
	for i, it := range page.Items {
		out.Documents[i] = parseDocRec(it).public()
	}
	return out, nil
}

func docNotFound(alias, docID string) error {
	return fault.NotFound("vector store %q has no document %q; vector_document_list shows its documents", alias, docID)
}

// DeleteDocument removes a document from search and from the store's records.
func (s *Service) DeleteDocument(ctx context.Context, c tenant.Caller, in DeleteDocumentInput) (DeleteDocumentOutput, error) {
	if err := ValidateAlias("store", in.Store); err != nil {
		return DeleteDocumentOutput{}, err
	}
	if err := ValidateDocID("doc_id", in.DocID); err != nil {
		return DeleteDocumentOutput{}, err
	}
	var removed int
	var dropped []string
	_, _, err := s.commit(ctx, c, in.Store, func(r *storeRec, m *manifest) ([]store.Write, error) {
		d, found, err := s.loadDoc(ctx, c, in.Store, in.DocID)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, docNotFound(in.Store, in.DocID)
		}
		dropped = m.kill(d.version())
		removed = d.Chunks
		r.Documents--
		charge, err := s.quotas.Charge(ctx, c.Tenant, in.Store, d.released())
		if err != nil {
			return nil, err
		}
		return append([]store.Write{store.Delete(docsPK(c, in.Store), docPrefix+in.DocID, store.IfEquals("hash", d.Hash))}, charge...), nil
	})
	if err != nil {
		return DeleteDocumentOutput{}, err
	}
	s.removeObjects(ctx, dropped...)
	return DeleteDocumentOutput{Status: "deleted", Store: in.Store, DocID: in.DocID, Removed: removed}, nil
}
