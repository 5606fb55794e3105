package vector

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/callcontext"
	"github.com/switchboard-dev/switchboard/shared/fault"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// IndexerPrincipal is the principal the indexer acts as for the tenant whose
// upload it indexes.
const IndexerPrincipal = "s3-indexer"

// Upload is one object event the indexer acts on: an object created under, or
// removed from, tenants/<tenant>/documents/<store>/.
type Upload struct {
	Key     string
	Tenant  string
	Store   string
	DocID   string // the key's part after documents/<store>/
	Removed bool
}

// ParseUpload reads the object key of an S3 notification record (URL-encoded,
// as S3 sends it) and says whether the indexer should act on it. Keys outside
// tenants/<tenant>/documents/<store>/ are ignored (ok false, no error); keys
// there that name an invalid tenant, store or document id are an error.
func ParseUpload(rec events.S3EventRecord) (u Upload, ok bool, err error) {
	key, err := url.QueryUnescape(rec.S3.Object.Key)
	if err != nil {
		return Upload{}, false, fmt.Errorf("object key %q is not URL-encoded: %w", rec.S3.Object.Key, err)
	}
	rest, found := strings.CutPrefix(key, "tenants/")
	if !found {
		return Upload{}, false, nil
	}
	t, rest, _ := strings.Cut(rest, "/")
	rest, found = strings.CutPrefix(rest, "documents/")
	if !found {
		return Upload{}, false, nil
	}
	alias, docID, _ := strings.Cut(rest, "/")
	u = Upload{Key: key, Tenant: t, Store: alias, DocID: docID, Removed: strings.HasPrefix(rec.EventName, "ObjectRemoved")}
	if !u.Removed && !strings.HasPrefix(rec.EventName, "ObjectCreated") {
		return Upload{}, false, nil
	}
	if strings.HasSuffix(key, "/") {
		return Upload{}, false, nil // a "folder" placeholder, not a document
	}
	if err := tenant.Validate(t); err != nil {
		return Upload{}, false, err
	}
	if err := tenant.OwnBlobKey(tenant.Caller{Tenant: t}, key); err != nil {
		return Upload{}, false, err
	}
	if err := ValidateAlias("store", alias); err != nil {
		return Upload{}, false, err
	}
	if err := ValidateDocID("doc_id", docID); err != nil {
		return Upload{}, false, err
	}
	return u, true, nil
}

// IndexReport says what the indexer did with an event's records.
type IndexReport struct {
	Ingested []IngestOutput         `json:"ingested,omitempty"`
	Deleted  []DeleteDocumentOutput `json:"deleted,omitempty"`
	// Skipped lists records left alone, with the reason: keys outside
	// documents/, unreadable documents, removals of documents never indexed.
	Skipped []string `json:"skipped,omitempty"`
}

// Index acts on an S3 notification: each object created under
// tenants/<tenant>/documents/<store>/ is ingested into that store of that
// tenant (created, with the default settings, if it does not exist yet), with
// the rest of the key as document id; each object removed there removes its
// document. Records it cannot act on for good (a bad key, an unreadable
// document, a store or tenant at its quota) are reported as skipped; a failure that retrying may cure (an
// unavailable store or embedder) is returned, so that Lambda retries the
// event, which is safe: an unchanged document is skipped.
func (s *Service) Index(ctx context.Context, ev events.S3Event) (IndexReport, error) {
	var rep IndexReport
	var errs []error
	for _, rec := range ev.Records {
		u, ok, err := ParseUpload(rec)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", rec.S3.Object.Key, err))
			continue
		}
		if !ok {
			rep.Skipped = append(rep.Skipped, rec.S3.Object.Key+": not a document upload")
			continue
		}
		c := tenant.Caller{Tenant: u.Tenant, Principal: IndexerPrincipal}
		// The record's own call: a function with tenant-scoped credentials
		// (package tenantcreds) signs its reads and writes as the tenant the
		// key names.
		ctx := callcontext.NewContext(ctx, callcontext.Call{Caller: c})
		if u.Removed {
			out, err := s.DeleteDocument(ctx, c, DeleteDocumentInput{Store: u.Store, DocID: u.DocID})
			switch {
			case err == nil:
				rep.Deleted = append(rep.Deleted, out)
			case fault.KindOf(err) == fault.KindNotFound || fault.KindOf(err) == fault.KindInvalid:
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", u.Key, err))
			default:
				errs = append(errs, fmt.Errorf("removing %s: %w", u.Key, err))
			}
			continue
		}
		// S3 delivers events late and more than once: an object deleted
		// since is nothing to do (its removal event follows, or came first).
		if _, err := s.blobs.Head(ctx, u.Key); isNotFound(err) {
			rep.Skipped = append(rep.Skipped, u.Key+": no longer exists")
			continue
		} else if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", u.Key, err))
			continue
		}
		out, err := s.Ingest(ctx, c, IngestInput{Store: u.Store, DocID: u.DocID, Key: u.Key})
		if fault.KindOf(err) == fault.KindNotFound && !s.storeExists(ctx, c, u.Store) {
			if _, cerr := s.CreateStore(ctx, c, CreateStoreInput{Alias: u.Store}); cerr != nil && fault.KindOf(cerr) != fault.KindConflict {
				errs = append(errs, fmt.Errorf("creating store %s for %s: %w", u.Store, u.Key, cerr))
				continue
			}
			out, err = s.Ingest(ctx, c, IngestInput{Store: u.Store, DocID: u.DocID, Key: u.Key})
		}
		switch kind := fault.KindOf(err); {
		case err == nil:
			rep.Ingested = append(rep.Ingested, out)
		case kind == fault.KindInvalid || kind == fault.KindNotFound || kind == fault.KindQuotaExceeded:
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", u.Key, err))
		default:
			errs = append(errs, fmt.Errorf("ingesting %s: %w", u.Key, err))
		}
	}
	return rep, errors.Join(errs...)
}

// storeExists reports whether the store exists, being deleted or not.
func (s *Service) storeExists(ctx context.Context, c tenant.Caller, alias string) bool {
	_, err := s.loadStore(ctx, c, alias, true)
	return err == nil
}
