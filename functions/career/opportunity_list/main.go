// Command opportunity_list is the Lambda function career/opportunity_list; see [handlers.CareerOpportunityList].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerOpportunityList) }
