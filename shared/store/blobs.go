package store

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Blobs is an S3-shaped object store: whole objects put and read by key, byte
// ranges, listing by prefix.
//
// Every key a domain package writes begins with the caller's tenant; Blobs
// itself knows nothing of tenants. All of its methods must be safe for use by
// multiple goroutines.
type Blobs interface {
	// Put stores data at key, replacing any object there unless opts.IfAbsent
	// is set, in which case an existing object makes Put return
	// [ErrConditionFailed] and write nothing. opts may be nil.
	Put(ctx context.Context, key string, data []byte, opts *PutOptions) (BlobInfo, error)

	// Get opens the object at key, or the byte range opts selects. The caller
	// closes the reader. A missing object returns [ErrNotFound]. opts may be nil.
	Get(ctx context.Context, key string, opts *GetOptions) (io.ReadCloser, BlobInfo, error)

	// Head describes the object at key without reading it, or returns [ErrNotFound].
	Head(ctx context.Context, key string) (BlobInfo, error)

	// List returns one page of the objects whose keys begin with prefix, in key
	// order. opts may be nil.
	List(ctx context.Context, prefix string, opts *ListOptions) (BlobPage, error)

	// Delete removes the object at key. Deleting a missing object is not an
	// error, so Delete is idempotent.
	Delete(ctx context.Context, key string) error
}

// PutOptions adjusts [Blobs.Put].
type PutOptions struct {
	// IfAbsent writes only if no object exists at the key.
	IfAbsent bool
	// ContentType is stored with the object. If empty, defaults to application/octet-stream.
	ContentType string
}

// GetOptions selects a byte range for [Blobs.Get].
type GetOptions struct {
	// Offset is the first byte to read.
	Offset int64
	// Length is how many bytes to read. If zero, reads to the end.
	Length int64
}

// ListOptions pages through [Blobs.List].
type ListOptions struct {
	// Cursor continues from a previous [BlobPage.Next].
	Cursor string
	// Limit is the page size. If zero, defaults to [DefaultQueryLimit]; it may
	// not exceed [MaxQueryLimit].
	Limit int
}

// BlobInfo describes a stored object.
type BlobInfo struct {
	Key  string
	Size int64
	// ETag changes whenever the object's content does; compare it to revalidate a cached copy.
	ETag        string
	ContentType string
	Modified    time.Time
}

// BlobPage is one page of a listing.
type BlobPage struct {
	Blobs []BlobInfo
	// Next continues the listing; it is empty exactly when no objects remain.
	Next string
}

// MaxBlobKeyBytes bounds an object key, as S3 does.
const MaxBlobKeyBytes = 1024

// ValidateBlobKey checks an object key: non-empty UTF-8 of at most
// [MaxBlobKeyBytes], relative, with no empty, "." or ".." segments, so that a
// key can never climb out of its prefix on any backend.
func ValidateBlobKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty object key", ErrInvalid)
	case len(key) > MaxBlobKeyBytes:
		return fmt.Errorf("%w: object key is %d bytes, more than %d", ErrInvalid, len(key), MaxBlobKeyBytes)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: object key is not valid UTF-8", ErrInvalid)
	case strings.ContainsAny(key, "\x00\\"):
		return fmt.Errorf("%w: object key %q contains a NUL byte or backslash", ErrInvalid, key)
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "", ".", "..":
			return fmt.Errorf("%w: object key %q has an empty, \".\" or \"..\" segment", ErrInvalid, key)
		}
	}
	return nil
}

// ValidateListLimit returns limit defaulted, or an error if it is out of range.
func ValidateListLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultQueryLimit, nil
	case limit < 0 || limit > MaxQueryLimit:
		return 0, fmt.Errorf("%w: list limit %d outside 1..%d", ErrInvalid, limit, MaxQueryLimit)
	}
	return limit, nil
}
