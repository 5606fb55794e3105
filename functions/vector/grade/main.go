// Command grade is the Lambda function vector/grade; see [ragfn.Grade].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.Grade, lambdafn.Openers{Providers: providers.Open, Credentials: tenantscoped.Open})
}
