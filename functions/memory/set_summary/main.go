// Command set_summary is the Lambda function memory/set_summary; see [handlers.MemorySetSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemorySetSummary) }
