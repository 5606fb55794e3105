package storetest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
)

// A BlobBackend opens a [store.Blobs] for one test; it is closed or cleaned
// up by the test's cleanup functions.
type BlobBackend struct {
	Name string
	Open func(t *testing.T) store.Blobs
}

// BlobBackends returns every Blobs backend this test run can reach. Both are
// always there: localfs in a temporary folder, and s3 against gofakes3, an
// S3 server that runs inside the test process.
func BlobBackends(t *testing.T) []BlobBackend {
	t.Helper()
	return []BlobBackend{
		{Name: "localfs", Open: OpenLocalFS},
		{Name: "s3", Open: OpenFakeS3},
	}
}

// EachBlobs runs fn once per backend in [BlobBackends], each in its own
// subtest named after the backend.
func EachBlobs(t *testing.T, fn func(t *testing.T, b store.Blobs)) {
	t.Helper()
	for _, be := range BlobBackends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Logf("blob backend: %s", be.Name)
			fn(t, be.Open(t))
		})
	}
}

// OpenLocalFS opens a localfs store in a temporary folder.
func OpenLocalFS(t *testing.T) store.Blobs {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blobs")
	b := localfs.New(dir)
	t.Cleanup(func() { b.Close() })
	t.Logf("localfs folder: %s", dir)
	return b
}

// OpenFakeS3 starts gofakes3 on an httptest server, creates a bucket, and
// returns the s3 backend on it, talking to it as to S3: path-style
// addressing, static credentials, region us-east-1.
func OpenFakeS3(t *testing.T) store.Blobs {
	t.Helper()
	faker := gofakes3.New(s3mem.New())
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("test-key-id", "test-secret", ""),
		HTTPClient:   srv.Client(),
	})
	const bucket = "switchboard-test"
	if _, err := client.CreateBucket(context.Background(), &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("creating bucket %s on gofakes3: %v", bucket, err)
	}
	t.Logf("s3 endpoint: gofakes3 in process at %s, bucket %s", srv.URL, bucket)
	return s3.New(client, bucket)
}
