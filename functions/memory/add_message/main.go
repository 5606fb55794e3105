// Command add_message is the Lambda function memory/add_message; see [handlers.MemoryAddMessage].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryAddMessage) }
