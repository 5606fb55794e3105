// Command store_create is the Lambda function vector/store_create; see [vectorfn.StoreCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.StoreCreate, lambdafn.Openers{Credentials: tenantscoped.Open})
}
