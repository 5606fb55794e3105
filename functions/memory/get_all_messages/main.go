// Command get_all_messages is the Lambda function memory/get_all_messages; see [handlers.MemoryGetAllMessages].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetAllMessages) }
