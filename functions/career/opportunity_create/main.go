// Command opportunity_create is the Lambda function career/opportunity_create; see [careerfn.OpportunityCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.OpportunityCreate, lambdafn.Openers{Credentials: tenantscoped.Open})
}
