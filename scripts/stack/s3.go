package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// s3Subscriber is a function the bucket notifies of object events.
type s3Subscriber struct {
	name   string
	invoke invokeFunc
	event  S3Event
}

// s3StandIn is the S3 stand-in: gofakes3 in memory (path-style requests, as
// the SDK sends them to an endpoint on 127.0.0.1), plus what gofakes3 lacks,
// the bucket's event notifications: after a PutObject or DeleteObject
// succeeds, each subscribed function whose events and key prefix match is
// invoked asynchronously, as S3 invokes it, with the S3 event record S3
// sends (the key URL-encoded). The bucket is not versioned, so a delete is
// ObjectRemoved:Delete.
type s3StandIn struct {
	fake   http.Handler
	bucket string
	region string
	subs   []s3Subscriber
	seq    atomic.Int64
	meter  *meter // counts the requests, if not nil
	logger *slog.Logger
}

func newS3StandIn(bucket, region string, subs []s3Subscriber, m *meter, logger *slog.Logger) (*s3StandIn, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		return nil, fmt.Errorf("s3 stand-in: creating bucket %s: %w", bucket, err)
	}
	return &s3StandIn{fake: gofakes3.New(backend).Server(), bucket: bucket, region: region, subs: subs, meter: m, logger: logger}, nil
}

func (s *s3StandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.meter != nil {
		s.meter.s3Request(r)
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.fake.ServeHTTP(rec, r)
	bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || key == "" || bucket != s.bucket || rec.status/100 != 2 || !objectOperation(r.URL.Query()) {
		return
	}
	var name string
	switch {
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "":
		name = "ObjectCreated:Put"
	case r.Method == http.MethodPut:
		name = "ObjectCreated:Copy"
	case r.Method == http.MethodDelete:
		name = "ObjectRemoved:Delete"
	default:
		return
	}
	s.notify(name, key, r.ContentLength, strings.Trim(rec.Header().Get("ETag"), `"`))
}

// objectOperation reports whether a request with query q writes or deletes
// the object itself (PutObject, CopyObject, DeleteObject; the SDK adds
// x-id=PutObject), not a part of an upload or one of its subresources.
func objectOperation(q url.Values) bool {
	for k := range q {
		if k != "x-id" && k != "versionId" {
			return false
		}
	}
	return true
}

// notify invokes the subscribers of the event name on key.
func (s *s3StandIn) notify(name, key string, size int64, etag string) {
	now := time.Now().UTC()
	for _, sub := range s.subs {
		if !strings.HasPrefix(key, sub.event.Prefix) || !matchesEvent(sub.event.Events, "s3:"+name) {
			continue
		}
		rec := events.S3EventRecord{
			EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: s.region, EventTime: now, EventName: name,
			PrincipalID:       events.S3UserIdentity{PrincipalID: "AWS:STACK"},
			RequestParameters: events.S3RequestParameters{SourceIPAddress: "127.0.0.1"},
			S3: events.S3Entity{
				SchemaVersion: "1.0", ConfigurationID: sub.name,
				Bucket: events.S3Bucket{Name: s.bucket, Arn: "arn:aws:s3:::" + s.bucket},
				Object: events.S3Object{Key: strings.ReplaceAll(url.QueryEscape(key), "%2F", "/"), Size: max(size, 0), ETag: etag, Sequencer: fmt.Sprintf("%018X", s.seq.Add(1))},
			},
		}
		payload, _ := json.Marshal(events.S3Event{Records: []events.S3EventRecord{rec}})
		go func() {
			res, err := sub.invoke(context.Background(), payload)
			if err == nil && res.Error != nil {
				err = res.Error
			}
			if err != nil {
				s.logger.Error("s3 stand-in: notification failed", "function", sub.name, "event", name, "key", key, "error", err)
			}
		}()
	}
}

// matchesEvent reports whether a notification's event types (such as
// s3:ObjectCreated:*) include the event name (such as s3:ObjectCreated:Put).
func matchesEvent(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}
