// Package blobs opens the blob store a [config.Config] names: a local folder
// (file:DIR) or an S3 bucket. It is a package of its own so that only the
// functions with blob access link the S3 client, whose initialisation every
// binary linking it pays at cold start.
//
//	b, err := blobs.Open(ctx, &cfg) // nil if cfg names no bucket
package blobs

import (
	"context"
	"strings"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
)

// Open opens the blob store c names, or returns nil if it names none.
func Open(ctx context.Context, c *config.Config) (store.Blobs, error) {
	dir, ok := strings.CutPrefix(c.Bucket, config.FilePrefix)
	switch {
	case c.Bucket == "":
		return nil, nil
	case ok:
		return localfs.New(dir), nil
	}
	cfg, err := c.StorageAWS(ctx)
	if err != nil {
		return nil, err
	}
	return s3.New(awss3.NewFromConfig(cfg), c.Bucket), nil
}
