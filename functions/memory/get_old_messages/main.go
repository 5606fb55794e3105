// Command get_old_messages is the Lambda function memory/get_old_messages; see [memoryfn.GetOldMessages].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetOldMessages, lambdafn.Openers{Credentials: tenantscoped.Open})
}
