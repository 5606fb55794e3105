// Command get_context is the Lambda function memory/get_context; see [handlers.MemoryGetContext].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetContext) }
