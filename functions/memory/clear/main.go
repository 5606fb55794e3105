// Command clear is the Lambda function memory/clear; see [memoryfn.Clear].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.Clear, lambdafn.Openers{Credentials: tenantscoped.Open})
}
