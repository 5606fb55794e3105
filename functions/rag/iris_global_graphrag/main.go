// Command iris_global_graphrag is the Lambda function rag/iris_global_graphrag; see [ragstorefn.GlobalGraph].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragstorefn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragstorefn.GlobalGraph, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, Credentials: tenantscoped.Open})
}
