// Command opportunity_update is the Lambda function career/opportunity_update; see [handlers.CareerOpportunityUpdate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerOpportunityUpdate) }
