// Command get_all_messages is the Lambda function memory/get_all_messages; see [memoryfn.GetAllMessages].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetAllMessages, lambdafn.Openers{Credentials: tenantscoped.Open})
}
