// Package handlers lists every function of the default catalog, bound to the
// code that serves it: the one list a reader opens to find every function,
// which the local server, the tests and the benchmarks run in one process
// (package local). Each family's bindings are a subpackage (memoryfn,
// operationsfn, vectorfn, ragfn, ragstorefn, careerfn, connectorfn, assistantfn, websearchfn, chatfn), which a function's main imports
// alone, so that its binary links only its own family's code:
//
//	func main() { lambdafn.Start(memoryfn.AddMessage, lambdafn.Openers{}) } // functions/memory/add_message/main.go
package handlers

import (
	"slices"

	"github.com/switchboard-dev/switchboard/shared/handlers/assistantfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/chatfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/connectorfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/operationsfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragstorefn"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/handlers/websearchfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

// All returns every function of the default catalog, family by family.
func All() []lambdafn.Function {
	return slices.Concat(memoryfn.Functions(), operationsfn.Functions(), vectorfn.Functions(), ragfn.Functions(), ragstorefn.Functions(), careerfn.Functions(), connectorfn.Functions(), assistantfn.Functions(), websearchfn.Functions(), chatfn.Functions())
}
