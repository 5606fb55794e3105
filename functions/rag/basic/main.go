// Command basic is the Lambda function rag/basic; see [ragfn.Basic].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.Basic, lambdafn.Openers{Providers: providers.Open, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
