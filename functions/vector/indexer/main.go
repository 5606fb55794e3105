// Command indexer is the Lambda function vector/indexer; see [vectorfn.Indexer].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.Indexer, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, Credentials: tenantscoped.Open})
}
