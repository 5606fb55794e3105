// Command match_opportunity is the Lambda function career/match_opportunity; see [handlers.CareerMatchOpportunity].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerMatchOpportunity) }
