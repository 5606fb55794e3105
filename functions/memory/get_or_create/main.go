// Command get_or_create is the Lambda function memory/get_or_create; see [handlers.MemoryGetOrCreate].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetOrCreate) }
