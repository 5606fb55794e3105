// Command store_get is the Lambda function vector/store_get; see [handlers.VectorStoreGet].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorStoreGet) }
