// Command storage is the Lambda function vector/storage; see [handlers.VectorStorage].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorStorage) }
