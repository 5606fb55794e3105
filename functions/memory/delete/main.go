// Command delete is the Lambda function memory/delete; see [handlers.MemoryDelete].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryDelete) }
