// Command basic_rerank is the Lambda function rag/basic_rerank; see [ragfn.BasicRerank].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.BasicRerank, lambdafn.Openers{Providers: providers.Open, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
