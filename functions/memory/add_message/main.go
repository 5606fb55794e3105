// Command add_message is the Lambda function memory/add_message; see [memoryfn.AddMessage].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.AddMessage, lambdafn.Openers{Credentials: tenantscoped.Open})
}
