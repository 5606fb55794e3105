// Command crag is the Lambda function rag/crag; see [ragfn.CRAG].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.CRAG, lambdafn.Openers{Providers: providers.Open, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
