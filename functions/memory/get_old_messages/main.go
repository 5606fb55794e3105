// Command get_old_messages is the Lambda function memory/get_old_messages; see [handlers.MemoryGetOldMessages].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetOldMessages) }
