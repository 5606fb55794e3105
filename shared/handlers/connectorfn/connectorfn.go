// Package connectorfn binds the connectors family's functions to package
// connector: one [lambdafn.Function] per function, which its main starts
// (functions/connectors/<name>/main.go) and package handlers lists.
package connectorfn

import (
	"github.com/switchboard-dev/switchboard/shared/connector"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

// service builds the connector service of a function from its Deps: the
// table, the credentials' sealer and the outbound guard that
// config/connectors opened.
func service(d lambdafn.Deps) *connector.Service {
	return connector.New(d.Table, d.Sealer, &connector.Options{CheckURL: d.CheckURL, HTTPClient: d.HTTPClient, Logger: d.Logger, Metrics: d.Metrics})
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

// Functions returns every function of the connectors family.
func Functions() []lambdafn.Function {
	return []lambdafn.Function{Create, Get, List, Update, Delete, Verify, Sync, PolicySet, PolicyList, ToolsOpenAI, Health}
}
