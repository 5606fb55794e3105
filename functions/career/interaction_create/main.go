// Command interaction_create is the Lambda function career/interaction_create; see [careerfn.InteractionCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/config/tenantscoped"
	"github.com/switchboard-dev/switchboard/shared/handlers/careerfn"
	"github.com/switchboard-dev/switchboard/shared/lambdafn"
)

func main() {
	lambdafn.Start(careerfn.InteractionCreate, lambdafn.Openers{Credentials: tenantscoped.Open})
}
