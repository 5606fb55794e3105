// Command validate_match_report is the Lambda function career/validate_match_report; see [careerfn.ValidateMatchReport].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.ValidateMatchReport, lambdafn.Openers{Credentials: tenantscoped.Open})
}
