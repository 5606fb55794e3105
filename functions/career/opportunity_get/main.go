// Command opportunity_get is the Lambda function career/opportunity_get; see [careerfn.OpportunityGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.OpportunityGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}
