// Command get_or_create is the Lambda function memory/get_or_create; see [memoryfn.GetOrCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetOrCreate, lambdafn.Openers{Credentials: tenantscoped.Open})
}
