// Package config is the one place that reads Switchboard's environment and
// turns it into stores and providers: embedded files on a laptop, DynamoDB
// and S3 inside Lambda, DynamoDB Local and S3-compatible servers in tests.
// Every ephemeral or offline choice is announced once, on stderr, with a
// WARNING: line.
//
//	cfg := config.FromEnv(os.Getenv)
//	if err := cfg.Validate(); err != nil { ... }      // errors name the variable
//	deps, closeFn, err := cfg.Open(ctx, os.Stderr)     // a lambdafn.Deps with the stores
package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/store/dynamo"
	"github.com/switchboard-dev/switchboard/shared/store/embedded"
	"github.com/switchboard-dev/switchboard/shared/store/localfs"
	"github.com/switchboard-dev/switchboard/shared/store/s3"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// The environment variables Switchboard reads. README's configuration table lists them.
const (
	EnvTable           = "SWITCHBOARD_TABLE"
	EnvBucket          = "SWITCHBOARD_BUCKET"
	EnvFunctionPrefix  = "SWITCHBOARD_FUNCTION_PREFIX"
	EnvAllowedOrigins  = "SWITCHBOARD_ALLOWED_ORIGINS"
	EnvAnonymousTenant = "SWITCHBOARD_ANONYMOUS_TENANT"
)

// FilePrefix marks a store setting that names a local path instead of an AWS resource.
const FilePrefix = "file:"

// Config is Switchboard's configuration.
type Config struct {
	// Table is the DynamoDB table name, or file:PATH for an embedded table file.
	Table string
	// Bucket is the S3 bucket name, or file:DIR for a local folder. If empty,
	// functions get no blob store (the memory functions need none).
	Bucket string
	// FunctionPrefix begins the name of every tool function; the gateway on
	// AWS, and a function that invokes others, invokes <FunctionPrefix><function
	// name>.
	FunctionPrefix string
	// AllowedOrigins are the browser origins the gateway accepts.
	AllowedOrigins []string
	// AnonymousTenant, if set, is the tenant of gateway requests that carry no
	// API key; if empty, such requests are refused.
	AnonymousTenant string
	// InLambda reports that the process runs inside AWS Lambda.
	InLambda bool
	// Providers chooses the embedder and generator (providers.go).
	Providers Providers
	// PipelineARN is the RAG pipeline state machine's ARN (config/pipeline.go).
	PipelineARN string

	aws *aws.Config // loaded once, by AWS
}

// FromEnv reads a Config through getenv (os.Getenv, or a map's lookup in tests).
func FromEnv(getenv func(string) string) Config {
	c := Config{
		Table:           getenv(EnvTable),
		Bucket:          getenv(EnvBucket),
		FunctionPrefix:  getenv(EnvFunctionPrefix),
		AnonymousTenant: getenv(EnvAnonymousTenant),
		InLambda:        getenv("AWS_LAMBDA_FUNCTION_NAME") != "",
		Providers:       providersFromEnv(getenv),
		PipelineARN:     getenv(EnvPipelineARN),
	}
	for _, o := range strings.Split(getenv(EnvAllowedOrigins), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	return c
}

// Local returns the configuration of a laptop: everything embedded under dir.
func Local(dir string) Config {
	return Config{
		Table:           FilePrefix + filepath.Join(dir, "switchboard.db"),
		Bucket:          FilePrefix + filepath.Join(dir, "blobs"),
		AnonymousTenant: tenant.Local,
	}
}

// Validate checks c, naming the variable at fault.
func (c Config) Validate() error {
	var errs []error
	if c.Table == "" || c.Table == FilePrefix {
		errs = append(errs, fmt.Errorf("%s is required: a DynamoDB table name, or %s/path/to/switchboard.db for an embedded file", EnvTable, FilePrefix))
	}
	if c.Bucket == FilePrefix {
		errs = append(errs, fmt.Errorf("%s: %s needs a folder after it", EnvBucket, FilePrefix))
	}
	if c.AnonymousTenant != "" {
		if err := tenant.Validate(c.AnonymousTenant); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvAnonymousTenant, err))
		}
	}
	for _, o := range c.AllowedOrigins {
		if !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://") {
			errs = append(errs, fmt.Errorf("%s: %q is not an origin like https://app.example.com", EnvAllowedOrigins, o))
		}
	}
	errs = append(errs, c.Providers.validate()...)
	errs = append(errs, c.validatePipeline())
	return errors.Join(errs...)
}

// AWS returns the AWS SDK configuration (region, credentials, and endpoint
// overrides such as AWS_ENDPOINT_URL_DYNAMODB), loading it from the
// environment the first time: a cold start pays for it once.
func (c *Config) AWS(ctx context.Context) (aws.Config, error) {
	if c.aws == nil {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return aws.Config{}, fmt.Errorf("config: loading AWS configuration: %w", err)
		}
		c.aws = &cfg
	}
	return *c.aws, nil
}

// OpenTable opens the table c names. The returned function closes it.
func (c *Config) OpenTable(ctx context.Context, warn io.Writer) (store.Table, func() error, error) {
	if c.Table == "" || c.Table == FilePrefix {
		return nil, nil, fmt.Errorf("%s is required: a DynamoDB table name, or %s/path/to/switchboard.db for an embedded file", EnvTable, FilePrefix)
	}
	path, ok := strings.CutPrefix(c.Table, FilePrefix)
	if !ok {
		cfg, err := c.AWS(ctx)
		if err != nil {
			return nil, nil, err
		}
		return dynamo.New(dynamodb.NewFromConfig(cfg), c.Table), func() error { return nil }, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", EnvTable, err)
	}
	t, err := embedded.Open(path, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", EnvTable, err)
	}
	if c.InLambda {
		fmt.Fprintf(warn, "WARNING: %s is the embedded file %s: its data lasts only as long as this Lambda environment\n", EnvTable, path)
	}
	return t, t.Close, nil
}

// OpenBlobs opens the blob store c names, or returns nil if it names none.
func (c *Config) OpenBlobs(ctx context.Context) (store.Blobs, error) {
	dir, ok := strings.CutPrefix(c.Bucket, FilePrefix)
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

// OpenInvoker returns the invoker of the functions FunctionPrefix names,
// through the Lambda API, or nil if it names none.
func (c *Config) OpenInvoker(ctx context.Context) (invoke.Invoker, error) {
	if c.FunctionPrefix == "" {
		return nil, nil
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return invoke.NewLambda(awslambda.NewFromConfig(cfg), c.FunctionPrefix), nil
}

// Open builds the stores and providers c names, as a function's handler
// needs them. The returned function closes what needs closing. Offline and
// ephemeral choices are announced on warn.
func (c *Config) Open(ctx context.Context, warn io.Writer) (lambdafn.Deps, func() error, error) {
	if err := c.Validate(); err != nil {
		return lambdafn.Deps{}, nil, err
	}
	table, closeFn, err := c.OpenTable(ctx, warn)
	if err != nil {
		return lambdafn.Deps{}, nil, err
	}
	blobs, err := c.OpenBlobs(ctx)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	embedder, generator, err := c.OpenProviders(ctx, warn)
	if err != nil {
		closeFn()
		return lambdafn.Deps{}, nil, err
	}
	runner, err := c.OpenPipeline(ctx)
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
