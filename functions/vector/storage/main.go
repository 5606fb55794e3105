// Command storage is the Lambda function vector/storage; see [vectorfn.Storage].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/vectorfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(vectorfn.Storage, lambdafn.Openers{Credentials: tenantscoped.Open})
}
