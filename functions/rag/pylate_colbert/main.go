// Command pylate_colbert is the Lambda function rag/pylate_colbert; see [ragfn.Colbert].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.Colbert, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, MultiVector: providers.OpenMultiVector, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
