// Command resource is the Lambda function memory/resource; see [memoryfn.Resource].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.Resource, lambdafn.Openers{Credentials: tenantscoped.Open})
}
