// Command retriever is the Lambda function vector/retriever; see [vectorfn.Retriever].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/invoker"
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.Retriever, lambdafn.Openers{Blobs: blobs.Open, Providers: providers.Open, Invoker: invoker.Open, Credentials: tenantscoped.Open})
}
