// Command opportunity_get is the Lambda function career/opportunity_get; see [handlers.CareerOpportunityGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerOpportunityGet) }
