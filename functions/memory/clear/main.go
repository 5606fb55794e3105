// Command clear is the Lambda function memory/clear; see [handlers.MemoryClear].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryClear) }
