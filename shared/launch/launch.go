// Package launch starts the gateway ([Gateway]), which runs either inside
// Lambda behind API Gateway (package launch/lambdagateway) or, on a laptop, as
// one process serving every function with embedded storage (package local).
// The deployed gateway, built with -tags lambda.norpc, calls
// launch/lambdagateway alone, so as not to link every function's code; a
// tool function's main calls lambdafn.Start.
package launch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/apikey/admin"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/authz"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/connectors"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/search"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/launch/lambdagateway"
	"github.com/switchboard-dev/switchboard/shared/local"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Extras are catalog entries and functions added to the default ones, as the
// conformance build of the gateway adds its fixtures.
type Extras struct {
	Tools     []*catalog.Tool
	Resources []*catalog.Resource
	Prompts   []*catalog.Prompt
	Functions []lambdafn.Function
}

// Catalog returns the default catalog with x's entries added.
func (x Extras) Catalog() (*catalog.Catalog, error) {
	def := catalog.Default()
	if len(x.Tools)+len(x.Resources)+len(x.Prompts) == 0 {
		return def, nil
	}
	return catalog.New(slices.Concat(def.Tools(), x.Tools), slices.Concat(def.Resources(), x.Resources), slices.Concat(def.Prompts(), x.Prompts))
}

// Gateway runs the gateway with command-line args and returns the process's
// exit code. Inside Lambda it serves API Gateway events and invokes the tool
// functions through the Lambda API; elsewhere it serves HTTP (or, with
// --stdio, stdin and stdout) and runs every function in process.
func Gateway(args []string, extras Extras) int {
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		cat, err := extras.Catalog()
		if err == nil {
			err = lambdagateway.Run(cat)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "switchboard:", err)
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("switchboard", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to serve HTTP on")
	data := fs.String("data", ".switchboard", "`folder` for the embedded table and blobs")
	stdio := fs.Bool("stdio", false, "serve MCP on stdin and stdout instead of HTTP, for desktop hosts")
	showVersion := fs.Bool("version", false, "print the version (module version, commit) and exit")
	connectorHosts := fs.String("allow-connector-hosts", os.Getenv(config.EnvConnectorAllowedHosts), "comma-separated `hosts` connectors may reach whatever they resolve to, such as 127.0.0.1,localhost (default $"+config.EnvConnectorAllowedHosts+")")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./functions/gateway [--addr HOST:PORT] [--data DIR] [--stdio] [--allow-connector-hosts HOSTS] [--version]\n\nServes Switchboard locally with embedded storage and offline providers.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Println(version())
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localGateway(ctx, *addr, *data, *stdio, *connectorHosts, extras, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		return 1
	}
	return 0
}

// localGateway serves everything in one process until ctx is done.
// connectorHosts are the hosts connectors may reach whatever they resolve to.
func localGateway(ctx context.Context, addr, data string, stdio bool, connectorHosts string, extras Extras, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if raw := os.Getenv(config.EnvLogLevel); raw != "" {
		if err := level.UnmarshalText([]byte(raw)); err != nil {
			return fmt.Errorf("%s: %q is not a level: use debug, info, warn or error", config.EnvLogLevel, raw)
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg := config.Local(data)
	if name := os.Getenv(config.EnvTable); name != "" {
		cfg.Table = name // a DynamoDB table (AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local) or another file
	}
	if spec, set := os.LookupEnv(config.EnvRateLimits); set {
		cfg.RateLimits = spec
	}
	cfg.OAuth = config.OAuthFromEnv(os.Getenv)
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.ConnectorAllowedHosts, cfg.ConnectorCacheTTL = connectorHosts, os.Getenv(config.EnvConnectorCacheTTL)
	cfg.WebSearch = config.WebSearchFromEnv(os.Getenv)
	cfg.WebSearch.AllowHTTP = true
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, MultiVector: providers.OpenMultiVector, Connectors: connectors.Open, WebSearch: search.Open}, stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintln(stderr, lambdafn.OfflineSummariesWarning)
	deps.Logger = logger
	cat, err := extras.Catalog()
	if err != nil {
		return err
	}
	// Every function in this process, the pipeline's steps and the
	// retriever's search workers invoked through the same stack.
	stack, err := local.New(local.Options{Catalog: cat, Deps: deps, Functions: append(handlers.All(), extras.Functions...)})
	if err != nil {
		return err
	}
	defer closeStack(stack, stderr)
	stopSync, err := syncConnectors(ctx, deps)
	if err != nil {
		return err
	}
	defer stopSync()
	keys := apikey.New(deps.Table, nil)
	states, err := cfg.OpenKeyring()
	if err != nil {
		return err
	}
	opts := gateway.Options{
		Catalog:           cat,
		Invoker:           stack,
		Keys:              keys,
		KeyCacheTTL:       -1, // the table is in process: a revoked key is refused at once
		AllowLocalOrigins: true,
		Logger:            logger,
		RequestStates:     states,
		Approvals:         gateway.ConnectorApprovals(cat, stack),
		ToolEmbedder:      deps.Embedder, // tool_search's embeddings: the deployed gateway links no provider
	}
	limits, limited, err := ratelimit.Configured(cfg.RateLimits, cat)
	if err != nil {
		return fmt.Errorf("%s: %w", config.EnvRateLimits, err)
	}
	if opts.OAuth, err = authz.Open(cfg.OAuth, deps.Table, states, logger); err != nil {
		return err
	}
	if limited {
		opts.Limiter = ratelimit.New(deps.Table, &ratelimit.Options{Defaults: &limits, Logger: logger})
	}
	haveKeys, err := keys.Any(ctx)
	if err != nil {
		return err
	}
	anonymous := &tenant.Caller{Tenant: tenant.Local, Principal: "local"}
	switch {
	case stdio:
		fmt.Fprintf(stderr, "WARNING: stdio has no authentication: every request acts for tenant %q\n", tenant.Local)
		opts.Anonymous = anonymous
	case !haveKeys:
		fmt.Fprintf(stderr, "WARNING: no API key is configured: every request acts for tenant %q (create one with: go run ./scripts/apikey create --data %s --tenant NAME --principal WHO)\n", tenant.Local, data)
		opts.Anonymous = anonymous
	}
	gw, err := gateway.New(opts)
	if err != nil {
		return err
	}
	handler, created, err := requireKeysOnceCreated(opts, gw.Handler(), stdio)
	if err != nil {
		return err
	}
	stopAdmin := serveKeyAdmin(ctx, data, keys, created, logger, stderr)
	defer stopAdmin()
	if stdio {
		err := gw.ServeStdio(ctx)
		wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stack.Wait(wait) // as below: what the last calls queued
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	banner(stdout, "http://"+ln.Addr().String(), data, haveKeys)
	srv := newServer(handler, localTimeouts(cat))
	whole := gateway.WholeAnswers(srv, ln)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(whole) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	stack.Wait(shutdown) // the health records of the last pipeline calls, the audit events of the last proxied calls
	return err
}

// closeStack closes the functions' connections (the connectors' upstream
// sessions, each ended gracefully), waiting 5 s at most: an upstream that
// does not answer its session's end does not hold the process.
func closeStack(stack *local.Stack, stderr io.Writer) {
	done := make(chan struct{})
	go func() {
		stack.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		fmt.Fprintln(stderr, "WARNING: some connector sessions did not close within 5 s; leaving them")
	}
}

// syncConnectors runs the connectors' scheduled sync every
// [config.EnvConnectorSyncInterval] (5 minutes unless set; 0 turns it off)
// until stop is called, as EventBridge Scheduler does on AWS.
func syncConnectors(ctx context.Context, deps lambdafn.Deps) (stop func(), err error) {
	every := 5 * time.Minute
	if raw, set := os.LookupEnv(config.EnvConnectorSyncInterval); set {
		if every, err = connectors.ParseDuration(config.EnvConnectorSyncInterval, raw, time.Second); err != nil {
			return nil, err
		}
	}
	if every == 0 {
		return func() {}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		connectorfn.SyncEvery(ctx, deps, every)
	}()
	return func() { cancel(); <-done }, nil
}

// requireKeysOnceCreated returns the HTTP handler of the local server. One
// that acts for tenant local while no key exists switches, when the first key
// is created through the admin socket, to requiring keys, as a restart would;
// created reports a key so created. Over stdio every request stays local.
func requireKeysOnceCreated(opts gateway.Options, h http.Handler, stdio bool) (handler http.Handler, created func(apikey.Key), err error) {
	if opts.Anonymous == nil || stdio {
		return h, nil, nil
	}
	opts.Anonymous = nil
	keyed, err := gateway.New(opts)
	if err != nil {
		return nil, nil, err
	}
	withKeys := keyed.Handler()
	var keysExist atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if keysExist.Load() {
			withKeys.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), func(apikey.Key) { keysExist.Store(true) }, nil
}

// serveKeyAdmin serves key management on the data folder's socket
// (package apikey/admin), for the apikey command, until ctx is done or the
// returned function is called. A folder where no socket can be made (a
// file system without them, a path too long for one) only loses that, with
// a WARNING.
func serveKeyAdmin(ctx context.Context, data string, keys *apikey.Keys, created func(apikey.Key), logger *slog.Logger, stderr io.Writer) (stop func()) {
	ln, err := admin.Listen(data)
	if err != nil {
		fmt.Fprintf(stderr, "WARNING: go run ./scripts/apikey cannot manage keys while this server runs: %v\n", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := admin.Serve(ctx, ln, keys, &admin.Options{Created: created, Logger: logger}); err != nil {
			logger.Error("serving key management stopped", "error", err)
		}
	}()
	return func() { cancel(); <-done }
}
