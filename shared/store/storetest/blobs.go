package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-dev/switchboard/shared/store"
)

// RunBlobs runs the Blobs behaviour suite against b. Every subtest works
// under its own random key prefix and deletes it when it ends, so a backend
// (a shared bucket) may hold other data.
func RunBlobs(t *testing.T, b store.Blobs) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, store.Blobs, string)
	}{
		{"PutThenGetRoundTripsContentAndMetadata", testBlobRoundTrip},
		{"PutReplacesAnObjectAndChangesItsETag", testBlobReplace},
		{"GetAndHeadOfAMissingKeyAreErrNotFound", testBlobMissing},
		{"GetReadsByteRangesCutAtTheEnd", testBlobRanges},
		{"PutIfAbsentWritesOnceAndNeverReplaces", testBlobIfAbsent},
		{"ListReturnsKeysWithThePrefixInByteOrder", testBlobListPrefix},
		{"ListPaginatesWithCursorsThatEndExactlyAtTheLastKey", testBlobListPagination},
		{"ListCursorContinuesAfterItsKeyWhateverChanged", testBlobListCursorAfterChanges},
		{"ListRejectsBadLimitsCursorsAndPrefixes", testBlobListInvalid},
		{"DeleteIsIdempotentAndRemovesOnlyItsKey", testBlobDelete},
		{"InvalidKeysAreRejectedAndWriteNothing", testBlobInvalidKeys},
		{"InvalidContentTypesAreRejected", testBlobInvalidContentType},
		{"ACanceledContextWritesNothing", testBlobCanceled},
		{"ConcurrentWritersOfDifferentKeysLoseNothing", testBlobConcurrentWriters},
		{"ConcurrentPutsIfAbsentOfOneKeyHaveOneWinner", testBlobConcurrentIfAbsent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, b, NewBlobPrefix(t, b))
		})
	}
}

// NewBlobPrefix returns a random key prefix ending in "/" for one test and
// deletes every object under it when the test ends.
func NewBlobPrefix(t *testing.T, b store.Blobs) string {
	t.Helper()
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		t.Fatal(err)
	}
	p := "test/" + hex.EncodeToString(r[:]) + "/"
	t.Cleanup(func() { PurgeBlobs(t, b, p) })
	return p
}

// PurgeBlobs deletes every object whose key begins with prefix.
func PurgeBlobs(t testing.TB, b store.Blobs, prefix string) {
	t.Helper()
	for _, info := range ListAllBlobs(t, b, prefix) {
		if err := b.Delete(context.Background(), info.Key); err != nil {
			t.Errorf("purging %s: %v", info.Key, err)
		}
	}
}

// ListAllBlobs lists every object whose key begins with prefix, following cursors.
func ListAllBlobs(t testing.TB, b store.Blobs, prefix string) []store.BlobInfo {
	t.Helper()
	var all []store.BlobInfo
	opts := &store.ListOptions{Limit: store.MaxQueryLimit}
	for {
		page, err := b.List(context.Background(), prefix, opts)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		all = append(all, page.Blobs...)
		if page.Next == "" {
			return all
		}
		opts.Cursor = page.Next
	}
}

// blobCmp compares BlobInfos. Modification times are compared within two
// seconds: S3 reports Last-Modified to the second on Head and to the
// millisecond in a listing, and Put can only report when the server answered.
var blobCmp = cmp.Options{cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(2 * time.Second)}

func mustPutBlob(t *testing.T, b store.Blobs, key string, data []byte, opts *store.PutOptions) store.BlobInfo {
	t.Helper()
	info, err := b.Put(context.Background(), key, data, opts)
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	return info
}

func mustGetBlob(t *testing.T, b store.Blobs, key string, opts *store.GetOptions) ([]byte, store.BlobInfo) {
	t.Helper()
	rc, info, err := b.Get(context.Background(), key, opts)
	if err != nil {
		t.Fatalf("Get(%s, %+v): %v", key, opts, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading Get(%s, %+v): %v", key, opts, err)
	}
	return data, info
}

func mustHeadBlob(t *testing.T, b store.Blobs, key string) store.BlobInfo {
	t.Helper()
	info, err := b.Head(context.Background(), key)
	if err != nil {
		t.Fatalf("Head(%s): %v", key, err)
	}
	return info
}

func wantNoBlob(t *testing.T, b store.Blobs, key string) {
	t.Helper()
	if _, err := b.Head(context.Background(), key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Head(%s) error = %v, want ErrNotFound", key, err)
	}
}

// blobKeys returns the keys of infos with prefix cut off.
func blobKeys(infos []store.BlobInfo, prefix string) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = strings.TrimPrefix(info.Key, prefix)
	}
	return out
}

func testBlobRoundTrip(t *testing.T, b store.Blobs, p string) {
	allBytes := make([]byte, 1024)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	for _, tc := range []struct {
		name     string
		key      string
		data     []byte
		opts     *store.PutOptions
		wantType string
	}{
		{"TextWithAContentType", "notes/hello.txt", []byte("héllo, wörld\n"), &store.PutOptions{ContentType: "text/plain; charset=utf-8"}, "text/plain; charset=utf-8"},
		{"EveryByteValueWithNilOptions", "bin/all-bytes", allBytes, nil, "application/octet-stream"},
		{"AnEmptyObject", "empty", []byte{}, &store.PutOptions{}, "application/octet-stream"},
		{"AKeyWithSpacesCaseAndUnicode", "Mixed Case/Résumé (final) 100%+1~.pdf", []byte("%PDF-1.7"), &store.PutOptions{ContentType: "application/pdf"}, "application/pdf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := p + tc.key
			put := mustPutBlob(t, b, key, tc.data, tc.opts)
			want := store.BlobInfo{Key: key, Size: int64(len(tc.data)), ETag: put.ETag, ContentType: tc.wantType, Modified: time.Now()}
			if put.ETag == "" {
				t.Errorf("Put returned an empty ETag")
			}
			if diff := cmp.Diff(want, put, cmpopts.EquateApproxTime(time.Minute)); diff != "" {
				t.Errorf("Put info mismatch (-want +got):\n%s", diff)
			}
			data, got := mustGetBlob(t, b, key, nil)
			if !bytes.Equal(data, tc.data) {
				t.Errorf("Get content = %q, want %q", data, tc.data)
			}
			if diff := cmp.Diff(put, got, blobCmp); diff != "" {
				t.Errorf("Get info mismatch (-put +get):\n%s", diff)
			}
			if diff := cmp.Diff(put, mustHeadBlob(t, b, key), blobCmp); diff != "" {
				t.Errorf("Head info mismatch (-put +head):\n%s", diff)
			}
		})
	}
}

func testBlobReplace(t *testing.T, b store.Blobs, p string) {
	key := p + "doc"
	one := mustPutBlob(t, b, key, []byte("version one"), &store.PutOptions{ContentType: "text/plain"})
	two := mustPutBlob(t, b, key, []byte("version two, longer"), &store.PutOptions{ContentType: "text/markdown"})
	if one.ETag == two.ETag {
		t.Errorf("ETag %q did not change when the content did", one.ETag)
	}
	data, got := mustGetBlob(t, b, key, nil)
	if string(data) != "version two, longer" {
		t.Errorf("Get after replace = %q", data)
	}
	want := store.BlobInfo{Key: key, Size: 19, ETag: two.ETag, ContentType: "text/markdown", Modified: two.Modified}
	if diff := cmp.Diff(want, got, blobCmp); diff != "" {
		t.Errorf("Get info after replace mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, mustHeadBlob(t, b, key), blobCmp); diff != "" {
		t.Errorf("Head after replace mismatch (-want +got):\n%s", diff)
	}
}

func testBlobMissing(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	mustPutBlob(t, b, p+"a/b", []byte("x"), nil) // a neighbour must not make its prefix or folder exist
	for _, key := range []string{p + "nothing-here", p + "a", p + "a/b/c", p + "a/bc"} {
		if _, _, err := b.Get(ctx, key, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s) error = %v, want ErrNotFound", key, err)
		}
		if _, _, err := b.Get(ctx, key, &store.GetOptions{Offset: 1, Length: 1}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s, a range) error = %v, want ErrNotFound", key, err)
		}
		if _, err := b.Head(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Head(%s) error = %v, want ErrNotFound", key, err)
		}
	}
}

func testBlobRanges(t *testing.T, b store.Blobs, p string) {
	const digits = "0123456789"
	full := mustPutBlob(t, b, p+"digits", []byte(digits), &store.PutOptions{ContentType: "text/plain"})
	empty := mustPutBlob(t, b, p+"empty", nil, nil)
	for _, tc := range []struct {
		name   string
		object store.BlobInfo
		opts   store.GetOptions
		want   string
	}{
		{"ZeroRangeIsTheWholeObject", full, store.GetOptions{}, digits},
		{"OffsetOnlyReadsToTheEnd", full, store.GetOptions{Offset: 3}, "3456789"},
		{"LengthOnlyReadsFromTheStart", full, store.GetOptions{Length: 4}, "0123"},
		{"OffsetAndLength", full, store.GetOptions{Offset: 2, Length: 5}, "23456"},
		{"TheLastByte", full, store.GetOptions{Offset: 9, Length: 1}, "9"},
		{"ExactlyToTheEnd", full, store.GetOptions{Offset: 6, Length: 4}, "6789"},
		{"LengthPastTheEndIsCut", full, store.GetOptions{Offset: 8, Length: 5}, "89"},
		{"HugeLengthIsCut", full, store.GetOptions{Offset: 1, Length: math.MaxInt64}, digits[1:]},
		{"OffsetAtTheEndReadsNothing", full, store.GetOptions{Offset: 10}, ""},
		{"OffsetAtTheEndWithALengthReadsNothing", full, store.GetOptions{Offset: 10, Length: 3}, ""},
		{"OffsetPastTheEndReadsNothing", full, store.GetOptions{Offset: 25, Length: 2}, ""},
		{"EmptyObjectWhole", empty, store.GetOptions{}, ""},
		{"EmptyObjectWithALength", empty, store.GetOptions{Length: 5}, ""},
		{"EmptyObjectWithAnOffset", empty, store.GetOptions{Offset: 3}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, info := mustGetBlob(t, b, tc.object.Key, &tc.opts)
			if string(data) != tc.want {
				t.Errorf("Get(%+v) = %q, want %q", tc.opts, data, tc.want)
			}
			// The info describes the whole object, not the range.
			if diff := cmp.Diff(tc.object, info, blobCmp); diff != "" {
				t.Errorf("Get(%+v) info mismatch (-want +got):\n%s", tc.opts, diff)
			}
		})
	}
	for _, opts := range []store.GetOptions{{Offset: -1}, {Length: -1}, {Offset: 2, Length: -3}} {
		if _, _, err := b.Get(context.Background(), full.Key, &opts); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Get(%+v) error = %v, want ErrInvalid", opts, err)
		}
	}
}

func testBlobIfAbsent(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	key := p + "once"
	first, err := b.Put(ctx, key, []byte("first"), &store.PutOptions{IfAbsent: true, ContentType: "text/plain"})
	if err != nil {
		t.Fatalf("first Put(if absent): %v", err)
	}
	for _, opts := range []*store.PutOptions{
		{IfAbsent: true, ContentType: "text/html"},
		{IfAbsent: true},
	} {
		if _, err := b.Put(ctx, key, []byte("second, different"), opts); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("second Put(if absent) error = %v, want ErrConditionFailed", err)
		}
	}
	data, got := mustGetBlob(t, b, key, nil)
	if string(data) != "first" {
		t.Errorf("content after a failed Put(if absent) = %q, want %q", data, "first")
	}
	if diff := cmp.Diff(first, got, blobCmp); diff != "" {
		t.Errorf("info after a failed Put(if absent) mismatch (-want +got):\n%s", diff)
	}
	// A failed put must not have left anything beside the object.
	if diff := cmp.Diff([]string{"once"}, blobKeys(ListAllBlobs(t, b, p), p)); diff != "" {
		t.Errorf("listing after a failed Put(if absent) mismatch (-want +got):\n%s", diff)
	}
	// Once the object is gone, IfAbsent writes again.
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, key, []byte("third"), &store.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("Put(if absent) after Delete: %v", err)
	}
	if data, _ := mustGetBlob(t, b, key, nil); string(data) != "third" {
		t.Errorf("content after re-creating = %q, want %q", data, "third")
	}
	// A plain put still replaces it.
	mustPutBlob(t, b, key, []byte("fourth"), nil)
	if data, _ := mustGetBlob(t, b, key, nil); string(data) != "fourth" {
		t.Errorf("content after a plain Put = %q, want %q", data, "fourth")
	}
}

// listKeys are stored by the listing tests, shown here in byte order: "-"
// (0x2d) sorts before "/" (0x2f), which sorts before letters; upper case
// before lower; "é" (0xc3 0xa9) after ASCII. A backend that walks folders
// must still interleave them this way.
var listKeys = []string{
	"a",
	"a/B",
	"a/b",
	"a/b-x",
	"a/b/c",
	"a/b/c/d",
	"a/bc",
	"a/z",
	"a/é",
	"ab",
	"b/x",
}

func testBlobListPrefix(t *testing.T, b store.Blobs, p string) {
	heads := map[string]store.BlobInfo{}
	for _, k := range listKeys {
		mustPutBlob(t, b, p+k, []byte("content of "+k), &store.PutOptions{ContentType: "text/plain"})
		heads[p+k] = mustHeadBlob(t, b, p+k)
	}
	for _, tc := range []struct {
		name   string
		prefix string
		want   []string
	}{
		{"Everything", "", listKeys},
		{"AKeyAndTheKeysBelowIt", "a", listKeys[:10]},
		{"AFolder", "a/", listKeys[1:9]},
		{"APrefixEndingMidSegment", "a/b", []string{"a/b", "a/b-x", "a/b/c", "a/b/c/d", "a/bc"}},
		{"AFolderSharingANameWithAKey", "a/b/", []string{"a/b/c", "a/b/c/d"}},
		{"AWholeKeyThatIsAlsoAFolder", "a/b/c", []string{"a/b/c", "a/b/c/d"}},
		{"ANonASCIIPrefix", "a/é", []string{"a/é"}},
		{"AnUpperCasePrefix", "a/B", []string{"a/B"}},
		{"ADeepFolder", "a/b/c/", []string{"a/b/c/d"}},
		{"NoMatch", "nothing", nil},
		{"NoMatchBelowAKey", "a/z/", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := b.List(context.Background(), p+tc.prefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			if page.Next != "" {
				t.Errorf("List returned a cursor %q with everything on one page", page.Next)
			}
			if diff := cmp.Diff(tc.want, blobKeys(page.Blobs, p), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("List(%q) mismatch (-want +got):\n%s", tc.prefix, diff)
			}
			// A listing describes each object as Head does, less the
			// content type, which S3's listing does not report.
			for _, got := range page.Blobs {
				want := heads[got.Key]
				want.ContentType = ""
				if diff := cmp.Diff(want, got, blobCmp); diff != "" {
					t.Errorf("listed info of %s mismatch (-head +list):\n%s", got.Key, diff)
				}
			}
		})
	}
}

func testBlobListPagination(t *testing.T, b store.Blobs, p string) {
	var all []string
	for i := 0; i < 20; i++ {
		all = append(all, fmt.Sprintf("p/%02d", i))
	}
	all = append(all, "p/05/x", "p/05/y", "p/12/z/z", "p/19-")
	for _, k := range all {
		mustPutBlob(t, b, p+k, []byte(k), nil)
	}
	// Keys right after the listed range: S3 (and gofakes3) may then say
	// IsTruncated on the page that holds the last key with the prefix.
	mustPutBlob(t, b, p+"p0", nil, nil)
	mustPutBlob(t, b, p+"q", nil, nil)
	want := []string{
		"p/00", "p/01", "p/02", "p/03", "p/04", "p/05", "p/05/x", "p/05/y", "p/06", "p/07", "p/08", "p/09",
		"p/10", "p/11", "p/12", "p/12/z/z", "p/13", "p/14", "p/15", "p/16", "p/17", "p/18", "p/19", "p/19-",
	}
	for _, limit := range []int{1, 2, 5, 6, 8, 23, 24, 25, store.MaxQueryLimit} {
		t.Run(fmt.Sprintf("Limit=%d", limit), func(t *testing.T) {
			opts := &store.ListOptions{Limit: limit}
			var got []string
			pages := 0
			for {
				page, err := b.List(context.Background(), p+"p/", opts)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(page.Blobs) > limit {
					t.Fatalf("page %d has %d objects, limit %d", pages, len(page.Blobs), limit)
				}
				got = append(got, blobKeys(page.Blobs, p)...)
				if page.Next != "" && len(got) == len(want) {
					t.Fatalf("page %d holds the last key and still has a cursor %q", pages, page.Next)
				}
				if page.Next == "" {
					break
				}
				if len(page.Blobs) != limit {
					t.Fatalf("page %d has %d objects and a cursor; only full pages may continue", pages, len(page.Blobs))
				}
				if pages > len(want)+1 {
					t.Fatalf("more than %d pages: the cursor does not advance", pages)
				}
				opts.Cursor = page.Next
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paged keys mismatch (-want +got):\n%s", diff)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("took %d pages, want %d", pages, wantPages)
			}
		})
	}
	t.Run("DefaultLimit", func(t *testing.T) {
		page, err := b.List(context.Background(), p+"p/", &store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Blobs) != len(want) || page.Next != "" {
			t.Errorf("List with the default limit returned %d objects and cursor %q, want %d and none", len(page.Blobs), page.Next, len(want))
		}
	})
}

// testBlobListCursorAfterChanges checks that a cursor means "after this
// key": deleting that key, or adding keys before or after it, between pages
// neither repeats nor skips a key that was there all along.
func testBlobListCursorAfterChanges(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		mustPutBlob(t, b, p+k, nil, nil)
	}
	page, err := b.List(ctx, p, &store.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k1", "k2"}, blobKeys(page.Blobs, p)); diff != "" || page.Next == "" {
		t.Fatalf("first page mismatch (-want +got):\n%s (cursor %q)", diff, page.Next)
	}
	if err := b.Delete(ctx, p+"k2"); err != nil {
		t.Fatal(err)
	}
	mustPutBlob(t, b, p+"k1a", nil, nil) // before the cursor: not seen
	mustPutBlob(t, b, p+"k2a", nil, nil) // after it: seen
	page, err = b.List(ctx, p, &store.ListOptions{Limit: 10, Cursor: page.Next})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"k2a", "k3", "k4", "k5"}, blobKeys(page.Blobs, p)); diff != "" {
		t.Errorf("second page mismatch (-want +got):\n%s", diff)
	}
}

func testBlobListInvalid(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	for _, k := range []string{"a/1", "a/2", "b/1"} {
		mustPutBlob(t, b, p+k, nil, nil)
	}
	page, err := b.List(ctx, p+"a/", &store.ListOptions{Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("List(a/, limit 1) = %v, %v; want a cursor", page, err)
	}
	for _, tc := range []struct {
		name   string
		prefix string
		opts   store.ListOptions
	}{
		{"NegativeLimit", p, store.ListOptions{Limit: -1}},
		{"LimitTooLarge", p, store.ListOptions{Limit: store.MaxQueryLimit + 1}},
		{"CursorNotBase64", p, store.ListOptions{Cursor: "not base64!"}},
		{"CursorFromAnotherPrefix", p + "b/", store.ListOptions{Cursor: page.Next}},
		{"CursorOutsideThePrefix", p + "a/", store.ListOptions{Cursor: store.EncodeCursor(p + "b/1")}},
		{"PrefixNotUTF8", p + "\xff", store.ListOptions{}},
		{"PrefixTooLong", p + strings.Repeat("x", store.MaxBlobKeyBytes), store.ListOptions{}},
	} {
		if _, err := b.List(ctx, tc.prefix, &tc.opts); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: List error = %v, want ErrInvalid", tc.name, err)
		}
	}
	// A cursor from a page of this prefix continues a wider listing too: it
	// means "after this key".
	page, err = b.List(ctx, p, &store.ListOptions{Cursor: page.Next})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/2", "b/1"}, blobKeys(page.Blobs, p)); diff != "" {
		t.Errorf("continuing a wider listing mismatch (-want +got):\n%s", diff)
	}
}

func testBlobDelete(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	for _, k := range []string{"a/b", "a/b/c", "a/bc"} {
		mustPutBlob(t, b, p+k, []byte(k), nil)
	}
	for i := 1; i <= 2; i++ {
		if err := b.Delete(ctx, p+"a/b"); err != nil {
			t.Fatalf("Delete #%d: %v", i, err)
		}
		wantNoBlob(t, b, p+"a/b")
	}
	for _, key := range []string{p + "never", p + "a", p + "a/b/c/d", p + "nope/deeper/still"} {
		if err := b.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%s) of a missing key: %v", key, err)
		}
	}
	if diff := cmp.Diff([]string{"a/b/c", "a/bc"}, blobKeys(ListAllBlobs(t, b, p), p)); diff != "" {
		t.Errorf("after deleting a/b (-want +got):\n%s", diff)
	}
	if err := b.Delete(ctx, p+"a/b/c"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/bc"}, blobKeys(ListAllBlobs(t, b, p), p)); diff != "" {
		t.Errorf("after deleting a/b/c (-want +got):\n%s", diff)
	}
	// Keys whose folders were emptied can be written again.
	mustPutBlob(t, b, p+"a/b/c", []byte("again"), nil)
	mustPutBlob(t, b, p+"a/b", []byte("again"), nil)
	if diff := cmp.Diff([]string{"a/b", "a/b/c", "a/bc"}, blobKeys(ListAllBlobs(t, b, p), p)); diff != "" {
		t.Errorf("after writing again (-want +got):\n%s", diff)
	}
}

func testBlobInvalidKeys(t *testing.T, b store.Blobs, p string) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		key  string
		// aliases are where a backend that cleaned the key up instead of
		// rejecting it might have written.
		aliases []string
	}{
		{"Empty", "", nil},
		{"ParentSegment", "../x", []string{"x"}},
		{"ParentSegmentInside", p + "a/../x", []string{p + "x"}},
		{"ParentSegmentAtTheEnd", p + "a/..", []string{p + "a", p}},
		{"EmptySegment", p + "a//b", []string{p + "a/b"}},
		{"Absolute", "/" + p + "abs", []string{p + "abs"}},
		{"AbsoluteShort", "/abs", []string{"abs"}},
		{"DotSegment", p + "a/./b", []string{p + "a/b"}},
		{"TrailingSlash", p + "dir/", []string{p + "dir"}},
		{"Backslash", p + `a\b`, []string{p + "a/b"}},
		{"NULByte", p + "a\x00b", []string{p + "a"}},
		{"NotUTF8", p + "\xff\xfe", nil},
		{"TooLong", p + strings.Repeat("k", store.MaxBlobKeyBytes), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []*store.PutOptions{nil, {IfAbsent: true}} {
				if _, err := b.Put(ctx, tc.key, []byte("nope"), opts); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("Put(%q, %+v) error = %v, want ErrInvalid", tc.key, opts, err)
				}
			}
			if _, _, err := b.Get(ctx, tc.key, nil); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Get(%q) error = %v, want ErrInvalid", tc.key, err)
			}
			if _, err := b.Head(ctx, tc.key); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Head(%q) error = %v, want ErrInvalid", tc.key, err)
			}
			if err := b.Delete(ctx, tc.key); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Delete(%q) error = %v, want ErrInvalid", tc.key, err)
			}
			for _, alias := range tc.aliases {
				if alias == p {
					continue
				}
				wantNoBlob(t, b, alias)
			}
		})
	}
	if got := ListAllBlobs(t, b, p); len(got) != 0 {
		t.Errorf("after invalid puts the prefix holds %v, want nothing", blobKeys(got, p))
	}
}

func testBlobInvalidContentType(t *testing.T, b store.Blobs, p string) {
	for _, ct := range []string{"text/plain\r\nX-Injected: 1", "text/plain; name=résumé", strings.Repeat("x", 2000)} {
		if _, err := b.Put(context.Background(), p+"typed", []byte("x"), &store.PutOptions{ContentType: ct}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Put with content type %.40q error = %v, want ErrInvalid", ct, err)
		}
	}
	wantNoBlob(t, b, p+"typed")
}

func testBlobCanceled(t *testing.T, b store.Blobs, p string) {
	mustPutBlob(t, b, p+"there", []byte("x"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"Put", func() error { _, err := b.Put(ctx, p+"new", []byte("x"), nil); return err }},
		{"PutIfAbsent", func() error {
			_, err := b.Put(ctx, p+"new", []byte("x"), &store.PutOptions{IfAbsent: true})
			return err
		}},
		{"Get", func() error {
			rc, _, err := b.Get(ctx, p+"there", nil)
			if err == nil {
				rc.Close()
			}
			return err
		}},
		{"Head", func() error { _, err := b.Head(ctx, p+"there"); return err }},
		{"List", func() error { _, err := b.List(ctx, p, nil); return err }},
		{"Delete", func() error { return b.Delete(ctx, p+"there") }},
	} {
		if err := tc.op(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: error = %v, want context.Canceled", tc.name, err)
		}
	}
	wantNoBlob(t, b, p+"new")
	mustHeadBlob(t, b, p+"there")
}

func testBlobConcurrentWriters(t *testing.T, b store.Blobs, p string) {
	const writers = 50
	ctx := context.Background()
	content := func(i int) []byte { return []byte(strings.Repeat(fmt.Sprintf("writer %d;", i), i+1)) }
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Nested keys, several writers per folder, so that folder
			// creation races too.
			_, err := b.Put(ctx, fmt.Sprintf("%sw/%d/%03d", p, i%5, i), content(i), nil)
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Put: %v", err)
		}
	}
	got := ListAllBlobs(t, b, p+"w/")
	if len(got) != writers {
		t.Fatalf("after %d concurrent writers the prefix holds %d objects", writers, len(got))
	}
	for i := 0; i < writers; i++ {
		key := fmt.Sprintf("%sw/%d/%03d", p, i%5, i)
		if data, _ := mustGetBlob(t, b, key, nil); !bytes.Equal(data, content(i)) {
			t.Errorf("Get(%s) = %d bytes, want %d", key, len(data), len(content(i)))
		}
	}
}

func testBlobConcurrentIfAbsent(t *testing.T, b store.Blobs, p string) {
	const keys, writers = 5, 16
	ctx := context.Background()
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("%sonce/%d", p, k)
		var wg sync.WaitGroup
		errs := make([]error, writers)
		start := make(chan struct{})
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = b.Put(ctx, key, []byte(fmt.Sprintf("writer %d", i)), &store.PutOptions{IfAbsent: true})
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: writers %d and %d both won", key, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConditionFailed):
				t.Fatalf("%s: writer %d error = %v, want nil or ErrConditionFailed", key, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no writer won", key)
		}
		if data, _ := mustGetBlob(t, b, key, nil); string(data) != fmt.Sprintf("writer %d", winner) {
			t.Errorf("%s holds %q, but writer %d won", key, data, winner)
		}
	}
}
