// Command opportunity_list is the Lambda function career/opportunity_list; see [careerfn.OpportunityList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.OpportunityList, lambdafn.Openers{Credentials: tenantscoped.Open})
}
