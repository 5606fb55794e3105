// Command interaction_create is the Lambda function career/interaction_create; see [handlers.CareerInteractionCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.CareerInteractionCreate) }
