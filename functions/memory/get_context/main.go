// Command get_context is the Lambda function memory/get_context; see [memoryfn.GetContext].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetContext, lambdafn.Openers{Credentials: tenantscoped.Open})
}
