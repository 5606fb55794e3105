// Command crag is the Lambda function rag/crag; see [handlers.RAGCRAG].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.RAGCRAG) }
