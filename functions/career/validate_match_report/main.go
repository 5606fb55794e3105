// Command validate_match_report is the Lambda function career/validate_match_report; see [handlers.CareerValidateMatchReport].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerValidateMatchReport) }
