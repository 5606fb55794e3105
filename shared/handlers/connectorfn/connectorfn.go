// Package connectorfn binds the connectors family's functions to package
// connector: one [lambdafn.Function] per function, which its main starts
// (functions/connectors/<name>/main.go) and package handlers lists.
package connectorfn

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// service builds the connector service of a function from its Deps: the
// table, the credentials' sealer and the outbound guard that
// config/connectors opened.
func service(d lambdafn.Deps) *connector.Service {
	return connector.New(d.Table, d.Sealer, &connector.Options{CheckURL: d.CheckURL, HTTPClient: d.HTTPClient, Logger: d.Logger})
}

// The functions of the connectors family, one per tool.
var (
	Create      = lambdafn.Method("connector_create", service, (*connector.Service).Create)
	Get         = lambdafn.Method("connector_get", service, (*connector.Service).Get)
	List        = lambdafn.Method("connector_list", service, (*connector.Service).List)
	Update      = lambdafn.Method("connector_update", service, (*connector.Service).Update)
	Delete      = lambdafn.Method("connector_delete", service, (*connector.Service).Delete)
	Verify      = lambdafn.Method("connector_verify", service, (*connector.Service).Verify)
	Sync        = lambdafn.Method("connector_sync", service, (*connector.Service).Sync)
	PolicySet   = lambdafn.Method("approval_policy_set", service, (*connector.Service).PolicySet)
	PolicyList  = lambdafn.Method("approval_policy_list", service, (*connector.Service).PolicyList)
	ToolsOpenAI = lambdafn.Method("connector_tools_openai", service, (*connector.Service).ToolsOpenAI)
	Health      = lambdafn.Method("connector_health", service, (*connector.Service).Health)
)

// Proxy is the function through which the gateway proxies connectors: the
// internal tools of catalog.ConnectorProxyFunction over one service, whose
// pooled upstream sessions its calls, resource reads and prompts share, and
// which its Close ends.
var Proxy = lambdafn.Methods(service,
	lambdafn.Bind(catalog.ConnectorCallTool, call),
	lambdafn.Bind(catalog.ConnectorListingTool, (*connector.Service).ListProxied),
	lambdafn.Bind(catalog.ConnectorResourceTool, (*connector.Service).ReadResource),
	lambdafn.Bind(catalog.ConnectorPromptTool, (*connector.Service).GetPrompt),
	lambdafn.Bind(catalog.ApprovalGetTool, (*connector.Service).ApprovalGet),
	lambdafn.Bind(catalog.ApprovalApproveTool, (*connector.Service).Approve),
	lambdafn.Bind(catalog.ApprovalDenyTool, (*connector.Service).Deny),
)

// call serves connector_call: the upstream's progress, when the host asked
// for it, becomes the function's progress notifications, which the gateway
// relays with the host's token.
func call(s *connector.Service, ctx context.Context, c tenant.Caller, in connector.CallInput) (*mcp.CallToolResult, error) {
	if in.WantsProgress {
		in.Progress = func(p *mcp.ProgressNotificationParams) { lambdafn.ReportProgress(ctx, p.Progress, p.Total, p.Message) }
	}
	return s.Call(ctx, c, in)
}

// Functions returns every function of the connectors family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Create, Get, List, Update, Delete, Verify, Sync, PolicySet, PolicyList, ToolsOpenAI, Health, Proxy}
}
