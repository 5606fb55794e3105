package lambdafn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/coldstart"
	"github.com/switchboard-dev/switchboard/shared/config"
	"github.com/switchboard-dev/switchboard/shared/invoke"
	"github.com/switchboard-dev/switchboard/shared/later"
	"github.com/switchboard-dev/switchboard/shared/metrics"
	"github.com/switchboard-dev/switchboard/shared/pipeline"
	"github.com/switchboard-dev/switchboard/shared/provider"
	"github.com/switchboard-dev/switchboard/shared/provider/multivector"
	"github.com/switchboard-dev/switchboard/shared/provider/offline"
	"github.com/switchboard-dev/switchboard/shared/quota"
	"github.com/switchboard-dev/switchboard/shared/ratelimit"
	"github.com/switchboard-dev/switchboard/shared/shutdown"
	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// A Function is one deployable function: its path under functions/ and how
// its Lambda handler is built from its dependencies. Package handlers lists
// every function of the catalog; each function's main starts one ([Start]);
// package local runs them all in one process.
type Function struct {
	// Path is the function's path under functions/, as the catalog names it.
	Path  string
	Build func(Deps) lambda.Handler
	// Later says the function does work after its answer (Deps.Later):
	// [Start] then registers an internal extension that keeps the
	// environment from freezing until that work is done.
	Later bool
}

// ToolFunction returns the function that serves the default catalog's tool
// named name, its handler built by build from the tool's entry: the catalog
// says which function that is. It panics if the catalog has no such tool
// (the bindings are fixed, and a test builds every one).
func ToolFunction(name string, build func(t *catalog.Tool, d Deps) lambda.Handler) Function {
	t, ok := catalog.Default().Tool(name)
	if !ok {
		panic("lambdafn: no tool " + name + " in the catalog")
	}
	return Function{Path: t.Function, Build: func(d Deps) lambda.Handler { return build(t, d) }}
}

// Method returns the function that serves the default catalog's tool named
// name with method of the service that newService builds from the
// function's Deps: lambdafn.Method("memory_add_message", service,
// (*memory.Service).AddMessage): a [Methods] function of one tool, so that
// a service with a Close method is closed with it. It panics as
// [ToolFunction] does.
func Method[S, In, Out any](name string, newService func(Deps) S, method func(S, context.Context, tenant.Caller, In) (Out, error)) Function {
	return Methods(newService, Bind(name, method))
}

// Openers open what a function needs beyond the table. Each is the Open of a
// package under config/ (config/blobs, config/providers,
// config/stepfunctions, config/invoker), passed by the function's main, so
// that its binary links only the clients the function uses: every linked
// client costs its initialisation at each cold start. A nil opener leaves
// its dependency nil.
type Openers struct {
	Blobs     func(ctx context.Context, c *config.Config) (store.Blobs, error)
	Providers func(ctx context.Context, c *config.Config, warn io.Writer) (provider.Embedder, provider.Generator, error)
	Pipeline  func(ctx context.Context, c *config.Config) (pipeline.Runner, error)
	Invoker   func(ctx context.Context, c *config.Config) (invoke.Invoker, error)
	// MultiVector opens late interaction's multi-vector embedder
	// (config/providers' OpenMultiVector; [Deps.MultiVector]).
	MultiVector func(ctx context.Context, c *config.Config, warn io.Writer) (multivector.Embedder, error)
	// Credentials, if set, returns the credentials the function's table and
	// bucket are reached with (config/tenantscoped: each call's tenant's,
	// when a tenant role is configured), or nil for the process's own.
	Credentials func(ctx context.Context, c *config.Config, f catalog.Function) (aws.CredentialsProvider, error)
	// Connectors opens what reaching tenants' upstream servers takes: the
	// credentials' sealer and the outbound guard ([Deps.Sealer],
	// [Deps.CheckURL], [Deps.HTTPClient]).
	Connectors func(ctx context.Context, c *config.Config, d *Deps) error
	// WebSearch opens the web search backends ([Deps.WebSearch];
	// config/search).
	WebSearch func(ctx context.Context, c *config.Config, d *Deps) error
}

// check returns an error naming each opener f's catalog entry needs and o
// lacks: blobs for blob access, providers to embed or generate, the
// pipeline's runner to run it, an invoker to invoke other functions.
func (o Openers) check(f catalog.Function) error {
	var errs []error
	for _, need := range []struct {
		needed, given bool
		what          string
	}{
		{f.Blobs != catalog.NoAccess, o.Blobs != nil, "blob access, but no Blobs opener (config/blobs)"},
		{f.Embeds || f.Generates, o.Providers != nil, "embeds or generates, but no Providers opener (config/providers)"},
		{f.Pipeline, o.Pipeline != nil, "runs the pipeline, but no Pipeline opener (config/stepfunctions)"},
		{len(f.Invokes) > 0, o.Invoker != nil, "invokes functions, but no Invoker opener (config/invoker)"},
		{f.Connects, o.Connectors != nil, "reaches upstream servers, but no Connectors opener (config/connectors)"},
		{f.Searches, o.WebSearch != nil, "searches the web, but no WebSearch opener (config/search)"},
		{f.MultiVector, o.MultiVector != nil, "embeds token vectors, but no MultiVector opener (config/providers)"},
	} {
		if need.needed && !need.given {
			errs = append(errs, fmt.Errorf("function %s: its catalog entry has %s", f.Path, need.what))
		}
	}
	return errors.Join(errs...)
}

// Open validates c and opens the table and what o opens, as [Deps], with
// the deployment's storage quotas ([config.EnvQuotas]). The
// returned function closes what needs closing. Offline and ephemeral choices
// are announced on warn.
func Open(ctx context.Context, c *config.Config, o Openers, warn io.Writer) (Deps, func() error, error) {
	if err := c.Validate(); err != nil {
		return Deps{}, nil, err
	}
	var quotas *quota.Limits
	if c.Quotas != "" {
		l, err := quota.ParseLimits(c.Quotas, quota.DefaultLimits)
		if err != nil {
			return Deps{}, nil, fmt.Errorf("%s: %w", config.EnvQuotas, err)
		}
		quotas = &l
	}
	table, closeFn, err := c.OpenTable(ctx, warn)
	if err != nil {
		return Deps{}, nil, err
	}
	d := Deps{Table: table, Quotas: quotas}
	if d.OwnTable, err = c.OpenOwnTable(ctx); err != nil {
		closeFn()
		return Deps{}, nil, err
	}
	limits, limited, err := ratelimit.Configured(c.RateLimits, catalog.Default())
	if err != nil {
		closeFn()
		return Deps{}, nil, fmt.Errorf("%s: %w", config.EnvRateLimits, err)
	}
	if limited {
		// The counters and the operators' overrides, as the gateway keeps
		// them: with the function's own role where Table signs as each tenant.
		d.Limiter = ratelimit.New(cmp.Or(d.OwnTable, d.Table), &ratelimit.Options{Defaults: &limits})
	}
	if err := o.open(ctx, c, &d, warn); err != nil {
		closeFn()
		return Deps{}, nil, err
	}
	return d, closeFn, nil
}

func (o Openers) open(ctx context.Context, c *config.Config, d *Deps, warn io.Writer) (err error) {
	if o.Blobs != nil {
		if d.Blobs, err = o.Blobs(ctx, c); err != nil {
			return err
		}
	}
	if o.Providers != nil {
		if d.Embedder, d.Generator, err = o.Providers(ctx, c, warn); err != nil {
			return err
		}
	}
	if o.MultiVector != nil {
		if d.MultiVector, err = o.MultiVector(ctx, c, warn); err != nil {
			return err
		}
	}
	if o.Pipeline != nil {
		if d.Pipeline, err = o.Pipeline(ctx, c); err != nil {
			return err
		}
	}
	if o.Invoker != nil {
		if d.Invoker, err = o.Invoker(ctx, c); err != nil {
			return err
		}
	}
	if o.Connectors != nil {
		if err := o.Connectors(ctx, c, d); err != nil {
			return err
		}
	}
	if o.WebSearch != nil {
		return o.WebSearch(ctx, c, d)
	}
	return nil
}

// Start runs f as a Lambda function and never returns: it reads the
// configuration from the environment, opens f's dependencies at cold start
// with o, which must open everything f's catalog entry says it uses, and
// serves invocations until Lambda shuts it down. Garbage collection waits
// until the first answer (package coldstart). A wrong configuration ends the
// process with the error on stderr.
func Start(f Function, o Openers) { StartIn(catalog.Default(), f, o) }

// StartIn is [Start] for f, a function of cat: the conformance fixtures'
// functions (scripts/stack --conformance) are not in the default catalog.
func StartIn(cat *catalog.Catalog, f Function, o Openers) {
	cfg := config.FromEnv(os.Getenv)
	resume := coldstart.PauseGC(cfg.MemoryMB)
	logger := lambdacontext.NewLogger()
	slog.SetDefault(logger)
	// The extension that gets the process Lambda's SIGTERM has been
	// registering since the process started (package shutdown). A function
	// that works after its answers also registers, while it opens its
	// dependencies, the one that holds its environment for that work.
	var queue *later.Queue
	held := make(chan error, 1)
	if f.Later {
		queue = later.New()
		go func() { held <- queue.Hold(os.Getenv("AWS_LAMBDA_RUNTIME_API")) }()
	} else {
		held <- nil
	}
	d, closeFn, err := start(context.Background(), cat, f, o, &cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard: configuration:", err)
		os.Exit(1)
	}
	d.Logger, d.Metrics, d.Later = logger, metrics.New(os.Stdout), queue
	h := f.Build(d)
	if err := cmp.Or(<-held, shutdown.Wait()); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
	// On SIGTERM (Lambda's shutdown), a handler that holds connections
	// closes them first: the connectors' upstream sessions.
	closeAll := func() { closeFn() }
	if c, ok := h.(interface{ Close() error }); ok {
		closeAll = func() { c.Close(); closeFn() }
	}
	if d.Later != nil {
		h = d.Later.Handler(h)
	}
	var handler any = coldstart.ResumeAfterFirst(h, resume)
	if fn, _ := cat.Function(f.Path); fn.Progress {
		handler = streamed{handler.(lambda.Handler)}.Serve // answers as a response stream when asked
	}
	onSIGTERM(closeAll)
	lambda.Start(handler)
}

// onSIGTERM runs closeAll on SIGTERM. Lambda sends SIGTERM before it ends an
// environment only if an extension is registered: package shutdown
// registered one as the process started (rather than
// lambda.WithEnableSIGTERM's round trip before the first event).
func onSIGTERM(closeAll func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)
	go func() {
		<-signals
		closeAll()
	}()
}

// start opens the dependencies of f, a function of cat, as [Start] does.
func start(ctx context.Context, cat *catalog.Catalog, f Function, o Openers, c *config.Config, warn io.Writer) (Deps, func() error, error) {
	fn, ok := cat.Function(f.Path)
	if !ok {
		return Deps{}, nil, fmt.Errorf("function %s is not in the catalog", f.Path)
	}
	if err := o.check(fn); err != nil {
		return Deps{}, nil, err
	}
	if o.Credentials != nil {
		p, err := o.Credentials(ctx, c, fn)
		if err != nil {
			return Deps{}, nil, err
		}
		if p != nil {
			c.ScopeStorage(p)
		}
	}
	d, closeFn, err := Open(ctx, c, o, warn)
	if err != nil {
		return Deps{}, nil, err
	}
	d = ForFunction(d, fn)
	if fn.Family == catalog.MemoryFamily {
		fmt.Fprintln(warn, OfflineSummariesWarning)
	}
	return d, closeFn, nil
}

// OfflineSummariesWarning announces that the memory functions summarise
// with the offline extractive summariser, the only summariser there is.
var OfflineSummariesWarning = fmt.Sprintf("WARNING: summaries come from the offline extractive summariser (provider %q, model %q): no language model is configured", offline.Name, offline.Model)
