// Command interaction_get is the Lambda function career/interaction_get; see [careerfn.InteractionGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.InteractionGet, lambdafn.Openers{Credentials: tenantscoped.Open})
}
