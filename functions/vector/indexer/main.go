// Command indexer is the Lambda function vector/indexer; see [handlers.VectorIndexer].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorIndexer) }
