// Command interaction_apply_event is the Lambda function career/interaction_apply_event; see [handlers.CareerInteractionApplyEvent].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerInteractionApplyEvent) }
