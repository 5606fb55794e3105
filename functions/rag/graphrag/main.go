// Command graphrag is the Lambda function rag/graphrag; see [ragfn.GraphRAG].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.GraphRAG, lambdafn.Openers{Providers: providers.Open, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
