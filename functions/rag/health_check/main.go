// Command health_check is the Lambda function rag/health_check; see [ragfn.HealthCheck].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.HealthCheck, lambdafn.Openers{Credentials: tenantscoped.Open})
}
