// Command search_group is the Lambda function vector/search_group; see [handlers.VectorSearchGroup].
package main

import (
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/launch"
)

func main() { launch.Function(handlers.VectorSearchGroup) }
