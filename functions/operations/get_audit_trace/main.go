// Command get_audit_trace is the Lambda function operations/get_audit_trace; see [operationsfn.GetAuditTrace].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/operationsfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(operationsfn.GetAuditTrace, lambdafn.Openers{Credentials: tenantscoped.Open})
}
