// Package operationsfn binds the operations family's functions to the
// packages that serve them: one [lambdafn.Function] per function, which its
// main starts (functions/operations/<name>/main.go) and package handlers
// lists.
package operationsfn

import (
	"github.com/switchboard-dev/switchboard/shared/audit"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

// GetAuditTrace serves get_audit_trace.
var GetAuditTrace = lambdafn.Method("get_audit_trace", func(d lambdafn.Deps) *audit.Log { return audit.New(d.Table, nil) }, (*audit.Log).GetTrace)

// Functions returns every function of the operations family.
func Functions() []lambdafn.Function { return []lambdafn.Function{GetAuditTrace} }
