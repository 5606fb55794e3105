// Command store_list is the Lambda function vector/store_list; see [vectorfn.StoreList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.StoreList, lambdafn.Openers{Credentials: tenantscoped.Open})
}
