// Command pylate_colbert is the Lambda function rag/pylate_colbert; see [ragstorefn.Colbert].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/stepfunctions"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragstorefn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragstorefn.Colbert, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, MultiVector: providers.OpenMultiVector, Pipeline: stepfunctions.Open, Credentials: tenantscoped.Open})
}
