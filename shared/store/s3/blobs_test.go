package s3_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
	"github.com/switchboard-dev/switchboard/shared/store/storetest"
)

func TestBlobs(t *testing.T) {
	storetest.RunBlobs(t, storetest.OpenFakeS3(t))
}

// scripted returns the s3 backend on a server that answers with h, for
// behaviour gofakes3 never shows.
func scripted(t *testing.T, h http.HandlerFunc) *s3.Blobs {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("id", "secret", ""),
		HTTPClient:   srv.Client(),
	})
	return s3.New(client, "bucket")
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if code != "" {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>scripted</Message></Error>`, code)
	}
}

func TestConditionalRequestConflictIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		conflicts int32
		wantErr   error
	}{
		{"ThenSucceeds", 2, nil},
		{"ThenSomeoneElseWon", 1000, store.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			b := scripted(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPut || r.Header.Get("If-None-Match") != "*" {
					t.Errorf("got %s with If-None-Match %q, want a PUT with *", r.Method, r.Header.Get("If-None-Match"))
				}
				if calls.Add(1) <= tc.conflicts {
					s3Error(w, http.StatusConflict, "ConditionalRequestConflict")
					return
				}
				w.Header().Set("ETag", `"abc"`)
			})
			info, err := b.Put(context.Background(), "k", []byte("v"), &store.PutOptions{IfAbsent: true})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Put error = %v, want %v", err, tc.wantErr)
			}
			if err == nil && info.ETag != "abc" {
				t.Errorf("ETag = %q, want the unquoted %q", info.ETag, "abc")
			}
			if tc.wantErr == nil && calls.Load() != tc.conflicts+1 {
				t.Errorf("%d calls, want %d", calls.Load(), tc.conflicts+1)
			}
		})
	}
}

func TestAPreconditionFailedWithoutABodyIsErrConditionFailed(t *testing.T) {
	b := scripted(t, func(w http.ResponseWriter, r *http.Request) { s3Error(w, http.StatusPreconditionFailed, "") })
	if _, err := b.Put(context.Background(), "k", []byte("v"), &store.PutOptions{IfAbsent: true}); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Put error = %v, want ErrConditionFailed", err)
	}
}

func TestAMissingBucketIsNotErrNotFound(t *testing.T) {
	b := scripted(t, func(w http.ResponseWriter, r *http.Request) { s3Error(w, http.StatusNotFound, "NoSuchBucket") })
	_, _, err := b.Get(context.Background(), "k", nil)
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "s3: get object k: ") {
		t.Fatalf("Get from a missing bucket: error = %v, want an s3: get object error that is not ErrNotFound", err)
	}
}

type listResult struct {
	XMLName               xml.Name `xml:"ListBucketResult"`
	IsTruncated           bool
	NextContinuationToken string `xml:",omitempty"`
	Contents              []listEntry
}

type listEntry struct {
	Key          string
	Size         int64
	ETag         string
	LastModified string
}

// TestListFillsPagesFromShortS3Pages serves a bucket whose ListObjectsV2
// returns at most three keys a call, always saying IsTruncated while any key
// follows in the bucket (as S3 may): List must fill its pages across calls
// and set Next only when a key with the prefix remains.
func TestListFillsPagesFromShortS3Pages(t *testing.T) {
	var keys []string
	for i := 0; i < 11; i++ {
		keys = append(keys, fmt.Sprintf("p/%02d", i))
	}
	keys = append(keys, "q/after")
	sort.Strings(keys)
	var calls atomic.Int32
	b := scripted(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		q := r.URL.Query()
		after := q.Get("start-after")
		if tok := q.Get("continuation-token"); tok != "" {
			after = tok
		}
		max, _ := strconv.Atoi(q.Get("max-keys"))
		max = min(max, 3)
		var res listResult
		last := after
		for _, k := range keys {
			if k <= after || !strings.HasPrefix(k, q.Get("prefix")) {
				continue
			}
			if len(res.Contents) == max {
				break
			}
			res.Contents = append(res.Contents, listEntry{Key: k, Size: 1, ETag: `"e"`, LastModified: "2025-01-02T03:04:05.000Z"})
			last = k
		}
		// Like gofakes3: truncated whenever a full page is followed by any
		// key in the bucket, with the prefix or not.
		if len(res.Contents) == max && keys[len(keys)-1] > last {
			res.IsTruncated = true
			res.NextContinuationToken = last
		}
		w.Header().Set("Content-Type", "application/xml")
		xml.NewEncoder(w).Encode(res)
	})
	for _, limit := range []int{1, 4, 5, 11, 12} {
		t.Run(fmt.Sprintf("Limit=%d", limit), func(t *testing.T) {
			var got []string
			opts := &store.ListOptions{Limit: limit}
			pages := 0
			for {
				page, err := b.List(context.Background(), "p/", opts)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, info := range page.Blobs {
					got = append(got, info.Key)
					if info.ETag != "e" || info.Size != 1 || !info.Modified.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
						t.Errorf("listed info %+v", info)
					}
				}
				if page.Next == "" {
					break
				}
				if len(page.Blobs) != limit {
					t.Fatalf("page %d has %d keys and a cursor, limit %d", pages, len(page.Blobs), limit)
				}
				opts.Cursor = page.Next
			}
			if diff := cmp.Diff(keys[:11], got); diff != "" {
				t.Errorf("listed keys mismatch (-want +got):\n%s", diff)
			}
			if want := (11 + limit - 1) / limit; pages != want {
				t.Errorf("took %d pages, want %d", pages, want)
			}
		})
	}
}
