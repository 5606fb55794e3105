// Package connectorfn binds the connectors family's functions to package
// connector: one [lambdafn.Function] per function, which its main starts
// (functions/connectors/<name>/main.go) and package handlers lists.
package connectorfn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/netguard"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// service builds the connector service of a function from its Deps: the
// table, the credentials' sealer and the outbound guard that
// config/connectors opened, and the queue that appends proxied calls' audit
// events after their answers (the proxy function's).
func service(d lambdafn.Deps) *connector.Service {
	return connector.New(d.Table, d.Sealer, &connector.Options{CheckURL: d.CheckURL, HTTPClient: d.HTTPClient,
		CacheTTL: d.ConnectorCacheTTL, Logger: d.Logger, Metrics: d.Metrics, After: d.Later, OwnTools: ownTools, Index: d.OwnTable})
}

// connecting is [service] for a function whose calls make upstream
// sessions (verify, sync, the proxy's calls and the scheduled sync): it
// starts loading the roots of their TLS handshakes, so that on a cold start
// the load runs beside the rest of the function's start rather than on its
// first call. connector_tools_openai, which connects only to refresh a
// stale cache, does not.
func connecting(d lambdafn.Deps) *connector.Service {
	netguard.PreloadRoots()
	return service(d)
}

// ownTools returns the catalog's public tools in OpenAI's function format,
// for connector_tools_openai's include_switchboard (seed 001's context
// builder listed its own tools beside the upstreams').
var ownTools = sync.OnceValue(func() []connector.OpenAITool {
	var out []connector.OpenAITool
	for _, t := range catalog.Default().Tools() {
		if t.Visibility == catalog.Public {
			out = append(out, connector.OpenAITool{Type: "function",
				Function: connector.OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
		}
	}
	return out
})

// The functions of the connectors family, one per tool.
var (
	Create      = lambdafn.Method("connector_create", service, (*connector.Service).Create)
	Get         = lambdafn.Method("connector_get", service, (*connector.Service).Get)
	List        = lambdafn.Method("connector_list", service, (*connector.Service).List)
	Update      = lambdafn.Method("connector_update", service, (*connector.Service).Update)
	Delete      = lambdafn.Method("connector_delete", service, (*connector.Service).Delete)
	Verify      = lambdafn.Method("connector_verify", connecting, (*connector.Service).Verify)
	Sync        = lambdafn.Method("connector_sync", connecting, (*connector.Service).Sync)
	PolicySet   = lambdafn.Method("approval_policy_set", service, (*connector.Service).PolicySet)
	PolicyList  = lambdafn.Method("approval_policy_list", service, (*connector.Service).PolicyList)
	ToolsOpenAI = lambdafn.Method("connector_tools_openai", service, (*connector.Service).ToolsOpenAI)
)

// Proxy is the function through which the gateway proxies connectors: the
// internal tools of catalog.ConnectorProxyFunction over one service, whose
// pooled upstream sessions its calls, resource reads and prompts share, and
// which its Close ends; and connector_health, whose figures are that
// service's. It appends each proxied call's audit event after
// the call's answer (Later), within the invocation.
var Proxy = later(lambdafn.Methods(connecting,
	lambdafn.Bind(catalog.ConnectorCallTool, call),
	lambdafn.Bind(catalog.ConnectorListingTool, (*connector.Service).ListProxied),
	lambdafn.Bind(catalog.ConnectorResourceTool, (*connector.Service).ReadResource),
	lambdafn.Bind(catalog.ConnectorPromptTool, (*connector.Service).GetPrompt),
	lambdafn.Bind(catalog.ApprovalGetTool, (*connector.Service).ApprovalGet),
	lambdafn.Bind(catalog.ApprovalApproveTool, (*connector.Service).Approve),
	lambdafn.Bind(catalog.ApprovalDenyTool, (*connector.Service).Deny),
	lambdafn.Bind("connector_health", (*connector.Service).Health),
))

// later marks f as doing work after its answers (lambdafn.Function.Later).
func later(f lambdafn.Function) lambdafn.Function {
	f.Later = true
	return f
}

// call serves connector_call: the upstream's progress, when the host asked
// for it, becomes the function's progress notifications, which the gateway
// relays with the host's token.
func call(s *connector.Service, ctx context.Context, c tenant.Caller, in connector.CallInput) (*mcp.CallToolResult, error) {
	if in.WantsProgress {
		in.Progress = func(p *mcp.ProgressNotificationParams) { lambdafn.ReportProgress(ctx, p.Progress, p.Total, p.Message) }
	}
	return s.Call(ctx, c, in)
}

// ScheduledSync is the connectors/scheduled_sync function. It is not a
// tool: EventBridge Scheduler invokes it every 5 minutes (the catalog's
// trigger), and it syncs every tenant's connectors whose cache would be
// older than the TTL by its next run ([connector.Service.SyncDue]),
// whatever the event holds. It fails, which the schedule does not retry
// (the next run comes soon), only when the sync index cannot be read.
var ScheduledSync = lambdafn.Function{Path: scheduledSyncPath, Build: func(d lambdafn.Deps) lambda.Handler {
	svc, log := connecting(d), sweepLogger(d)
	return closing{lambda.NewHandler(func(ctx context.Context) (connector.SyncDueOutput, error) {
		return syncDue(ctx, svc, log, catalog.ConnectorSyncPeriod)
	}), svc}
}}

// closing is a handler whose Close closes its service's upstream sessions
// (lambdafn.Start calls it on Lambda's SIGTERM).
type closing struct {
	lambda.Handler
	svc *connector.Service
}

func (c closing) Close() error { return c.svc.Close() }

const scheduledSyncPath = "connectors/scheduled_sync"

// SyncEvery runs the scheduled sync every period until ctx is done, each
// run within the function's catalog timeout: the local server's schedule.
// It closes its upstream sessions before returning.
func SyncEvery(ctx context.Context, d lambdafn.Deps, period time.Duration) {
	svc, log := connecting(d), sweepLogger(d)
	defer svc.Close()
	timeout := catalog.Default().Timeout(scheduledSyncPath)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			run, cancel := context.WithTimeout(ctx, timeout)
			syncDue(run, svc, log, period)
			cancel()
		}
	}
}

func sweepLogger(d lambdafn.Deps) *slog.Logger {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("function", scheduledSyncPath)
}

// syncDue runs one scheduled sync of a schedule whose period is every and
// logs what it did.
func syncDue(ctx context.Context, svc *connector.Service, log *slog.Logger, every time.Duration) (connector.SyncDueOutput, error) {
	out, err := svc.SyncDue(ctx, every)
	level := slog.LevelInfo
	if err != nil || out.Failed > 0 {
		level = slog.LevelWarn
	}
	log.Log(ctx, level, "scheduled sync", "synced", out.Synced, "failed", out.Failed, "skipped", out.Skipped, "more", out.More, "approvals_expired", out.Expired, "error", err)
	return out, err
}

// Functions returns every function of the connectors family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Create, Get, List, Update, Delete, Verify, Sync, PolicySet, PolicyList, ToolsOpenAI, Proxy, ScheduledSync}
}
