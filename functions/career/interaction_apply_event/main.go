// Command interaction_apply_event is the Lambda function career/interaction_apply_event; see [careerfn.InteractionApplyEvent].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.InteractionApplyEvent, lambdafn.Openers{Credentials: tenantscoped.Open})
}
