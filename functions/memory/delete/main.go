// Command delete is the Lambda function memory/delete; see [memoryfn.Delete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.Delete, lambdafn.Openers{Credentials: tenantscoped.Open})
}
