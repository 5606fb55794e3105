// Command get_summary is the Lambda function memory/get_summary; see [handlers.MemoryGetSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetSummary) }
