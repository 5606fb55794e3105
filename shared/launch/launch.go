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
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/shared/apikey"
	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/gateway"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/launch/lambdagateway"
	"github.com/switchboard-dev/switchboard/shared/local"
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
	deps, closeFn, err := lambdafn.Open(ctx, &cfg, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open}, stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	fmt.Fprintln(stderr, lambdafn.OfflineSummariesWarning)
	deps.Logger = logger
	cat, err := extras.catalog()
	if err != nil {
		return err
	}
	// Every function in this process, the pipeline's steps and the
	// retriever's search workers invoked through the same stack.
	stack, err := local.New(local.Options{Catalog: cat, Deps: deps, Functions: append(handlers.All(), extras.Functions...)})
	if err != nil {
		return err
	}
	keys := apikey.New(deps.Table, nil)
	opts := gateway.Options{
		Catalog:           cat,
		Invoker:           stack,
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
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
