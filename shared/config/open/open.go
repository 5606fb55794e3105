// Package open opens what a tool function needs beyond the table, from a
// [config.Config]: the blob store (a local folder or S3), the embedder and
// generator (offline, Bedrock or an OpenAI-compatible API) and the RAG
// pipeline's runner (Step Functions). It is apart from package config so
// that the gateway's Lambda, which needs only the table and the invoker,
// links none of these clients: each AWS service client costs milliseconds
// of package initialisation at every cold start.
//
//	cfg := config.FromEnv(os.Getenv)
//	deps, closeFn, err := open.Deps(ctx, &cfg, os.Stderr) // validates cfg first
//	if err != nil { ... }                                  // errors name the variable
//	lambda.StartWithOptions(handler(deps), lambda.WithEnableSIGTERM(func() { closeFn() }))
package open

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
)

// Validate checks c as [config.Config.Validate] does, and the providers it
// names too (models, dimensions, URLs), without I/O, naming the variable at
// fault.
func Validate(c *config.Config) error {
	errs := []error{c.Validate()}
	errs = append(errs, validateProviders(c.Providers)...)
	return errors.Join(errs...)
}

// Blobs opens the blob store c names, or returns nil if it names none.
func Blobs(ctx context.Context, c *config.Config) (store.Blobs, error) {
	dir, ok := strings.CutPrefix(c.Bucket, config.FilePrefix)
	switch {
	case c.Bucket == "":
		return nil, nil
	case ok:
		return localfs.New(dir), nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return s3.New(awss3.NewFromConfig(cfg), c.Bucket), nil
}

// Deps builds the stores and providers c names, as a function's handler
// needs them, after validating c ([Validate]). The returned function closes
// what needs closing. Offline and ephemeral choices are announced on warn.
func Deps(ctx context.Context, c *config.Config, warn io.Writer) (lambdafn.Deps, func() error, error) {
	if err := Validate(c); err != nil {
		return lambdafn.Deps{}, nil, err
	}
	table, closeFn, err := c.OpenTable(ctx, warn)
	if err != nil {
		return lambdafn.Deps{}, nil, err
	}
	blobs, err := Blobs(ctx, c)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	embedder, generator, err := Providers(ctx, c, warn)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	runner, err := Pipeline(ctx, c)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	invoker, err := c.OpenInvoker(ctx)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	fmt.Fprintf(warn, "WARNING: summaries come from the offline extractive summariser (provider %q, model %q): no language model is configured\n", offline.Name, offline.Model)
	return lambdafn.Deps{Table: table, Blobs: blobs, Summarizer: offline.Summarizer{}, Embedder: embedder, Generator: generator, Pipeline: runner, Invoker: invoker}, closeFn, nil
}
