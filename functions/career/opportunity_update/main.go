// Command opportunity_update is the Lambda function career/opportunity_update; see [careerfn.OpportunityUpdate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.OpportunityUpdate, lambdafn.Openers{Credentials: tenantscoped.Open})
}
