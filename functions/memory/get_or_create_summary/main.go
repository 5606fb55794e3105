// Command get_or_create_summary is the Lambda function memory/get_or_create_summary; see [handlers.MemoryGetOrCreateSummary].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryGetOrCreateSummary) }
