// Package lambdagateway runs the gateway inside Lambda, behind API Gateway
// (a streaming REST API or an HTTP API, package apigw):
// it reads the configuration from the environment, opens the table (for API
// keys) and the invoker of the stack's functions at cold start, and serves
// API Gateway events until Lambda shuts it down, writing a metric record of
// each invocation, of each call its limits refuse and of each function that
// fails outright (package metrics). Garbage collection waits until the
// first answer (package coldstart).
//
//	func main() { os.Exit(lambdagateway.Main(catalog.Default())) }
//
// It is apart from package launch, which also runs the tool functions and
// the local one-process server, so that the deployed gateway (built with
// -tags lambda.norpc, as functions/gateway's lambda.go is) links only what
// it uses: the catalog, the gateway, the DynamoDB and Lambda clients. Every
// package linked costs its initialisers at each cold start.
package lambdagateway

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/switchboard-dev/switchboard/shared/apigw"
	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/coldstart"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/authz"
	"github.com/switchboard-dev/switchboard/shared/config/invoker"
	"github.com/switchboard-dev/switchboard/shared/config/secrets"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Main runs the gateway serving cat inside Lambda and returns the process's
// exit code: 1, with the error on stderr, when the configuration or cat is
// wrong. Outside Lambda (no AWS_LAMBDA_RUNTIME_API) it says how to run the
// local server instead and returns 2.
func Main(cat *catalog.Catalog) int {
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") == "" {
		fmt.Fprintln(os.Stderr, "switchboard: this build of the gateway (-tags lambda.norpc) runs only inside Lambda; serve locally with: go run ./functions/gateway")
		return 2
	}
	if err := Run(cat); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		return 1
	}
	return 0
}

// Run serves the gateway of cat inside Lambda: it reads the configuration
// from the environment and returns an error if it is wrong; otherwise it
// never returns (lambda.Start does not).
func Run(cat *catalog.Catalog) error {
	cfg := config.FromEnv(os.Getenv)
	resume := coldstart.PauseGC(cfg.MemoryMB)
	logger := lambdacontext.NewLogger()
	slog.SetDefault(logger)
	ctx := context.Background()
	if cfg.FunctionPrefix == "" {
		return fmt.Errorf("%s is required: the prefix of the tool functions' names", config.EnvFunctionPrefix)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	table, _, err := cfg.OpenTable(ctx, os.Stderr)
	if err != nil {
		return err
	}
	inv, err := invoker.Open(ctx, &cfg)
	if err != nil {
		return err
	}
	m := metrics.New(os.Stdout)
	if raw, ok := inv.(invoke.RawInvoker); ok {
		inv = &measuredInvoker{inv: raw, cat: cat, m: m}
	}
	// The request-state keys come from Secrets Manager, read once here: the
	// environment holds only the secret's ARN.
	if err := secrets.Resolve(ctx, &cfg, config.EnvRequestStateKeys, &cfg.RequestStateKeys); err != nil {
		return err
	}
	states, err := cfg.OpenKeyring()
	if err != nil {
		return err
	}
	opts := gateway.Options{
		Catalog:        cat,
		Invoker:        inv,
		Keys:           apikey.New(table, nil),
		AllowedOrigins: cfg.AllowedOrigins,
		Logger:         logger,
		RequestStates:  states,
		Metrics:        m,
		Approvals:      gateway.ConnectorApprovals(cat, inv),
		// tool_search embeds through vector_embed_texts when the stack's
		// embedder is a hosted one (the offline one's hashes add nothing a
		// function call is worth).
		ToolEmbedFunction: cfg.Providers.Embedder != "" && cfg.Providers.Embedder != "offline",
	}
	limits, limited, err := ratelimit.Configured(cfg.RateLimits, cat)
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvRateLimits, err)
	}
	// The facade's signing keys come from Secrets Manager, read once here.
	if err := secrets.Resolve(ctx, &cfg, config.EnvOAuthSigningKeys, &cfg.OAuth.SigningKeys); err != nil {
		return err
	}
	if opts.OAuth, err = authz.Open(cfg.OAuth, table, states, logger); err != nil {
		return err
	}
	if limited {
		opts.Limiter = ratelimit.New(table, &ratelimit.Options{Defaults: &limits, Logger: logger})
	}
	if cfg.AnonymousTenant != "" {
		fmt.Fprintf(os.Stderr, "WARNING: %s=%s: requests without an API key act for that tenant\n", config.EnvAnonymousTenant, cfg.AnonymousTenant)
		opts.Anonymous = &tenant.Caller{Tenant: cfg.AnonymousTenant, Principal: "anonymous"}
	}
	gw, err := gateway.New(opts)
	if err != nil {
		return err
	}
	// Either front door: an HTTP API's events are answered buffered, a
	// streaming REST API's as a stream (the template's FrontDoor).
	lambda.Start(coldstart.ResumeAfterFirstFunc(measure(apigw.Serve(gw.Handler()), m), resume))
	return nil
}
