// Command match_opportunity is the Lambda function career/match_opportunity; see [careerfn.MatchOpportunity].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/providers"
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.MatchOpportunity, lambdafn.Openers{Providers: providers.Open, Credentials: tenantscoped.Open})
}
