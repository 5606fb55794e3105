// Command get_summary is the Lambda function memory/get_summary; see [memoryfn.GetSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetSummary, lambdafn.Openers{Credentials: tenantscoped.Open})
}
