// Command store_get is the Lambda function vector/store_get; see [vectorfn.StoreGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.StoreGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}
