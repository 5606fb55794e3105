// Package launch starts Switchboard's processes: a tool function inside
// Lambda ([Function]), and the gateway ([Gateway]), which runs either inside
// Lambda behind API Gateway (package launch/lambdagateway) or, on a laptop, as
// one process serving every function with embedded storage. Each main under
// functions/ is one call here; the deployed gateway, built with -tags
// lambda.norpc, calls launch/lambdagateway alone, so as not to link every
// function's code.
package launch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/open"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/launch/lambdagateway"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Function runs the tool function build makes as a Lambda: it reads the
// configuration from the environment, opens the stores at cold start, and
// serves invocations until Lambda shuts it down.
func Function(build handlers.Constructor) {
	logger := lambdacontext.NewLogger()
	slog.SetDefault(logger)
	cfg := config.FromEnv(os.Getenv)
	deps, closeFn, err := open.Deps(context.Background(), &cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard: configuration:", err)
		os.Exit(1)
	}
	deps.Logger, deps.Metrics = logger, true
	lambda.StartWithOptions(build(deps), lambda.WithEnableSIGTERM(func() { closeFn() }))
}

// Extras are catalog entries and functions added to the default ones, as the
// conformance build of the gateway adds its fixtures.
type Extras struct {
	Tools     []*catalog.Tool
	Resources []*catalog.Resource
	Prompts   []*catalog.Prompt
	Functions map[string]handlers.Constructor
}

func (x Extras) catalog() (*catalog.Catalog, error) {
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
		cat, err := extras.catalog()
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
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./functions/gateway [--addr HOST:PORT] [--data DIR] [--stdio]\n\nServes Switchboard locally with embedded storage and offline providers.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localGateway(ctx, *addr, *data, *stdio, extras, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		return 1
	}
	return 0
}

// localGateway serves everything in one process until ctx is done.
func localGateway(ctx context.Context, addr, data string, stdio bool, extras Extras, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := config.Local(data)
	deps, closeFn, err := open.Deps(ctx, &cfg, stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	deps.Logger = logger
	cat, err := extras.catalog()
	if err != nil {
		return err
	}
	constructors := handlers.All()
	maps.Copy(constructors, extras.Functions)
	// The pipeline's steps and the retriever's search workers are functions
	// too: the Local runner and the retriever invoke them through the invoker
	// built from the handlers they are themselves dependencies of.
	functions := &lateInvoker{}
	if deps.Pipeline == nil {
		if deps.Pipeline, err = pipeline.NewLocal(functions); err != nil {
			return err
		}
	}
	deps.Invoker = functions
	functions.Invoker = invoke.NewLocal(handlers.Build(constructors, deps), cat.Timeout)
	keys := apikey.New(deps.Table, nil)
	opts := gateway.Options{
		Catalog:           cat,
		Invoker:           functions.Invoker,
		Keys:              keys,
		AllowLocalOrigins: true,
		Logger:            logger,
	}
	haveKeys, err := keys.Any(ctx)
	if err != nil {
		return err
	}
	local := &tenant.Caller{Tenant: tenant.Local, Principal: "local"}
	switch {
	case stdio:
		fmt.Fprintf(stderr, "WARNING: stdio has no authentication: every request acts for tenant %q\n", tenant.Local)
		opts.Anonymous = local
	case !haveKeys:
		fmt.Fprintf(stderr, "WARNING: no API key is configured: every request acts for tenant %q (create one with: go run ./scripts/apikey create --data %s --tenant NAME --principal WHO)\n", tenant.Local, data)
		opts.Anonymous = local
	}
	gw, err := gateway.New(opts)
	if err != nil {
		return err
	}
	if stdio {
		return gw.ServeStdio(ctx)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	header := ""
	if haveKeys {
		header = ` --header "Authorization: Bearer $SWITCHBOARD_KEY"`
	}
	fmt.Fprintf(stdout, `Switchboard is serving MCP at %s
  data:        %s (embedded table and blobs; offline summariser)
  Claude Code: claude mcp add --transport http switchboard %s%s
  Inspector:   npx @modelcontextprotocol/inspector --cli %s --transport http --method tools/list%s
               or the Inspector UI (npx @modelcontextprotocol/inspector): transport Streamable HTTP, URL %s
  stdio:       go run ./functions/gateway --stdio   (for desktop hosts that launch a command)
Press Ctrl-C to stop.
`, url, data, url, header, url, header, url)
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: readTimeout,
		WriteTimeout: longestCall(cat) + writeMargin, IdleTimeout: idleTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// Timeouts of the local HTTP server, so that slow or idle clients cannot
// hold connections (and their buffers) forever: a request must arrive
// within readTimeout, a keep-alive connection may idle for idleTimeout, and
// a response may take as long as the longest function runs, plus
// writeMargin to write it.
const (
	readTimeout = 30 * time.Second
	idleTimeout = 2 * time.Minute
	writeMargin = 30 * time.Second
)

// longestCall returns the longest timeout of cat's functions.
func longestCall(cat *catalog.Catalog) time.Duration {
	var d time.Duration
	for _, f := range cat.Functions() {
		d = max(d, f.Limits.Timeout)
	}
	return d
}

// lateInvoker is an [invoke.Invoker] set after it is handed out: the local
// pipeline runner and the retriever need the invoker of the handlers that
// are built with them.
type lateInvoker struct{ invoke.Invoker }
