// Command set_summary is the Lambda function memory/set_summary; see [memoryfn.SetSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.SetSummary, lambdafn.Openers{Credentials: tenantscoped.Open})
}
