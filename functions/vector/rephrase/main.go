// Command rephrase is the Lambda function vector/rephrase; see [ragfn.Rephrase].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/ragfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(ragfn.Rephrase, lambdafn.Openers{Providers: providers.Open, Credentials: tenantscoped.Open})
}
