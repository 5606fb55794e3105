// Command interaction_get is the Lambda function career/interaction_get; see [handlers.CareerInteractionGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerInteractionGet) }
