// Command store_delete is the Lambda function vector/store_delete; see [vectorfn.StoreDelete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/blobs"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.StoreDelete, lambdafn.Openers{Blobs: blobs.Open, Credentials: tenantscoped.Open})
}
