// Command get_or_create_summary is the Lambda function memory/get_or_create_summary; see [memoryfn.GetOrCreateSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/memoryfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(memoryfn.GetOrCreateSummary, lambdafn.Openers{Credentials: tenantscoped.Open})
}
