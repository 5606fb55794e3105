// Command opportunity_create is the Lambda function career/opportunity_create; see [handlers.CareerOpportunityCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerOpportunityCreate) }
