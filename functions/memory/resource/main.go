// Command resource is the Lambda function memory/resource; see [handlers.MemoryResource].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.MemoryResource) }
