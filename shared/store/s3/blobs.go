// Package s3 is the [store.Blobs] backend on Amazon S3 (or any S3-compatible
// server), through aws-sdk-go-v2. The caller builds the client, so this
// package reads no environment and no AWS config files:
//
//	client := awss3.NewFromConfig(cfg) // at cold start
//	blobs := s3.New(client, bucket)
//	info, err := blobs.Put(ctx, "t/"+tenant+"/resumes/"+id, pdf, &store.PutOptions{ContentType: "application/pdf", IfAbsent: true})
//	if errors.Is(err, store.ErrConditionFailed) {
//		// an object is already there
//	}
//
// Every call passes its ctx to the SDK, so a Lambda's deadline bounds it.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/store"
)

var _ store.Blobs = (*Blobs)(nil)

const (
	// maxListKeys is the most keys one ListObjectsV2 call returns.
	maxListKeys = 1000
	// conflictAttempts bounds the tries of a conditional put that S3 answers
	// with 409 ConditionalRequestConflict ("retry the upload", says the API
	// reference for PutObject's If-None-Match).
	conflictAttempts = 5
)

// Blobs is a [store.Blobs] in one S3 bucket. Its methods are safe for use by
// multiple goroutines.
type Blobs struct {
	client *awss3.Client
	bucket string
}

// New returns a Blobs that keeps its objects in bucket. It does no I/O; the
// bucket must exist.
func New(client *awss3.Client, bucket string) *Blobs {
	return &Blobs{client: client, bucket: bucket}
}

// Put implements the [store.Blobs] interface. It sends the object in one
// PutObject with a bytes.Reader body, which the SDK can rewind to retry,
// rather than through the upload manager and its 5 MiB part buffers.
// IfAbsent is PutObject's If-None-Match: *.
func (b *Blobs) Put(ctx context.Context, key string, data []byte, opts *store.PutOptions) (store.BlobInfo, error) {
	var o store.PutOptions
	if opts != nil {
		o = *opts
	}
	if err := store.ValidateBlobKey(key); err != nil {
		return store.BlobInfo{}, err
	}
	ct, err := store.ValidateContentType(o.ContentType)
	if err != nil {
		return store.BlobInfo{}, err
	}
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(key),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(ct),
	}
	if o.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	for attempt := 1; ; attempt++ {
		in.Body = bytes.NewReader(data)
		out, err := b.client.PutObject(ctx, in)
		if err == nil {
			return store.BlobInfo{
				Key:         key,
				Size:        int64(len(data)),
				ETag:        unquote(out.ETag),
				ContentType: ct,
				Modified:    responseTime(out.ResultMetadata),
			}, nil
		}
		switch {
		case hasCode(err, "PreconditionFailed", http.StatusPreconditionFailed):
			return store.BlobInfo{}, fmt.Errorf("s3: put object %s: %w", key, store.ErrConditionFailed)
		case hasCode(err, "ConditionalRequestConflict", http.StatusConflict):
			if attempt == conflictAttempts {
				return store.BlobInfo{}, fmt.Errorf("s3: put object %s: %w (%w)", key, store.ErrConflict, err)
			}
			if err := sleep(ctx, attempt); err != nil {
				return store.BlobInfo{}, fmt.Errorf("s3: put object %s: %w", key, err)
			}
			continue
		}
		return store.BlobInfo{}, fmt.Errorf("s3: put object %s: %w", key, err)
	}
}

// Get implements the [store.Blobs] interface. A range is cut at the end of
// the object, as S3 does; one that starts at or past the end reads nothing,
// where S3 answers 416 InvalidRange.
func (b *Blobs) Get(ctx context.Context, key string, opts *store.GetOptions) (io.ReadCloser, store.BlobInfo, error) {
	var o store.GetOptions
	if opts != nil {
		o = *opts
	}
	if err := store.ValidateBlobKey(key); err != nil {
		return nil, store.BlobInfo{}, err
	}
	if o.Offset < 0 || o.Length < 0 {
		return nil, store.BlobInfo{}, fmt.Errorf("%w: byte range offset %d, length %d: both must be >= 0", store.ErrInvalid, o.Offset, o.Length)
	}
	in := &awss3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)}
	switch {
	case o.Offset == 0 && o.Length == 0:
		// The whole object: no Range, which S3 would refuse on an empty object.
	case o.Length == 0 || o.Length > math.MaxInt64-o.Offset:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", o.Offset))
	default:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", o.Offset, o.Offset+o.Length-1))
	}
	for attempt := 1; ; attempt++ {
		out, err := b.client.GetObject(ctx, in)
		switch {
		case err == nil:
			size := aws.ToInt64(out.ContentLength)
			if total, ok := rangeTotal(aws.ToString(out.ContentRange)); ok {
				size = total
			}
			return out.Body, store.BlobInfo{
				Key:         key,
				Size:        size,
				ETag:        unquote(out.ETag),
				ContentType: orDefault(aws.ToString(out.ContentType)),
				Modified:    aws.ToTime(out.LastModified),
			}, nil
		case isNotFound(err):
			return nil, store.BlobInfo{}, fmt.Errorf("s3: get object %s: %w", key, store.ErrNotFound)
		case hasCode(err, "InvalidRange", http.StatusRequestedRangeNotSatisfiable) && attempt < 3:
			// The range starts at or past the end. Describe the object and
			// return nothing, unless it grew in between: then read again.
			info, err := b.Head(ctx, key)
			if err != nil {
				return nil, store.BlobInfo{}, err
			}
			if o.Offset >= info.Size {
				return io.NopCloser(bytes.NewReader(nil)), info, nil
			}
			continue
		}
		return nil, store.BlobInfo{}, fmt.Errorf("s3: get object %s: %w", key, err)
	}
}

// Head implements the [store.Blobs] interface.
func (b *Blobs) Head(ctx context.Context, key string) (store.BlobInfo, error) {
	if err := store.ValidateBlobKey(key); err != nil {
		return store.BlobInfo{}, err
	}
	out, err := b.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	switch {
	case isNotFound(err):
		return store.BlobInfo{}, fmt.Errorf("s3: head object %s: %w", key, store.ErrNotFound)
	case err != nil:
		return store.BlobInfo{}, fmt.Errorf("s3: head object %s: %w", key, err)
	}
	return store.BlobInfo{
		Key:         key,
		Size:        aws.ToInt64(out.ContentLength),
		ETag:        unquote(out.ETag),
		ContentType: orDefault(aws.ToString(out.ContentType)),
		Modified:    aws.ToTime(out.LastModified),
	}, nil
}

// List implements the [store.Blobs] interface. S3 lists keys in byte order,
// as the interface wants. It asks for one key more than the page holds, so
// that Next is set only when a key remains: S3's IsTruncated can be true on
// a page that happens to hold the last key (gofakes3 sets it when any key
// follows in the bucket, even outside the prefix). The BlobInfos it returns
// have no ContentType: ListObjectsV2 does not report it.
func (b *Blobs) List(ctx context.Context, prefix string, opts *store.ListOptions) (store.BlobPage, error) {
	limit, after, err := store.ValidateList(prefix, opts)
	if err != nil {
		return store.BlobPage{}, err
	}
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(prefix)}
	if after != "" {
		in.StartAfter = aws.String(after)
	}
	var page store.BlobPage
	for len(page.Blobs) <= limit {
		in.MaxKeys = aws.Int32(int32(min(limit+1-len(page.Blobs), maxListKeys)))
		out, err := b.client.ListObjectsV2(ctx, in)
		if err != nil {
			return store.BlobPage{}, fmt.Errorf("s3: list %q: %w", prefix, err)
		}
		for _, obj := range out.Contents {
			page.Blobs = append(page.Blobs, store.BlobInfo{
				Key:      aws.ToString(obj.Key),
				Size:     aws.ToInt64(obj.Size),
				ETag:     unquote(obj.ETag),
				Modified: aws.ToTime(obj.LastModified),
			})
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	if len(page.Blobs) > limit {
		page.Blobs = page.Blobs[:limit]
		page.Next = store.EncodeCursor(page.Blobs[limit-1].Key)
	}
	return page, nil
}

// Delete implements the [store.Blobs] interface. S3 answers 204 for a missing
// key; some S3-compatible servers answer NoSuchKey, which is success here too.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	if err := store.ValidateBlobKey(key); err != nil {
		return err
	}
	_, err := b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("s3: delete object %s: %w", key, err)
	}
	return nil
}

// isNotFound reports whether err is S3's "no such key". GetObject says
// NoSuchKey; HeadObject's 404 has no body, so the SDK names it NotFound. A
// missing bucket (NoSuchBucket) is not a missing object.
func isNotFound(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "NoSuchKey", "NotFound":
		return true
	}
	return false
}

// hasCode reports whether err is the S3 error code, or failing a code, the
// HTTP status that goes with it.
func hasCode(err error, code string, status int) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == code {
		return true
	}
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == status
}

// sleep waits before retry attempt+1, with jitter so that racing writers spread out.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(10*time.Millisecond) << attempt))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// rangeTotal returns the object size from a Content-Range "bytes 0-9/10".
func rangeTotal(cr string) (int64, bool) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(cr[i+1:], 10, 64)
	return n, err == nil
}

// responseTime is the server's Date on a response, the closest thing to an
// object's Last-Modified that PutObject returns, or the local clock's time.
func responseTime(md middleware.Metadata) time.Time {
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		if t, err := http.ParseTime(raw.Header.Get("Date")); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}

// unquote strips the quotes S3 puts around an ETag, so that ETags look the
// same on every backend.
func unquote(etag *string) string {
	return strings.Trim(aws.ToString(etag), `"`)
}

func orDefault(ct string) string {
	if ct == "" {
		return store.DefaultContentType
	}
	return ct
}
