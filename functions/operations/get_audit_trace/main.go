// Command get_audit_trace is the Lambda function operations/get_audit_trace; see [handlers.GetAuditTrace].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.GetAuditTrace) }
