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
	// [ErrConditionFailed] and write nothing; a concurrent conditional write of
	// the same key may also make it return [ErrConflict]. opts may be nil.
	Put(ctx context.Context, key string, data []byte, opts *PutOptions) (BlobInfo, error)

	// Get opens the object at key, or the byte range opts selects. The caller
	// closes the reader. A missing object returns [ErrNotFound]. opts may be nil.
	// A range is cut at the object's end, never an error: an offset at or past
	// the end reads nothing; a negative offset or length is [ErrInvalid]. The
	// returned BlobInfo describes the whole object.
	Get(ctx context.Context, key string, opts *GetOptions) (io.ReadCloser, BlobInfo, error)

	// Head describes the object at key without reading it, or returns [ErrNotFound].
	Head(ctx context.Context, key string) (BlobInfo, error)

	// List returns one page of the objects whose keys begin with prefix, in
	// byte order of their keys. opts may be nil. Listed BlobInfos carry no
	// ContentType, as S3's listing reports none; call Head for it.
	List(ctx context.Context, prefix string, opts *ListOptions) (BlobPage, error)

	// Delete removes the object at key. Deleting a missing object is not an
	// error, so Delete is idempotent.
	Delete(ctx context.Context, key string) error
}

// Locator is implemented by a [Blobs] that reads a key it holds no object
// for from a file a person put there by hand (localfs): Where names that file.
type Locator interface {
	Where(key string) string
}

// LookedFor says where b looked for key, for an error about a missing
// object: the file a [Locator] reads, or the bucket.
func LookedFor(b Blobs, key string) string {
	if l, ok := b.(Locator); ok {
		return "looked for the file " + l.Where(key)
	}
	return "looked in the bucket"
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
	// ETag changes whenever the object's content does; compare it to
	// revalidate a cached copy. It is unquoted, and for one object the same on
	// every backend (the hex MD5 of the content).
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

// ValidateList checks a listing's prefix and options, as every backend must,
// and returns its page size (defaulted) and the key its cursor continues
// after ("" for the first page). opts may be nil.
func ValidateList(prefix string, opts *ListOptions) (limit int, after string, err error) {
	var o ListOptions
	if opts != nil {
		o = *opts
	}
	switch limit = o.Limit; {
	case limit == 0:
		limit = DefaultQueryLimit
	case limit < 0 || limit > MaxQueryLimit:
		return 0, "", fmt.Errorf("%w: list limit %d outside 1..%d", ErrInvalid, limit, MaxQueryLimit)
	}
	if len(prefix) > MaxBlobKeyBytes || !utf8.ValidString(prefix) {
		return 0, "", fmt.Errorf("%w: list prefix is not valid UTF-8 of at most %d bytes", ErrInvalid, MaxBlobKeyBytes)
	}
	after, err = DecodeCursor(Query{Prefix: prefix, Cursor: o.Cursor})
	return limit, after, err
}

// DefaultContentType is the content type of an object put without one.
const DefaultContentType = "application/octet-stream"

// MaxContentTypeBytes bounds a content type.
const MaxContentTypeBytes = 1024

// ValidateContentType returns ct defaulted to [DefaultContentType], or
// [ErrInvalid] unless it is printable ASCII of at most [MaxContentTypeBytes]:
// it travels as an HTTP header on S3, and must mean the same everywhere.
func ValidateContentType(ct string) (string, error) {
	if ct == "" {
		return DefaultContentType, nil
	}
	if len(ct) > MaxContentTypeBytes || strings.IndexFunc(ct, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
		return "", fmt.Errorf("%w: content type %q is not printable ASCII of at most %d bytes", ErrInvalid, ct, MaxContentTypeBytes)
	}
	return ct, nil
}
