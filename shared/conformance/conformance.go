// Package conformance holds the fixtures that the MCP conformance suite
// (@modelcontextprotocol/conformance, server scenarios) expects a server to
// offer: test tools, resources and prompts with fixed names and answers. They
// exist only in the gateway built with the conformance tag, which adds them to
// the default catalog:
//
//	//go:build conformance
//	var extras = conformance.Extras() // functions/gateway/conformance.go
//
// The tools are ordinary catalog entries served by ordinary functions: each
// goes through [lambdafn.Tool] (envelope, schema validation, notifications)
// and the gateway's invoker, so the suite exercises the path real tools take.
// The resources are served by one resource function through
// [lambdafn.Resources]; the prompts are rendered by the gateway from the
// catalog, as every prompt is.
//
// The tools that ask the client for something (a form, a completion from its
// model, its roots) ask as every Switchboard tool does, through package
// elicit: an input request in their result, answered by the client's next
// call (protocol 2026-07-28). On older protocols they answer a tool error
// saying so: a stateless server cannot send the client a request and wait for
// the reply. scripts/conformance/baseline.yml lists the scenarios of those
// protocols that need such a request.
package conformance

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

// Family names the conformance fixtures in the catalog.
const Family = "conformance"

// limits are every fixture function's limits: small and quick.
var limits = catalog.Limits{Timeout: 10 * time.Second, MemoryMB: 128}

// Extras returns the conformance fixtures: catalog entries for the tools,
// resources and prompts the suite's server scenarios call, and the
// functions that serve them.
func Extras() launch.Extras {
	var tools []*catalog.Tool
	fns := []lambdafn.Function{resourceFunction}
	for _, f := range toolFixtures() {
		tools = append(tools, f.tool)
		fns = append(fns, lambdafn.Function{Path: f.tool.Function, Build: f.build})
	}
	return launch.Extras{
		Tools:     tools,
		Resources: resources(),
		Prompts:   prompts(),
		Functions: fns,
	}
}

// schemaFor infers the JSON Schema of T, as the catalog does for real tools,
// and lets patch adjust it.
func ptr[T any](v T) *T { return &v }
